// Implements ScanFolder (a walk by descriptors, then the files hashed on a
// few threads) and the writers, each opening the parent folder name by name.

#include "lib/manifest/local_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/parallel_for.h"
#include "lib/base/status_macros.h"
#include "lib/tree/file_digest.h"

namespace verity {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

// A folder's walk: the entries so far and which of them are files.
struct Walk {
  std::vector<TreeEntry> entries;
  std::vector<size_t> files;
};

std::string ChildPath(absl::string_view parent, absl::string_view name) {
  return parent.empty() ? std::string(name) : absl::StrCat(parent, "/", name);
}

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

// Adds what the folder open as `dir_fd` (the tree path `rel`, at `abs` on
// disk) holds, and recursively what its folders hold.
absl::Status WalkFolder(int dir_fd, const std::string& rel,
                        const std::string& abs, Walk& walk) {
  ASSIGN_OR_RETURN(const std::vector<std::string> names,
                   ListDirFd(dir_fd, abs));
  for (const std::string& name : names) {
    if (walk.entries.size() >= kMaxTreeEntries) {
      return absl::InvalidArgumentError(absl::StrCat(
          abs, ": more than ", kMaxTreeEntries, " entries in the tree"));
    }
    TreeEntry entry;
    entry.path = ChildPath(rel, name);
    const std::string child_abs = JoinPath(abs, name);
    struct stat st;
    if (fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return ErrnoStatus(errno, "stat", child_abs);
    }
    if (S_ISDIR(st.st_mode)) {
      entry.type = TreeEntryType::kDirectory;
      const std::string child_rel = entry.path;  // entries grows below
      walk.entries.push_back(std::move(entry));
      ASSIGN_OR_RETURN(const UniqueFd child, OpenAt(dir_fd, name, kDirFlags));
      RETURN_IF_ERROR(WalkFolder(child.get(), child_rel, child_abs, walk));
    } else if (S_ISREG(st.st_mode)) {
      entry.type = TreeEntryType::kFile;
      entry.executable = (st.st_mode & S_IXUSR) != 0;
      walk.files.push_back(walk.entries.size());
      walk.entries.push_back(std::move(entry));
    } else if (S_ISLNK(st.st_mode)) {
      entry.type = TreeEntryType::kSymlink;
      ASSIGN_OR_RETURN(entry.target, ReadLinkAt(dir_fd, name, child_abs));
      walk.entries.push_back(std::move(entry));
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(child_abs, " is not a file, a directory or a symlink"));
    }
  }
  return absl::OkStatus();
}

absl::Status HashFile(int root_fd, HashAlgorithm algorithm, TreeEntry& entry) {
  // O_NONBLOCK: a FIFO swapped in since the walk cannot hang the open.
  ASSIGN_OR_RETURN(const UniqueFd fd,
                   OpenBeneath(root_fd, entry.path, O_RDONLY | O_NONBLOCK));
  ASSIGN_OR_RETURN(
      const MerkleTree tree,
      BuildMerkleTreeFromFd(fd.get(), TreeFileParams(algorithm), 1));
  entry.digest = ParsedDigest{algorithm, tree.digest};
  entry.size = tree.descriptor.data_size;
  return absl::OkStatus();
}

// Whether `st` is a regular file of `entry`'s size and executable bit.
bool Fits(const struct stat& st, const TreeEntry& entry) {
  return S_ISREG(st.st_mode) &&
         static_cast<uint64_t>(st.st_size) == entry.size &&
         ((st.st_mode & S_IXUSR) != 0) == entry.executable;
}

mode_t FileMode(const TreeEntry& entry) {
  return entry.executable ? 0755 : 0644;
}

absl::Status CopyBytes(int from, int to, uint64_t size,
                       absl::string_view path) {
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
  RETURN_IF_ERROR(WalkFolder(root_fd.get(), "", root, walk));
  RETURN_IF_ERROR(ParallelFor(walk.files.size(), threads, [&](size_t i) {
    TreeEntry& entry = walk.entries[walk.files[i]];
    const absl::Status status = HashFile(root_fd.get(), algorithm, entry);
    if (status.ok()) return status;
    return absl::Status(status.code(), absl::StrCat(JoinPath(root, entry.path),
                                                    ": ", status.message()));
  }));
  // The walk lists "a/x" before "a-b"; canonical order is by path bytes.
  std::sort(
      walk.entries.begin(), walk.entries.end(),
      [](const TreeEntry& a, const TreeEntry& b) { return a.path < b.path; });
  // The manifest's rules (a symlink leaving the tree, a name too long).
  RETURN_IF_ERROR(EncodeTreeManifest(walk.entries).status());
  return std::move(walk.entries);
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

absl::StatusOr<UniqueFd> CreateTreeFile(TreeFolders& folders,
                                        const TreeEntry& entry) {
  return OpenBeneath(folders, entry.path, O_WRONLY | O_CREAT | O_EXCL,
                     FileMode(entry));
}

absl::StatusOr<UniqueFd> CreateTreeFile(int root_fd, const TreeEntry& entry) {
  TreeFolders folders(root_fd);
  return CreateTreeFile(folders, entry);
}

absl::StatusOr<bool> LinkIfSame(TreeFolders& from, TreeFolders& to,
                                const TreeEntry& entry, bool known_same) {
  std::string leaf;
  absl::StatusOr<int> from_parent = from.Holding(entry.path, &leaf);
  if (!from_parent.ok()) return false;  // a folder on the way is not there
  // The file hashed, if the content is not known.
  std::optional<struct stat> hashed;
  if (!known_same) {
    struct stat st;
    if (fstatat(*from_parent, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !Fits(st, entry)) {
      return false;
    }
    absl::StatusOr<UniqueFd> file =
        OpenAt(*from_parent, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    if (!file.ok()) return false;
    struct stat opened;
    if (fstat(file->get(), &opened) != 0 || opened.st_ino != st.st_ino) {
      return false;  // replaced since the stat
    }
    ASSIGN_OR_RETURN(
        const MerkleTree tree,
        BuildMerkleTreeFromFd(file->get(),
                              TreeFileParams(entry.digest.algorithm), 1));
    if (tree.digest != entry.digest.digest) return false;
    hashed = st;
  }
  std::string to_leaf;
  ASSIGN_OR_RETURN(const int to_parent, to.Holding(entry.path, &to_leaf));
  // linkat(2) links a symlink itself, never what it points at.
  if (linkat(*from_parent, leaf.c_str(), to_parent, to_leaf.c_str(), 0) != 0) {
    // Absent, a directory, or linked too often: fetched instead.
    if (errno == ENOENT || errno == EPERM || errno == EMLINK) return false;
    return ErrnoStatus(errno, "link", entry.path);
  }
  // Known content need only be of the entry's type, size and mode (stat(2)
  // says, after the link: one call less per file); hashed content must be
  // the file hashed, not one given its name since.
  struct stat linked;
  if (fstatat(to_parent, to_leaf.c_str(), &linked, AT_SYMLINK_NOFOLLOW) != 0) {
    return ErrnoStatus(errno, "stat", entry.path);
  }
  if (Fits(linked, entry) &&
      (!hashed.has_value() ||
       (linked.st_ino == hashed->st_ino && linked.st_dev == hashed->st_dev))) {
    return true;
  }
  if (unlinkat(to_parent, to_leaf.c_str(), 0) != 0) {
    return ErrnoStatus(errno, "unlink", entry.path);
  }
  return false;
}

absl::StatusOr<bool> LinkIfSame(int from_fd, int to_fd, const TreeEntry& entry,
                                bool known_same) {
  TreeFolders from(from_fd);
  TreeFolders to(to_fd);
  return LinkIfSame(from, to, entry, known_same);
}

absl::Status CopyTreeFile(int root_fd, const TreeEntry& from,
                          const TreeEntry& to) {
  ASSIGN_OR_RETURN(const UniqueFd in,
                   OpenBeneath(root_fd, from.path, O_RDONLY | O_NONBLOCK));
  ASSIGN_OR_RETURN(UniqueFd out, CreateTreeFile(root_fd, to));
  RETURN_IF_ERROR(CopyBytes(in.get(), out.get(), from.size, to.path));
  return out.Close(to.path);
}

}  // namespace verity
