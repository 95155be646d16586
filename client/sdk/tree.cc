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
#include "client/sdk/sdk_convert.h"
#include "lib/base/bytes.h"
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

// Writes a fetch's verified bytes into a file of the tree; the fsync is the
// whole tree's, at its end.
class DescriptorSink final : public Sink {
 public:
  DescriptorSink(int fd, const TreeEntry& entry) : fd_(fd), entry_(entry) {}
  bool SupportsRandomAccess() const override { return true; }
  absl::Status Start(uint64_t size) override {
    if (size == entry_.size) return absl::OkStatus();
    return absl::DataLossError(absl::StrCat(entry_.path, ": the manifest says ",
                                            entry_.size,
                                            " bytes, its blob has ", size));
  }
  absl::Status Write(uint64_t offset, absl::Span<const uint8_t> data) override {
    while (!data.empty()) {
      const ssize_t n = pwrite(fd_, data.data(), data.size(), offset);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return ErrnoStatus(errno, "write", entry_.path);
      data.remove_prefix(n);
      offset += n;
    }
    return absl::OkStatus();
  }

 private:
  const int fd_;
  const TreeEntry& entry_;
};

// The files of a tree grouped by what they hold (content and executable
// bit): each group is fetched or reused once, and copied to the rest.
std::vector<std::vector<size_t>> GroupFiles(
    const std::vector<TreeEntry>& entries) {
  std::map<std::pair<std::string, bool>, size_t> group_of;
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < entries.size(); ++i) {
    const TreeEntry& entry = entries[i];
    if (entry.type != TreeEntryType::kFile) continue;
    const auto [it, added] = group_of.emplace(
        std::make_pair(entry.digest->ToString(), entry.executable),
        groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

struct WriteCounters {
  std::atomic<size_t> fetched{0};
  std::atomic<size_t> reused{0};
  std::atomic<size_t> copied{0};
  std::atomic<uint64_t> bytes{0};
};

// Writes `bytes`, the verified content of `entry`, as its file.
absl::Status WriteFile(TreeFolders& folders, const ::verity::TreeEntry& lib,
                       const TreeEntry& entry, absl::string_view bytes) {
  ASSIGN_OR_RETURN(UniqueFd fd, CreateTreeFile(folders, lib));
  DescriptorSink sink(fd.get(), entry);
  RETURN_IF_ERROR(sink.Start(bytes.size()));
  RETURN_IF_ERROR(sink.Write(0, AsBytes(bytes)));
  return fd.Close(entry.path);
}

absl::Status FetchFile(Client& client, int root_fd,
                       const ::verity::TreeEntry& lib, const TreeEntry& entry,
                       const FetchOptions& fetch, WriteCounters& counters) {
  ASSIGN_OR_RETURN(UniqueFd fd, CreateTreeFile(root_fd, lib));
  DescriptorSink sink(fd.get(), entry);
  FetchOptions whole = fetch;
  whole.offset = 0;
  whole.length.reset();
  RETURN_IF_ERROR(client.Fetch(*entry.digest, sink, whole));
  counters.fetched++;
  counters.bytes += entry.size;
  return fd.Close(entry.path);
}

// Where a tree may reuse files from: a folder, and what it is known to hold
// (its files' entries by path, pointing into FetchTreeOptions::reuse_entries),
// if anything.
struct ReuseSource {
  int fd = -1;
  absl::flat_hash_map<absl::string_view, const TreeEntry*> known;
};

absl::StatusOr<bool> Reuse(const ReuseSource& reuse, TreeFolders& from,
                           TreeFolders& to, const ::verity::TreeEntry& lib,
                           const TreeEntry& entry) {
  if (reuse.known.empty()) return LinkIfSame(from, to, lib);
  const auto it = reuse.known.find(entry.path);
  if (it == reuse.known.end() || it->second->digest != entry.digest ||
      it->second->executable != entry.executable) {
    return false;
  }
  return LinkIfSame(from, to, lib, /*known_same=*/true);
}

// Groups a thread links from the reused folder one after the other: a run
// of neighbours, mostly in the same folders, so each folder is opened once.
constexpr size_t kReuseRun = 256;

// Which groups' first files are linked from `reuse`, in place of a fetch.
absl::StatusOr<std::vector<char>> LinkReused(
    const ReuseSource& reuse, int root_fd,
    const std::vector<::verity::TreeEntry>& lib,
    const std::vector<TreeEntry>& entries,
    const std::vector<std::vector<size_t>>& groups, int parallel,
    WriteCounters& counters) {
  std::vector<char> reused(groups.size(), 0);
  if (reuse.fd < 0) return reused;
  const size_t runs = (groups.size() + kReuseRun - 1) / kReuseRun;
  RETURN_IF_ERROR(ParallelFor(runs, parallel, [&](size_t run) {
    TreeFolders from(reuse.fd);
    TreeFolders to(root_fd);
    const size_t end = std::min(groups.size(), (run + 1) * kReuseRun);
    for (size_t g = run * kReuseRun; g < end; ++g) {
      const size_t first = groups[g].front();
      ASSIGN_OR_RETURN(const bool linked,
                       Reuse(reuse, from, to, lib[first], entries[first]));
      reused[g] = linked;
      counters.reused += linked;
    }
    return absl::OkStatus();
  }));
  return reused;
}

// A file at most this big is read with others in one BatchRead, of at most
// kBatchBytes: many small calls, each a few files, keep every thread busy
// where one call of the server's whole limit would leave some idle.
constexpr uint64_t kBatchFileBytes = kMaxBatchReadBlobBytes;
constexpr uint64_t kBatchBytes = uint64_t{1} << 20;

// What the fetch of a tree does, beyond what it reuses: the groups (by
// index) each call reads, one large file alone or small ones together.
std::vector<std::vector<size_t>> PlanCalls(
    const std::vector<TreeEntry>& entries,
    const std::vector<std::vector<size_t>>& groups,
    const std::vector<char>& reused) {
  std::vector<std::vector<size_t>> calls;
  std::vector<size_t> batch;
  uint64_t batch_bytes = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (reused[g]) continue;
    const uint64_t size = entries[groups[g].front()].size;
    if (size > kBatchFileBytes) {
      calls.push_back({g});
      continue;
    }
    if (!batch.empty() && (batch.size() == kMaxBatchReadBlobs ||
                           batch_bytes + size > kBatchBytes)) {
      calls.push_back(std::move(batch));
      batch.clear();
      batch_bytes = 0;
    }
    batch.push_back(g);
    batch_bytes += size;
  }
  if (!batch.empty()) calls.push_back(std::move(batch));
  return calls;
}

// The groups of one call: a large file's fetch, or small files' BatchRead.
absl::Status FetchCall(Client& client, int root_fd,
                       const std::vector<::verity::TreeEntry>& lib,
                       const std::vector<TreeEntry>& entries,
                       const std::vector<std::vector<size_t>>& groups,
                       const std::vector<size_t>& call,
                       const FetchOptions& fetch, WriteCounters& counters) {
  const auto first_of = [&](size_t i) { return groups[call[i]].front(); };
  if (entries[first_of(0)].size > kBatchFileBytes) {
    return FetchFile(client, root_fd, lib[first_of(0)], entries[first_of(0)],
                     fetch, counters);
  }
  std::vector<Digest> digests;
  for (size_t i = 0; i < call.size(); ++i) {
    digests.push_back(*entries[first_of(i)].digest);
  }
  ASSIGN_OR_RETURN(const std::vector<absl::StatusOr<std::string>> blobs,
                   client.BatchRead(digests, fetch));
  TreeFolders folders(root_fd);
  for (size_t i = 0; i < call.size(); ++i) {
    const TreeEntry& entry = entries[first_of(i)];
    if (!blobs[i].ok()) {
      return absl::Status(
          blobs[i].status().code(),
          absl::StrCat(entry.path, ": ", blobs[i].status().message()));
    }
    RETURN_IF_ERROR(WriteFile(folders, lib[first_of(i)], entry, *blobs[i]));
    counters.fetched++;
    counters.bytes += entry.size;
  }
  return absl::OkStatus();
}

// Gives every file of each group the content of the group's first.
absl::Status CopyWithinGroups(int root_fd,
                              const std::vector<::verity::TreeEntry>& lib,
                              const std::vector<std::vector<size_t>>& groups,
                              int parallel, WriteCounters& counters) {
  return ParallelFor(groups.size(), parallel, [&](size_t g) {
    const std::vector<size_t>& group = groups[g];
    for (size_t i = 1; i < group.size(); ++i) {
      RETURN_IF_ERROR(CopyTreeFile(root_fd, lib[group.front()], lib[group[i]]));
      counters.copied++;
    }
    return absl::OkStatus();
  });
}

// The prefix of the folders FetchTree fills beside `folder`; the process's id
// follows, so that a later fetch can tell a killed one's leftovers.
std::string SiblingPrefix(const std::string& folder) {
  return absl::StrCat(folder, ".verity-");
}

// Removes what fetches into `folder` that were killed left beside it: the
// folders whose process no longer exists.
void RemoveLeftovers(const std::string& folder) {
  const std::string parent = DirName(folder);
  const std::string prefix =
      SiblingPrefix(folder.substr(folder.rfind('/') + 1));
  const absl::StatusOr<std::vector<std::string>> names = ListDir(parent);
  if (!names.ok()) return;
  for (const std::string& name : *names) {
    absl::string_view rest = name;
    int pid = 0;
    if (!absl::ConsumePrefix(&rest, prefix) ||
        !absl::SimpleAtoi(rest.substr(0, rest.find('-')), &pid) || pid <= 0 ||
        kill(pid, 0) == 0 || errno != ESRCH) {
      continue;
    }
    RemoveRecursively(JoinPath(parent, name)).IgnoreError();
  }
}

// A new folder beside `folder`, to fill and swap into its place.
absl::StatusOr<std::string> MakeSiblingFolder(const std::string& folder) {
  RemoveLeftovers(folder);
  std::string temp = absl::StrCat(SiblingPrefix(folder), getpid(), "-XXXXXX");
  if (mkdtemp(temp.data()) == nullptr) {
    return ErrnoStatus(errno, "mkdtemp", temp);
  }
  // mkdtemp makes it 0700; a tree's folders are 0755.
  if (chmod(temp.c_str(), 0755) != 0) {
    const absl::Status status = ErrnoStatus(errno, "chmod", temp);
    rmdir(temp.c_str());
    return status;
  }
  return temp;
}

// Puts the finished `temp` in `folder`'s place in one rename; what `folder`
// held is then at `temp`.
absl::Status SwapIntoPlace(const std::string& temp, const std::string& folder,
                           bool folder_exists) {
  const unsigned int flags = folder_exists ? RENAME_EXCHANGE : RENAME_NOREPLACE;
  if (renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, folder.c_str(), flags) != 0) {
    return ErrnoStatus(errno, "rename", folder);
  }
  return FsyncDir(DirName(folder));
}

// Whether `folder` exists; FAILED_PRECONDITION if it is not a folder.
absl::StatusOr<bool> FolderExists(const std::string& folder) {
  struct stat st;
  if (stat(folder.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;
    return ErrnoStatus(errno, "stat", folder);
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(folder, " exists and is not a directory"));
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
  RETURN_IF_ERROR(ParallelFor(missing.size(), options.parallel, [&](size_t i) {
    const TreeEntry& file = *missing[i];
    PutOptions put;
    put.hash_algorithm = file.digest->algorithm();
    put.expected_digest = file.digest;
    const absl::StatusOr<PutResult> result =
        client.PutFile(JoinPath(tree.folder, file.path), put);
    if (!result.ok()) {
      return absl::Status(result.status().code(),
                          absl::StrCat(JoinPath(tree.folder, file.path), ": ",
                                       result.status().message()));
    }
    bytes_sent += file.size;
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

absl::StatusOr<FetchTreeResult> WriteTree(Client& client,
                                          const std::vector<TreeEntry>& entries,
                                          absl::string_view folder,
                                          const FetchTreeOptions& options) {
  RETURN_IF_ERROR(CheckParallel(options.parallel));
  ASSIGN_OR_RETURN(const std::vector<::verity::TreeEntry> lib,
                   client::ToLibEntries(entries));
  // Entries from anywhere: the same rules as a fetched manifest's.
  RETURN_IF_ERROR(EncodeTreeManifest(lib).status());
  ASSIGN_OR_RETURN(const UniqueFd root, OpenAt(AT_FDCWD, std::string(folder),
                                               O_RDONLY | O_DIRECTORY));
  UniqueFd reuse_fd;
  ReuseSource reuse;
  if (!options.reuse_from.empty()) {
    absl::StatusOr<UniqueFd> opened =
        OpenAt(AT_FDCWD, options.reuse_from, O_RDONLY | O_DIRECTORY);
    if (opened.ok()) reuse_fd = *std::move(opened);
    reuse.fd = reuse_fd.get();
    reuse.known.reserve(options.reuse_entries.size());
    for (const TreeEntry& entry : options.reuse_entries) {
      if (entry.type == TreeEntryType::kFile) reuse.known[entry.path] = &entry;
    }
  }
  RETURN_IF_ERROR(MakeDirectoriesAndSymlinks(root.get(), lib));
  const std::vector<std::vector<size_t>> groups = GroupFiles(entries);
  WriteCounters counters;
  ASSIGN_OR_RETURN(const std::vector<char> reused,
                   LinkReused(reuse, root.get(), lib, entries, groups,
                              options.parallel, counters));
  const std::vector<std::vector<size_t>> calls =
      PlanCalls(entries, groups, reused);
  RETURN_IF_ERROR(ParallelFor(calls.size(), options.parallel, [&](size_t c) {
    return FetchCall(client, root.get(), lib, entries, groups, calls[c],
                     options.fetch, counters);
  }));
  RETURN_IF_ERROR(
      CopyWithinGroups(root.get(), lib, groups, options.parallel, counters));
  if (syncfs(root.get()) != 0) {
    return ErrnoStatus(errno, "syncfs", folder);
  }
  FetchTreeResult result;
  for (const std::vector<size_t>& group : groups) result.files += group.size();
  result.files_fetched = counters.fetched;
  result.files_reused = counters.reused;
  result.files_copied = counters.copied;
  result.bytes_fetched = counters.bytes;
  return result;
}

absl::StatusOr<FetchTreeResult> FetchTree(Client& client, const Digest& digest,
                                          absl::string_view folder,
                                          const FetchTreeOptions& options) {
  // "out/" is "out": the folder beside it is "out.verity-...".
  const std::string target(folder.size() > 1 ? absl::StripSuffix(folder, "/")
                                             : folder);
  ASSIGN_OR_RETURN(const bool exists, FolderExists(target));
  ASSIGN_OR_RETURN(const std::vector<TreeEntry> entries,
                   ReadTree(client, digest, options.fetch));
  ASSIGN_OR_RETURN(const std::string temp, MakeSiblingFolder(target));
  // Before the swap `temp` holds part of the new tree, after it the old one.
  auto remove_temp =
      absl::MakeCleanup([&temp] { RemoveRecursively(temp).IgnoreError(); });
  FetchTreeOptions write = options;
  if (write.reuse_from.empty() && exists) write.reuse_from = target;
  ASSIGN_OR_RETURN(const FetchTreeResult result,
                   WriteTree(client, entries, temp, write));
  RETURN_IF_ERROR(SwapIntoPlace(temp, target, exists));
  std::move(remove_temp).Cancel();
  RETURN_IF_ERROR(RemoveRecursively(temp));
  return result;
}

}  // namespace verity::sdk
