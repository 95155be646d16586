// A verified tree as a read-only file system, without FUSE: what `verity
// mount` answers (client/mount/fuse_mount.h carries it to the kernel; with
// --follow, FollowedFs shows several). Its
// inodes, names, attributes and links come from the tree's manifest, checked
// before (sdk::ReadTree); its files' bytes from the SDK, each range verified
// against the file's digest before it is returned. A range that fails is
// logged (file, offset, length, digest, why) and counted, and returns an
// error; no byte of it is returned.
//
// Thread-safe: any number of threads may call it at once (the SDK client is
// shared). The client must outlive it.

#ifndef VERITYD_CLIENT_MOUNT_TREE_FS_H_
#define VERITYD_CLIENT_MOUNT_TREE_FS_H_

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/mount/read_only_fs.h"
#include "client/mount/verified_cache.h"
#include "lib/manifest/tree_index.h"
#include "verity/client.h"
#include "verity/tree.h"

namespace verity::mount {

struct TreeFsOptions {
  // Each read's fetch (priority); its range and deadline are set per read.
  sdk::FetchOptions fetch;
  // How long one read may take, retries included, before it fails
  // (DEADLINE_EXCEEDED, EIO to the reader): a lost server never hangs one.
  absl::Duration read_timeout = absl::Seconds(30);
  // The time every inode shows (mtime, ctime, atime): the tree's.
  absl::Time mtime = absl::UnixEpoch();
  uid_t uid = 0;
  gid_t gid = 0;
  std::FILE* log = stderr;  // where failed reads are logged
  // The disk cache of verified slabs (--cache-dir), shared by every version
  // of a followed tree; null for none.
  std::shared_ptr<VerifiedCache> cache;
  // Where failed reads are counted, shared likewise; null: a counter of its
  // own.
  std::shared_ptr<std::atomic<uint64_t>> failed_reads;
  // The memory reads are fetched into, shared likewise; null: a pool of its
  // own.
  std::shared_ptr<BufferPool> buffers;
};

// What a prefetch did.
// What a TreeFs reads into: a buffer per FUSE request in flight (1 MiB at
// most, the largest the kernel sends), up to 16 MiB kept idle for the next.
// One per mount: every version of a followed tree (TreeFsOptions::buffers)
// and the disk cache (VerifiedCache::Open) take from it.
std::shared_ptr<BufferPool> NewReadBuffers();

struct PrefetchStats {
  uint64_t files = 0;       // files whole in the cache at the end
  uint64_t bytes = 0;       // bytes fetched
  uint64_t failed = 0;      // files left out: a fetch failed (logged)
  bool stopped = false;     // asked to stop before the end
  bool cache_full = false;  // stopped as the cache would be full
};

class TreeFs final : public ReadOnlyFs {
 public:
  // The file system of `entries` (as sdk::ReadTree returns them: checked).
  static absl::StatusOr<std::unique_ptr<TreeFs>> Create(
      sdk::Client& client, const std::vector<sdk::TreeEntry>& entries,
      TreeFsOptions options);

  // ReadOnlyFs. Read fails with the SDK's error (DATA_LOSS for a block that
  // does not verify, DEADLINE_EXCEEDED, UNAVAILABLE...).
  absl::StatusOr<struct stat> Attr(uint64_t inode) const override;
  absl::StatusOr<uint64_t> Lookup(uint64_t parent,
                                  absl::string_view name) const override;
  absl::StatusOr<Listing> List(uint64_t inode) const override;
  absl::StatusOr<std::string> ReadLink(uint64_t inode) const override;
  absl::StatusOr<Buffer> Read(uint64_t inode, uint64_t offset, uint64_t size,
                              absl::Time asked) override;
  struct statvfs StatFs() const override;
  // Fetches the files, in the manifest's order, into the disk cache at IDLE
  // priority (the server serves every other read first) until all are in,
  // the cache would be full, or `stop` is set (checked between fetches of 8
  // MiB). FAILED_PRECONDITION without a cache.
  absl::StatusOr<PrefetchStats> Prefetch(const std::atomic<bool>& stop);

  uint64_t inodes() const { return index_.size(); }
  uint64_t failed_reads() const { return failed_reads_->load(); }
  // The names at the tree's top.
  std::vector<std::string> TopNames() const;

 private:
  TreeFs(sdk::Client& client, TreeIndex index,
         std::vector<sdk::TreeEntry> entries, TreeFsOptions options);

  // NOT_FOUND for an inode the tree does not have.
  absl::StatusOr<const TreeIndex::Node*> NodeOf(uint64_t inode) const;
  // A directory's node; FAILED_PRECONDITION for anything else.
  absl::StatusOr<const TreeIndex::Node*> Directory(uint64_t inode) const;
  const sdk::TreeEntry* EntryOf(const TreeIndex::Node& node) const;
  // One verified fetch of [offset, offset + length) of `file`, within the
  // read timeout; a failure is logged and counted.
  absl::StatusOr<Buffer> Fetch(const sdk::TreeEntry& file, uint64_t offset,
                               uint64_t length,
                               std::optional<sdk::PriorityClass> priority,
                               absl::Time deadline);
  void LogFailure(const sdk::TreeEntry& file, uint64_t offset, uint64_t size,
                  const absl::Status& status);
  // OK once the blob of entries_[i] is known to have the size its entry
  // says (the first read of it asks the server, whose answer is checked
  // against the digest); DATA_LOSS, logged, if it has another.
  absl::Status CheckSize(size_t i, absl::Time deadline);

  sdk::Client& client_;
  const TreeIndex index_;
  // The SDK's entries, in the manifest's order: the index's entries' twins.
  const std::vector<sdk::TreeEntry> entries_;
  const TreeFsOptions options_;
  VerifiedCache* const cache_;  // options_.cache's; null: none
  uint64_t file_bytes_ = 0;
  const std::shared_ptr<std::atomic<uint64_t>> failed_reads_;
  const std::shared_ptr<BufferPool> buffers_;
  // Per entry: 0 not known yet, 1 its blob has the entry's size, 2 not.
  const std::unique_ptr<std::atomic<uint8_t>[]> sizes_;
};

}  // namespace verity::mount

#endif  // VERITYD_CLIENT_MOUNT_TREE_FS_H_
