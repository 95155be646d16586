// Implements WriteTreeAt: one TreeWriter per tree, its files grouped by
// content, each group's first file reused or fetched, then copied to the
// rest of its group.

#include "client/sdk/tree_writer.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <map>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "client/sdk/busy_retry.h"
#include "client/sdk/sdk_convert.h"
#include "lib/base/bytes.h"
#include "lib/base/file_system.h"
#include "lib/base/file_util.h"
#include "lib/base/parallel_for.h"
#include "lib/base/status_macros.h"
#include "lib/manifest/local_tree.h"

namespace verity::sdk {
namespace {

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
    return PwriteAll(PosixFileSystem(), fd_, offset, data, entry_.path);
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

// A file at most this big is read with others in one BatchRead, of at most
// kBatchBytes: many small calls, each a few files, keep every thread busy
// where one call of the server's whole limit would leave some idle.
constexpr uint64_t kBatchFileBytes = kMaxBatchReadBlobBytes;
constexpr uint64_t kBatchBytes = uint64_t{1} << 20;

// Groups a thread takes from the reused folder one after the other: a run
// of neighbours, mostly in the same folders, so each folder is opened once.
constexpr size_t kReuseRun = 256;

class TreeWriter {
 public:
  TreeWriter(Client& client, const std::vector<TreeEntry>& entries,
             std::vector<::verity::TreeEntry> lib, int root_fd,
             const FetchTreeOptions& options)
      : client_(client),
        entries_(entries),
        lib_(std::move(lib)),
        root_fd_(root_fd),
        options_(options),
        modes_(ModesOf(options)),
        groups_(GroupFiles(entries)) {}

  absl::StatusOr<FetchTreeResult> Write(int reuse_fd) {
    RETURN_IF_ERROR(MakeDirectoriesAndSymlinks(root_fd_, lib_));
    ASSIGN_OR_RETURN(const std::vector<char> taken, ReuseFirsts(reuse_fd));
    const std::vector<std::vector<size_t>> calls = PlanCalls(taken);
    RETURN_IF_ERROR(ParallelFor(calls.size(), options_.parallel,
                                [&](size_t c) { return Fetch(calls[c]); }));
    RETURN_IF_ERROR(CopyWithinGroups());
    FetchTreeResult result;
    for (const std::vector<size_t>& group : groups_) {
      result.files += group.size();
    }
    result.files_fetched = fetched_;
    result.files_reused = reused_;
    result.files_copied = copied_;
    result.bytes_fetched = bytes_;
    return result;
  }

 private:
  // Which groups' first files were taken from the folder open as
  // `reuse_fd`, in place of a fetch.
  absl::StatusOr<std::vector<char>> ReuseFirsts(int reuse_fd) {
    std::vector<char> taken(groups_.size(), 0);
    if (reuse_fd < 0) return taken;
    absl::flat_hash_map<absl::string_view, const TreeEntry*> known;
    for (const TreeEntry& entry : options_.reuse_entries) {
      if (entry.type == TreeEntryType::kFile) known[entry.path] = &entry;
    }
    const size_t runs = (groups_.size() + kReuseRun - 1) / kReuseRun;
    RETURN_IF_ERROR(ParallelFor(runs, options_.parallel, [&](size_t run) {
      TreeFolders from(reuse_fd);
      TreeFolders to(root_fd_);
      const size_t end = std::min(groups_.size(), (run + 1) * kReuseRun);
      for (size_t g = run * kReuseRun; g < end; ++g) {
        ASSIGN_OR_RETURN(taken[g], Reuse(known, from, to, g));
      }
      return absl::OkStatus();
    }));
    return taken;
  }

  // Whether group `g`'s first file was taken from `from`. With entries
  // known to be there (`known`, non-empty), only a file of the same content
  // at the same path is, and it is not hashed again if adopted.
  absl::StatusOr<bool> Reuse(
      const absl::flat_hash_map<absl::string_view, const TreeEntry*>& known,
      TreeFolders& from, TreeFolders& to, size_t g) {
    const size_t first = groups_[g].front();
    const TreeEntry& entry = entries_[first];
    bool known_same = false;
    if (!known.empty()) {
      const auto it = known.find(entry.path);
      if (it == known.end() || it->second->digest != entry.digest ||
          it->second->executable != entry.executable) {
        return false;
      }
      known_same = true;
    }
    ASSIGN_OR_RETURN(const Reused reused,
                     ReuseFile(from, to, lib_[first], modes_, known_same));
    if (reused == Reused::kLinked) reused_++;
    if (reused == Reused::kCopied) copied_++;
    return reused != Reused::kNo;
  }

  // The groups (by index) each fetch reads, beyond those taken: one large
  // file alone, or small ones together.
  std::vector<std::vector<size_t>> PlanCalls(const std::vector<char>& taken) {
    std::vector<std::vector<size_t>> calls;
    std::vector<size_t> batch;
    uint64_t batch_bytes = 0;
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (taken[g]) continue;
      const uint64_t size = entries_[groups_[g].front()].size;
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

  // One call: a large file's fetch, or small files' BatchRead.
  absl::Status Fetch(const std::vector<size_t>& call) {
    const auto first_of = [&](size_t i) { return groups_[call[i]].front(); };
    if (entries_[first_of(0)].size > kBatchFileBytes) {
      return FetchFile(first_of(0));
    }
    std::vector<Digest> digests;
    for (size_t i = 0; i < call.size(); ++i) {
      digests.push_back(*entries_[first_of(i)].digest);
    }
    ASSIGN_OR_RETURN(const std::vector<absl::StatusOr<std::string>> blobs,
                     BatchReadWhileOthersProgress(digests));
    TreeFolders folders(root_fd_);
    for (size_t i = 0; i < call.size(); ++i) {
      const TreeEntry& entry = entries_[first_of(i)];
      if (!blobs[i].ok()) {
        return absl::Status(
            blobs[i].status().code(),
            absl::StrCat(entry.path, ": ", blobs[i].status().message()));
      }
      ASSIGN_OR_RETURN(UniqueFd fd,
                       CreateTreeFile(folders, lib_[first_of(i)], modes_));
      DescriptorSink sink(fd.get(), entry);
      RETURN_IF_ERROR(sink.Start(blobs[i]->size()));
      RETURN_IF_ERROR(sink.Write(0, AsBytes(*blobs[i])));
      RETURN_IF_ERROR(fd.Close(entry.path));
      Fetched(entry);
    }
    return absl::OkStatus();
  }

  // client_.BatchRead, called again while the server refuses it for its
  // BatchRead budget (RESOURCE_EXHAUSTED after the SDK's own retries) and
  // the tree's other calls are being served or fetched files meanwhile
  // (BusyRetry).
  absl::StatusOr<std::vector<absl::StatusOr<std::string>>>
  BatchReadWhileOthersProgress(const std::vector<Digest>& digests) {
    absl::StatusOr<std::vector<absl::StatusOr<std::string>>> blobs;
    busy_
        .Call([&] {
          blobs = client_.BatchRead(digests, options_.fetch);
          return blobs.status();
        })
        .IgnoreError();  // the last call's status is blobs'
    return blobs;
  }

  absl::Status FetchFile(size_t i) {
    const TreeEntry& entry = entries_[i];
    ASSIGN_OR_RETURN(UniqueFd fd, CreateTreeFile(root_fd_, lib_[i], modes_));
    DescriptorSink sink(fd.get(), entry);
    FetchOptions whole = options_.fetch;
    whole.offset = 0;
    whole.length.reset();
    RETURN_IF_ERROR(client_.Fetch(*entry.digest, sink, whole));
    RETURN_IF_ERROR(fd.Close(entry.path));
    Fetched(entry);
    return absl::OkStatus();
  }

  void Fetched(const TreeEntry& entry) {
    fetched_++;
    bytes_ += entry.size;
  }

  // Gives every file of each group the content of the group's first, each
  // copy hashed (CopyTreeFile).
  absl::Status CopyWithinGroups() {
    return ParallelFor(groups_.size(), options_.parallel, [&](size_t g) {
      const std::vector<size_t>& group = groups_[g];
      for (size_t i = 1; i < group.size(); ++i) {
        RETURN_IF_ERROR(CopyTreeFile(root_fd_, lib_[group.front()],
                                     lib_[group[i]], modes_));
        copied_++;
      }
      return absl::OkStatus();
    });
  }

  Client& client_;
  const std::vector<TreeEntry>& entries_;
  const std::vector<::verity::TreeEntry> lib_;  // entries_, in lib's types
  const int root_fd_;
  const FetchTreeOptions& options_;
  const TreeFileModes modes_;
  const std::vector<std::vector<size_t>> groups_;
  std::atomic<size_t> fetched_{0};
  BusyRetry busy_{fetched_};
  std::atomic<size_t> reused_{0};
  std::atomic<size_t> copied_{0};
  std::atomic<uint64_t> bytes_{0};
};

}  // namespace

TreeFileModes ModesOf(const FetchTreeOptions& options) {
  return TreeFileModes{options.read_only, !options.read_only};
}

absl::StatusOr<FetchTreeResult> WriteCheckedTree(
    Client& client, const std::vector<TreeEntry>& entries, int root_fd,
    absl::string_view root, int reuse_fd, const FetchTreeOptions& options) {
  ASSIGN_OR_RETURN(std::vector<::verity::TreeEntry> lib,
                   client::ToLibEntries(entries));
  TreeWriter writer(client, entries, std::move(lib), root_fd, options);
  ASSIGN_OR_RETURN(const FetchTreeResult result, writer.Write(reuse_fd));
  if (syncfs(root_fd) != 0) return ErrnoStatus(errno, "syncfs", root);
  return result;
}

}  // namespace verity::sdk
