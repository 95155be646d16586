// Implements verity/tree.h on Client's calls: lib/manifest encodes, parses
// and checks trees and touches the disk; this file adds the network (which
// blobs are missing, parallel uploads and verified fetches) and the swap of
// a finished folder into place.

#include "verity/tree.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "client/sdk/sdk_convert.h"
#include "client/sdk/tree_writer.h"
#include "lib/base/bytes.h"
#include "lib/base/dir_walk.h"
#include "lib/base/file_system.h"
#include "lib/base/file_util.h"
#include "lib/base/parallel_for.h"
#include "lib/base/status_macros.h"
#include "lib/manifest/local_tree.h"
#include "lib/manifest/tree_manifest.h"
#include "lib/tree/merkle_builder.h"

namespace verity::sdk {
namespace {

constexpr int kMaxParallel = 64;

absl::Status CheckParallel(int parallel) {
  if (parallel < 1 || parallel > kMaxParallel) {
    return absl::InvalidArgumentError(
        absl::StrCat("parallel must be from 1 to ", kMaxParallel));
  }
  return absl::OkStatus();
}

absl::StatusOr<Digest> DigestOfBytes(absl::string_view bytes,
                                     DigestAlgorithm algorithm) {
  ASSIGN_OR_RETURN(
      const MerkleTree tree,
      BuildMerkleTree(TreeFileParams(static_cast<HashAlgorithm>(algorithm)),
                      AsBytes(bytes)));
  return Digest::FromBytes(algorithm, tree.digest);
}

ByteSource SourceOf(absl::string_view bytes) {
  return [bytes](absl::Span<uint8_t> buffer) mutable -> absl::StatusOr<size_t> {
    const size_t n = std::min(buffer.size(), bytes.size());
    std::copy_n(bytes.data(), n, buffer.data());
    bytes.remove_prefix(n);
    return n;
  };
}

// One file of each content the server lacks, by digest.
absl::StatusOr<std::vector<const TreeEntry*>> MissingFiles(
    Client& client, const LocalTree& tree) {
  std::map<std::string, const TreeEntry*> by_digest;
  std::vector<Digest> digests;
  for (const TreeEntry& entry : tree.entries) {
    if (entry.type != TreeEntryType::kFile) continue;
    if (by_digest.emplace(entry.digest->ToString(), &entry).second) {
      digests.push_back(*entry.digest);
    }
  }
  ASSIGN_OR_RETURN(const std::vector<Digest> missing,
                   client.FindMissing(digests));
  std::vector<const TreeEntry*> files;
  files.reserve(missing.size());
  for (const Digest& digest : missing) {
    const auto it = by_digest.find(digest.ToString());
    if (it == by_digest.end()) {
      return absl::InternalError(absl::StrCat(
          "the server says it lacks ", digest.ToString(), ", not asked for"));
    }
    files.push_back(it->second);
  }
  return files;
}

// Files of at most this size are sent in BatchUpdate calls, many to a call;
// larger ones each in a Put stream of its own.
constexpr uint64_t kBatchedFileBytes = uint64_t{256} << 10;

// What one upload task sends: a batch of small files, or one large file.
struct Upload {
  std::vector<const TreeEntry*> files;
  bool batch = false;
};

// The missing files in batches that fit BatchUpdate's limits, and the large
// ones alone.
std::vector<Upload> PlanUploads(const std::vector<const TreeEntry*>& missing) {
  std::vector<Upload> uploads;
  Upload batch{{}, true};
  uint64_t batch_bytes = 0;
  for (const TreeEntry* file : missing) {
    if (file->size > kBatchedFileBytes) {
      uploads.push_back(Upload{{file}, false});
      continue;
    }
    if (batch.files.size() == kMaxBatchUpdateBlobs ||
        batch_bytes + file->size > kMaxBatchUpdateBytes) {
      uploads.push_back(std::move(batch));
      batch = Upload{{}, true};
      batch_bytes = 0;
    }
    batch.files.push_back(file);
    batch_bytes += file->size;
  }
  if (!batch.files.empty()) uploads.push_back(std::move(batch));
  return uploads;
}

// `status` of the file `path`, saying which.
absl::Status OfFile(const std::string& path, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat(path, ": ", status.message()));
}

// Sends the small files of `upload` in one BatchUpdate, read beneath the
// tree's folder open as `root_fd`.
absl::Status SendBatch(Client& client, const LocalTree& tree, int root_fd,
                       const Upload& upload) {
  std::vector<BatchUpdateBlob> blobs;
  blobs.reserve(upload.files.size());
  TreeFolders folders(root_fd);
  for (const TreeEntry* file : upload.files) {
    const std::string path = JoinPath(tree.folder, file->path);
    absl::StatusOr<std::string> data = [&]() -> absl::StatusOr<std::string> {
      // O_NONBLOCK: a FIFO swapped in since the scan cannot hang the open.
      ASSIGN_OR_RETURN(const UniqueFd fd,
                       OpenBeneath(folders, file->path, O_RDONLY | O_NONBLOCK));
      return ReadRegularFd(PosixFileSystem(), fd.get(), path,
                           kBatchedFileBytes);
    }();
    if (data.ok() && data->size() != file->size) {
      data = absl::AbortedError("the file changed since it was scanned");
    }
    if (!data.ok()) return OfFile(path, data.status());
    blobs.push_back(BatchUpdateBlob{*file->digest, *std::move(data)});
  }
  ASSIGN_OR_RETURN(const std::vector<absl::Status> stored,
                   client.BatchUpdate(blobs));
  for (size_t i = 0; i < stored.size(); ++i) {
    if (!stored[i].ok()) {
      return OfFile(JoinPath(tree.folder, upload.files[i]->path), stored[i]);
    }
  }
  return absl::OkStatus();
}

// The prefix of the folders FetchTree fills beside the folder `leaf`; the
// process's id follows, so that a later fetch can tell a killed one's
// leftovers.
std::string SiblingPrefix(absl::string_view leaf) {
  return absl::StrCat(leaf, ".verity-");
}

// Removes what fetches into the folder `leaf` in `parent` that were killed
// left beside it: the folders whose process no longer exists.
void RemoveLeftovers(int parent, const std::string& parent_path,
                     const std::string& leaf) {
  const absl::StatusOr<std::vector<std::string>> names =
      ListDirFd(parent, parent_path);
  if (!names.ok()) return;
  for (const std::string& name : *names) {
    absl::string_view rest = name;
    int pid = 0;
    if (!absl::ConsumePrefix(&rest, SiblingPrefix(leaf)) ||
        !absl::SimpleAtoi(rest.substr(0, rest.find('-')), &pid) || pid <= 0 ||
        kill(pid, 0) == 0 || errno != ESRCH) {
      continue;
    }
    RemoveBeneath(parent, name, JoinPath(parent_path, name)).IgnoreError();
  }
}

// A new folder beside `leaf` in `parent`, to fill and swap into its place:
// its name, and it open (O_NOFOLLOW: the folder made, not one swapped in).
absl::StatusOr<std::pair<std::string, UniqueFd>> MakeSiblingFolder(
    int parent, const std::string& parent_path, const std::string& leaf) {
  RemoveLeftovers(parent, parent_path, leaf);
  for (int attempt = 0;; ++attempt) {
    const std::string name = absl::StrCat(
        SiblingPrefix(leaf), getpid(), "-",
        absl::Hex(absl::ToUnixNanos(absl::Now()) ^ (attempt * 0x9e3779b9)));
    if (mkdirat(parent, name.c_str(), 0700) != 0) {
      if (errno == EEXIST && attempt < 100) continue;
      return ErrnoStatus(errno, "mkdir", JoinPath(parent_path, name));
    }
    ASSIGN_OR_RETURN(UniqueFd fd,
                     OpenAt(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    // Made 0700, so that nobody else enters it while it is filled; a tree's
    // folders are 0755.
    if (fchmod(fd.get(), 0755) != 0) {
      return ErrnoStatus(errno, "chmod", JoinPath(parent_path, name));
    }
    return std::make_pair(name, std::move(fd));
  }
}

// Whether `leaf` in `parent` exists; FAILED_PRECONDITION if it is not a
// folder (a symlink included: the folder itself is what is replaced).
absl::StatusOr<bool> FolderExists(int parent, const std::string& leaf,
                                  const std::string& path) {
  struct stat st;
  if (fstatat(parent, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return false;
    return ErrnoStatus(errno, "stat", path);
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " exists and is not a directory",
                     S_ISLNK(st.st_mode) ? " (a symlink: give the "
                                           "folder it points at)"
                                         : ""));
  }
  return true;
}

}  // namespace

absl::StatusOr<LocalTree> ScanTree(absl::string_view folder,
                                   DigestAlgorithm algorithm, int threads) {
  ASSIGN_OR_RETURN(std::vector<::verity::TreeEntry> lib,
                   ScanFolder(std::string(folder),
                              static_cast<HashAlgorithm>(algorithm), threads));
  uint64_t file_bytes = 0;
  for (const ::verity::TreeEntry& entry : lib) file_bytes += entry.size;
  ASSIGN_OR_RETURN(std::string manifest, EncodeTreeManifest(lib));
  ASSIGN_OR_RETURN(Digest digest, DigestOfBytes(manifest, algorithm));
  ASSIGN_OR_RETURN(std::vector<TreeEntry> entries, client::ToSdkEntries(lib));
  return LocalTree{std::string(folder), std::move(entries), std::move(manifest),
                   std::move(digest), file_bytes};
}

absl::StatusOr<PutTreeResult> PutTree(Client& client, const LocalTree& tree,
                                      const PutTreeOptions& options) {
  RETURN_IF_ERROR(CheckParallel(options.parallel));
  ASSIGN_OR_RETURN(const std::vector<const TreeEntry*> missing,
                   MissingFiles(client, tree));
  std::atomic<uint64_t> bytes_sent{0};
  const std::vector<Upload> uploads = PlanUploads(missing);
  ASSIGN_OR_RETURN(const UniqueFd root_fd,
                   OpenAt(AT_FDCWD, tree.folder, O_RDONLY | O_DIRECTORY));
  RETURN_IF_ERROR(ParallelFor(uploads.size(), options.parallel, [&](size_t i) {
    const Upload& upload = uploads[i];
    if (upload.batch) {
      RETURN_IF_ERROR(SendBatch(client, tree, root_fd.get(), upload));
    } else {
      const TreeEntry& file = *upload.files[0];
      PutOptions put;
      put.hash_algorithm = file.digest->algorithm();
      put.expected_digest = file.digest;
      const std::string path = JoinPath(tree.folder, file.path);
      const absl::StatusOr<PutResult> result = client.PutFile(path, put);
      if (!result.ok()) return OfFile(path, result.status());
    }
    for (const TreeEntry* file : upload.files) bytes_sent += file->size;
    return absl::OkStatus();
  }));
  PutOptions put;
  put.hash_algorithm = tree.digest.algorithm();
  put.expected_digest = tree.digest;
  put.tree_manifest = true;
  put.name = options.name;
  put.name_statement = options.name_statement;
  ASSIGN_OR_RETURN(PutResult manifest,
                   client.PutStream(SourceOf(tree.manifest), put));
  size_t files = 0;
  for (const TreeEntry& entry : tree.entries) {
    files += entry.type == TreeEntryType::kFile;
  }
  return PutTreeResult{std::move(manifest.info), files, missing.size(),
                       bytes_sent.load()};
}

absl::StatusOr<std::vector<TreeEntry>> ReadTree(Client& client,
                                                const Digest& digest,
                                                const FetchOptions& options) {
  MemorySink sink(kMaxTreeManifestBytes);
  FetchOptions whole = options;
  whole.offset = 0;
  whole.length.reset();
  RETURN_IF_ERROR(client.Fetch(digest, sink, whole));
  absl::StatusOr<TreeManifest> manifest = ParseTreeManifest(sink.data());
  if (!manifest.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        digest.ToString(),
        " is not a valid tree manifest: ", manifest.status().message()));
  }
  return client::ToSdkEntries(manifest->entries);
}

absl::StatusOr<FetchTreeResult> WriteTreeAt(
    Client& client, const std::vector<TreeEntry>& entries, int folder_fd,
    absl::string_view folder, int reuse_fd, const FetchTreeOptions& options) {
  RETURN_IF_ERROR(CheckParallel(options.parallel));
  ASSIGN_OR_RETURN(const std::vector<::verity::TreeEntry> lib,
                   client::ToLibEntries(entries));
  // Entries from anywhere: the same rules as a fetched manifest's.
  RETURN_IF_ERROR(EncodeTreeManifest(lib).status());
  return WriteCheckedTree(client, entries, folder_fd, folder, reuse_fd,
                          options);
}

absl::Status VerifyFolder(int folder_fd, absl::string_view folder,
                          const std::vector<TreeEntry>& entries,
                          const FetchTreeOptions& options) {
  RETURN_IF_ERROR(CheckParallel(options.parallel));
  ASSIGN_OR_RETURN(const std::vector<::verity::TreeEntry> lib,
                   client::ToLibEntries(entries));
  return CheckFolderHolds(folder_fd, std::string(folder), lib, ModesOf(options),
                          options.parallel);
}

absl::StatusOr<FetchTreeResult> WriteTree(Client& client,
                                          const std::vector<TreeEntry>& entries,
                                          absl::string_view folder,
                                          const FetchTreeOptions& options) {
  ASSIGN_OR_RETURN(const UniqueFd root,
                   OpenAt(AT_FDCWD, std::string(folder),
                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
  UniqueFd reuse;
  if (!options.reuse_from.empty()) {
    reuse = OpenAt(AT_FDCWD, options.reuse_from,
                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
                .value_or(UniqueFd());
  }
  return WriteTreeAt(client, entries, root.get(), folder, reuse.get(), options);
}

absl::StatusOr<FetchTreeResult> FetchTree(Client& client, const Digest& digest,
                                          absl::string_view folder,
                                          const FetchTreeOptions& options) {
  RETURN_IF_ERROR(CheckParallel(options.parallel));
  // "out/" is "out": the folder beside it is "out.verity-...".
  const std::string target(folder.size() > 1 ? absl::StripSuffix(folder, "/")
                                             : folder);
  const std::string parent_path = DirName(target);
  const std::string leaf = target.substr(target.rfind('/') + 1);
  // Every step below is relative to the parent, held open: the tree is
  // built, swapped in and the old one removed in the folder checked here.
  ASSIGN_OR_RETURN(const UniqueFd parent,
                   OpenAt(AT_FDCWD, parent_path, O_RDONLY | O_DIRECTORY));
  ASSIGN_OR_RETURN(const bool exists, FolderExists(parent.get(), leaf, target));
  ASSIGN_OR_RETURN(const std::vector<TreeEntry> entries,
                   ReadTree(client, digest, options.fetch));
  ASSIGN_OR_RETURN(auto sibling,
                   MakeSiblingFolder(parent.get(), parent_path, leaf));
  const std::string& temp = sibling.first;
  const std::string temp_path = JoinPath(parent_path, temp);
  // Before the swap `temp` holds part of the new tree, after it the old one.
  auto remove_temp = absl::MakeCleanup(
      [&] { RemoveBeneath(parent.get(), temp, temp_path).IgnoreError(); });
  UniqueFd reuse;
  if (!options.reuse_from.empty()) {
    reuse = OpenAt(AT_FDCWD, options.reuse_from,
                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
                .value_or(UniqueFd());
  } else if (exists) {
    reuse = OpenAt(parent.get(), leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
                .value_or(UniqueFd());
  }
  ASSIGN_OR_RETURN(const FetchTreeResult result,
                   WriteCheckedTree(client, entries, sibling.second.get(),
                                    temp_path, reuse.get(), options));
  reuse = UniqueFd();
  const unsigned int flags = exists ? RENAME_EXCHANGE : RENAME_NOREPLACE;
  if (renameat2(parent.get(), temp.c_str(), parent.get(), leaf.c_str(),
                flags) != 0) {
    return ErrnoStatus(errno, "rename", target);
  }
  if (fsync(parent.get()) != 0) {
    return ErrnoStatus(errno, "fsync", parent_path);
  }
  std::move(remove_temp).Cancel();
  RETURN_IF_ERROR(RemoveBeneath(parent.get(), temp, temp_path));
  return result;
}

}  // namespace verity::sdk
