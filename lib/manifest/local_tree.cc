// Implements ScanFolder (a walk by descriptors, then the files hashed on a
// few threads) and the writers, each opening the parent folder name by name.

#include "lib/manifest/local_tree.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/dir_walk.h"
#include "lib/base/parallel_for.h"
#include "lib/base/status_macros.h"
#include "lib/tree/file_digest.h"

namespace verity {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

// A folder's walk: the entries so far, which of them are files, and those
// files' lstat(2).
struct Walk {
  std::vector<TreeEntry> entries;
  std::vector<size_t> files;
  std::vector<struct stat> file_stats;
};

absl::StatusOr<std::string> ReadLinkAt(int dir_fd, const std::string& name,
                                       const std::string& path) {
  std::string target(kMaxTreePathBytes + 1, '\0');
  const ssize_t n =
      readlinkat(dir_fd, name.c_str(), target.data(), target.size());
  if (n < 0) return ErrnoStatus(errno, "readlink", path);
  if (static_cast<size_t>(n) > kMaxTreePathBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": a symlink target over ", kMaxTreePathBytes, " bytes"));
  }
  target.resize(n);
  return target;
}

// What the folder open as `root_fd` (at `root` on disk) holds, walked one
// descriptor at a time (WalkBeneath), however deep.
absl::Status WalkFolder(int root_fd, const std::string& root, Walk& walk) {
  WalkVisitor visitor;
  visitor.visit = [&](const WalkEntry& found) -> absl::StatusOr<bool> {
    const std::string abs = JoinPath(root, found.path);
    if (walk.entries.size() >= kMaxTreeEntries) {
      return absl::InvalidArgumentError(absl::StrCat(
          root, ": more than ", kMaxTreeEntries, " entries in the tree"));
    }
    TreeEntry entry;
    const mode_t mode = found.st.st_mode;
    if (S_ISDIR(mode)) {
      entry = TreeEntry::Directory(found.path);
    } else if (S_ISREG(mode)) {
      // The digest and size come when the file is hashed.
      entry = TreeEntry::File(found.path, {}, 0, (mode & S_IXUSR) != 0);
      walk.files.push_back(walk.entries.size());
      walk.file_stats.push_back(found.st);
    } else if (S_ISLNK(mode)) {
      ASSIGN_OR_RETURN(std::string target,
                       ReadLinkAt(found.dir_fd, found.name, abs));
      entry = TreeEntry::Symlink(found.path, std::move(target));
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(abs, " is not a file, a directory or a symlink"));
    }
    walk.entries.push_back(std::move(entry));
    return S_ISDIR(mode);
  };
  return WalkBeneath(root_fd, root, visitor);
}

absl::Status HashFile(TreeFolders& folders, HashAlgorithm algorithm,
                      TreeEntry& entry) {
  // O_NONBLOCK: a FIFO swapped in since the walk cannot hang the open.
  ASSIGN_OR_RETURN(const UniqueFd fd,
                   OpenBeneath(folders, entry.path, O_RDONLY | O_NONBLOCK));
  ASSIGN_OR_RETURN(
      const MerkleTree tree,
      BuildMerkleTreeFromFd(fd.get(), TreeFileParams(algorithm), 1));
  entry.digest = ParsedDigest{algorithm, tree.digest};
  entry.size = tree.descriptor.data_size;
  return absl::OkStatus();
}

// Files of the walk read by one task, one after the other: neighbours, so
// mostly in one folder, which the task opens once.
struct FileRun {
  size_t begin;
  size_t end;
};

// Runs of at most 64 files and 1 MiB, so that large files still spread over
// the threads.
std::vector<FileRun> FileRuns(const std::vector<struct stat>& files) {
  constexpr size_t kRunFiles = 64;
  constexpr uint64_t kRunBytes = uint64_t{1} << 20;
  std::vector<FileRun> runs;
  uint64_t bytes = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    if (runs.empty() || runs.back().end - runs.back().begin == kRunFiles ||
        bytes >= kRunBytes) {
      runs.push_back(FileRun{i, i});
      bytes = 0;
    }
    runs.back().end = i + 1;
    bytes += static_cast<uint64_t>(files[i].st_size);
  }
  return runs;
}

// Calls `fn` with each file of the walk (its index in walk.files), `threads`
// runs at a time, each run with folders of its own.
absl::Status ForEachFile(
    const Walk& walk, int root_fd, int threads,
    absl::FunctionRef<absl::Status(TreeFolders&, size_t)> fn) {
  const std::vector<FileRun> runs = FileRuns(walk.file_stats);
  return ParallelFor(runs.size(), threads, [&](size_t r) {
    TreeFolders folders(root_fd);
    for (size_t i = runs[r].begin; i < runs[r].end; ++i) {
      RETURN_IF_ERROR(fn(folders, i));
    }
    return absl::OkStatus();
  });
}

// Copies `size` bytes of `from` into the empty `to`: one reflink where the
// file system shares extents (FICLONE), else copy_file_range.
absl::Status CopyBytes(int from, int to, uint64_t size,
                       absl::string_view path) {
  if (ioctl(to, FICLONE, from) == 0) return absl::OkStatus();
  uint64_t done = 0;
  while (done < size) {
    const ssize_t n =
        copy_file_range(from, nullptr, to, nullptr, size - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "copy_file_range", path);
    if (n == 0) {
      return absl::AbortedError(
          absl::StrCat(path, " shrank to ", done, " bytes while copied"));
    }
    done += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

MerkleParams TreeFileParams(HashAlgorithm algorithm) {
  MerkleParams params;
  params.hash_algorithm = algorithm;
  return params;
}

absl::StatusOr<std::vector<TreeEntry>> ScanFolder(const std::string& root,
                                                  HashAlgorithm algorithm,
                                                  int threads) {
  ASSIGN_OR_RETURN(const UniqueFd root_fd,
                   OpenAt(AT_FDCWD, root, O_RDONLY | O_DIRECTORY));
  Walk walk;
  RETURN_IF_ERROR(WalkFolder(root_fd.get(), root, walk));
  RETURN_IF_ERROR(ForEachFile(
      walk, root_fd.get(), threads, [&](TreeFolders& folders, size_t i) {
        TreeEntry& entry = walk.entries[walk.files[i]];
        const absl::Status status = HashFile(folders, algorithm, entry);
        if (status.ok()) return status;
        return absl::Status(
            status.code(),
            absl::StrCat(JoinPath(root, entry.path), ": ", status.message()));
      }));
  // The walk lists "a/x" before "a-b"; canonical order is by path bytes.
  std::sort(
      walk.entries.begin(), walk.entries.end(),
      [](const TreeEntry& a, const TreeEntry& b) { return a.path < b.path; });
  // The manifest's rules (a symlink leaving the tree, a name too long).
  RETURN_IF_ERROR(EncodeTreeManifest(walk.entries).status());
  return std::move(walk.entries);
}

namespace {

// Whether the file `fd` holds `entry`'s content.
absl::StatusOr<bool> HoldsContent(int fd, const TreeEntry& entry) {
  ASSIGN_OR_RETURN(
      const MerkleTree tree,
      BuildMerkleTreeFromFd(fd, TreeFileParams(entry.digest.algorithm), 1));
  return tree.digest == entry.digest.digest &&
         tree.descriptor.data_size == entry.size;
}

absl::Status Differs(const std::string& root, absl::string_view path,
                     absl::string_view what) {
  return absl::DataLossError(
      absl::StrCat(JoinPath(root, absl::CEscape(path)), " ", what,
                   " (the folder does not hold the tree it should)"));
}

// The walk's entries against `expected` (by path), all but the files'
// content.
absl::Status CheckShape(
    const std::string& root, const Walk& walk,
    const absl::flat_hash_map<absl::string_view, const TreeEntry*>& expected,
    const TreeFileModes& modes) {
  for (const TreeEntry& found : walk.entries) {
    const auto it = expected.find(found.path);
    if (it == expected.end()) {
      return Differs(root, found.path, "is not in the tree");
    }
    const TreeEntry& want = *it->second;
    if (found.type != want.type || found.target != want.target) {
      return Differs(root, found.path, "is not what the tree has there");
    }
  }
  if (walk.entries.size() != expected.size()) {
    absl::flat_hash_set<absl::string_view> found;
    for (const TreeEntry& entry : walk.entries) found.insert(entry.path);
    for (const auto& item : expected) {
      if (!found.contains(item.first)) {
        return Differs(root, item.first, "is missing");
      }
    }
  }
  for (size_t i = 0; i < walk.files.size(); ++i) {
    const std::string& path = walk.entries[walk.files[i]].path;
    const TreeEntry& want = *expected.at(path);
    const struct stat& st = walk.file_stats[i];
    if (static_cast<uint64_t>(st.st_size) != want.size) {
      return Differs(root, path, "has another size");
    }
    if (st.st_uid != geteuid() ||
        (st.st_mode & 07777) != TreeFileMode(want, modes)) {
      return Differs(root, path,
                     absl::StrCat("has mode 0", absl::Hex(st.st_mode & 07777),
                                  " and owner ", st.st_uid));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckFolderHolds(int root_fd, const std::string& root,
                              const std::vector<TreeEntry>& entries,
                              const TreeFileModes& modes, int threads) {
  absl::flat_hash_map<absl::string_view, const TreeEntry*> expected;
  for (const TreeEntry& entry : entries) expected[entry.path] = &entry;
  Walk walk;
  RETURN_IF_ERROR(WalkFolder(root_fd, root, walk));
  RETURN_IF_ERROR(CheckShape(root, walk, expected, modes));
  return ForEachFile(
      walk, root_fd, threads, [&](TreeFolders& folders, size_t i) {
        const std::string& path = walk.entries[walk.files[i]].path;
        const TreeEntry& want = *expected.at(path);
        ASSIGN_OR_RETURN(const UniqueFd fd,
                         OpenBeneath(folders, path, O_RDONLY | O_NONBLOCK));
        ASSIGN_OR_RETURN(const bool same, HoldsContent(fd.get(), want));
        return same ? absl::OkStatus()
                    : Differs(root, path, "does not hold the tree's content");
      });
}

absl::StatusOr<int> TreeFolders::Holding(absl::string_view path,
                                         std::string* leaf) {
  RETURN_IF_ERROR(CheckTreePath(path));
  const size_t slash = path.rfind('/');
  *leaf = std::string(path.substr(slash + 1));
  if (slash == absl::string_view::npos) return root_fd_;
  const absl::string_view folder = path.substr(0, slash);
  if (open_.get() >= 0 && open_path_ == folder) return open_.get();
  open_ = UniqueFd();
  UniqueFd dir;
  for (const absl::string_view name : absl::StrSplit(folder, '/')) {
    ASSIGN_OR_RETURN(dir, OpenAt(dir.get() >= 0 ? dir.get() : root_fd_,
                                 std::string(name), kDirFlags));
  }
  open_ = std::move(dir);
  open_path_ = std::string(folder);
  return open_.get();
}

absl::StatusOr<UniqueFd> OpenBeneath(TreeFolders& folders,
                                     absl::string_view path, int flags,
                                     mode_t mode) {
  std::string leaf;
  ASSIGN_OR_RETURN(const int parent, folders.Holding(path, &leaf));
  return OpenAt(parent, leaf, flags | O_NOFOLLOW, mode);
}

absl::StatusOr<UniqueFd> OpenBeneath(int root_fd, absl::string_view path,
                                     int flags, mode_t mode) {
  TreeFolders folders(root_fd);
  return OpenBeneath(folders, path, flags, mode);
}

absl::Status MakeDirectoriesAndSymlinks(int root_fd,
                                        const std::vector<TreeEntry>& entries) {
  TreeFolders folders(root_fd);
  for (const TreeEntry& entry : entries) {
    if (entry.type == TreeEntryType::kFile) continue;
    std::string leaf;
    ASSIGN_OR_RETURN(const int parent, folders.Holding(entry.path, &leaf));
    if (entry.type == TreeEntryType::kDirectory) {
      if (mkdirat(parent, leaf.c_str(), 0755) != 0) {
        return ErrnoStatus(errno, "mkdir", entry.path);
      }
    } else if (symlinkat(entry.target.c_str(), parent, leaf.c_str()) != 0) {
      return ErrnoStatus(errno, "symlink", entry.path);
    }
  }
  return absl::OkStatus();
}

mode_t TreeFileMode(const TreeEntry& entry, const TreeFileModes& modes) {
  const mode_t mode = entry.executable ? 0755 : 0644;
  return modes.read_only ? mode & 0555 : mode;
}

absl::StatusOr<UniqueFd> CreateTreeFile(TreeFolders& folders,
                                        const TreeEntry& entry,
                                        const TreeFileModes& modes) {
  const mode_t mode = TreeFileMode(entry, modes);
  ASSIGN_OR_RETURN(UniqueFd fd, OpenBeneath(folders, entry.path,
                                            O_RDWR | O_CREAT | O_EXCL, mode));
  // The umask took bits away: the tree says which it has.
  if (fchmod(fd.get(), mode) != 0) {
    return ErrnoStatus(errno, "chmod", entry.path);
  }
  return fd;
}

absl::StatusOr<UniqueFd> CreateTreeFile(int root_fd, const TreeEntry& entry,
                                        const TreeFileModes& modes) {
  TreeFolders folders(root_fd);
  return CreateTreeFile(folders, entry, modes);
}

namespace {

// Whether `st`, a file found on disk, may be adopted as `entry`'s.
bool Adoptable(const struct stat& st, const TreeEntry& entry,
               const TreeFileModes& modes) {
  return st.st_uid == geteuid() &&
         (st.st_mode & 07777) == TreeFileMode(entry, modes) &&
         (!modes.single_link || st.st_nlink == 1);
}

// Copies the file open as `source` to the new file `entry` beneath `to`,
// and hashes the copy; kNo (and no file) if it does not hold the content.
absl::StatusOr<Reused> CopyVerified(int source, TreeFolders& to,
                                    const TreeEntry& entry,
                                    const TreeFileModes& modes) {
  ASSIGN_OR_RETURN(UniqueFd copy, CreateTreeFile(to, entry, modes));
  RETURN_IF_ERROR(CopyBytes(source, copy.get(), entry.size, entry.path));
  ASSIGN_OR_RETURN(const bool same, HoldsContent(copy.get(), entry));
  if (same) {
    RETURN_IF_ERROR(copy.Close(entry.path));
    return Reused::kCopied;
  }
  std::string leaf;
  ASSIGN_OR_RETURN(const int parent, to.Holding(entry.path, &leaf));
  if (unlinkat(parent, leaf.c_str(), 0) != 0) {
    return ErrnoStatus(errno, "unlink", entry.path);
  }
  return Reused::kNo;
}

// Hard-links `leaf` in `from_parent` (the file open as `file`, already
// known to hold the content) to `entry` beneath `to`; false if the name was
// given another inode meanwhile, which is then not kept.
absl::StatusOr<bool> LinkSame(int from_parent, const std::string& leaf,
                              const struct stat& file, TreeFolders& to,
                              const TreeEntry& entry) {
  std::string to_leaf;
  ASSIGN_OR_RETURN(const int to_parent, to.Holding(entry.path, &to_leaf));
  // linkat(2) links a symlink itself, never what it points at.
  if (linkat(from_parent, leaf.c_str(), to_parent, to_leaf.c_str(), 0) != 0) {
    // Gone, or linked too often: fetched instead.
    if (errno == ENOENT || errno == EPERM || errno == EMLINK) return false;
    return ErrnoStatus(errno, "link", entry.path);
  }
  struct stat linked;
  if (fstatat(to_parent, to_leaf.c_str(), &linked, AT_SYMLINK_NOFOLLOW) != 0) {
    return ErrnoStatus(errno, "stat", entry.path);
  }
  if (linked.st_ino == file.st_ino && linked.st_dev == file.st_dev) return true;
  if (unlinkat(to_parent, to_leaf.c_str(), 0) != 0) {
    return ErrnoStatus(errno, "unlink", entry.path);
  }
  return false;
}

}  // namespace

absl::StatusOr<Reused> ReuseFile(TreeFolders& from, TreeFolders& to,
                                 const TreeEntry& entry,
                                 const TreeFileModes& modes, bool known_same) {
  std::string leaf;
  absl::StatusOr<int> from_parent = from.Holding(entry.path, &leaf);
  if (!from_parent.ok()) return Reused::kNo;  // a folder on the way is not
  // O_NONBLOCK: a FIFO swapped in since cannot hang the open.
  absl::StatusOr<UniqueFd> file =
      OpenAt(*from_parent, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  if (!file.ok()) return Reused::kNo;
  struct stat st;
  if (fstat(file->get(), &st) != 0) return ErrnoStatus(errno, "fstat", leaf);
  if (!S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) != entry.size) {
    return Reused::kNo;
  }
  if (!Adoptable(st, entry, modes)) {
    return CopyVerified(file->get(), to, entry, modes);
  }
  if (!known_same) {
    ASSIGN_OR_RETURN(const bool same, HoldsContent(file->get(), entry));
    if (!same) return Reused::kNo;
  }
  ASSIGN_OR_RETURN(const bool linked,
                   LinkSame(*from_parent, leaf, st, to, entry));
  return linked ? Reused::kLinked : Reused::kNo;
}

absl::StatusOr<Reused> ReuseFile(int from_fd, int to_fd, const TreeEntry& entry,
                                 const TreeFileModes& modes, bool known_same) {
  TreeFolders from(from_fd);
  TreeFolders to(to_fd);
  return ReuseFile(from, to, entry, modes, known_same);
}

absl::Status CopyTreeFile(int root_fd, const TreeEntry& from,
                          const TreeEntry& to, const TreeFileModes& modes) {
  ASSIGN_OR_RETURN(const UniqueFd in,
                   OpenBeneath(root_fd, from.path, O_RDONLY | O_NONBLOCK));
  TreeFolders folders(root_fd);
  ASSIGN_OR_RETURN(const Reused copied,
                   CopyVerified(in.get(), folders, to, modes));
  if (copied == Reused::kCopied) return absl::OkStatus();
  return absl::DataLossError(
      absl::StrCat(to.path, ": its copy of ", from.path,
                   " does not hold the content verified (changed since)"));
}

}  // namespace verity
