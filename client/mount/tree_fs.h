// A verified tree as a read-only file system, without FUSE: what `verity
// mount` answers (client/mount/fuse_mount.h carries it to the kernel). Its
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
  // A disk cache of verified slabs (verified_cache.h) under this folder, of
  // up to cache_bytes; none if empty.
  std::string cache_dir;
  uint64_t cache_bytes = uint64_t{1} << 30;
};

// What a prefetch did.
struct PrefetchStats {
  uint64_t files = 0;       // files whole in the cache at the end
  uint64_t bytes = 0;       // bytes fetched
  uint64_t failed = 0;      // files left out: a fetch failed (logged)
  bool stopped = false;     // asked to stop before the end
  bool cache_full = false;  // stopped as the cache would be full
};

class TreeFs {
 public:
  // The file system of `entries` (as sdk::ReadTree returns them: checked).
  static absl::StatusOr<std::unique_ptr<TreeFs>> Create(
      sdk::Client& client, const std::vector<sdk::TreeEntry>& entries,
      TreeFsOptions options);

  // NOT_FOUND for an unknown inode or name; FAILED_PRECONDITION for a lookup
  // in something that is not a directory.
  absl::StatusOr<struct stat> Attr(uint64_t inode) const;
  absl::StatusOr<uint64_t> Lookup(uint64_t parent,
                                  absl::string_view name) const;
  // A directory's node (its children by name); FAILED_PRECONDITION for
  // anything else.
  absl::StatusOr<const TreeIndex::Node*> Directory(uint64_t inode) const;
  // An inode's name in its directory ("" for the root or an unknown inode).
  absl::string_view NameOf(uint64_t inode) const;
  // A symlink's target; INVALID_ARGUMENT for anything else.
  absl::StatusOr<std::string> ReadLink(uint64_t inode) const;
  // Up to `size` bytes of the file `inode` from `offset` (fewer at its end,
  // none past it), every one verified. INVALID_ARGUMENT for a directory or a
  // symlink; the SDK's error otherwise (DATA_LOSS for a block that does not
  // verify, DEADLINE_EXCEEDED, UNAVAILABLE...).
  absl::StatusOr<std::string> Read(uint64_t inode, uint64_t offset,
                                   uint64_t size);
  struct statvfs StatFs() const;
  // Fetches the files, in the manifest's order, into the disk cache at IDLE
  // priority (the server serves every other read first) until all are in,
  // the cache would be full, or `stop` is set (checked between fetches of 8
  // MiB). FAILED_PRECONDITION without a cache.
  absl::StatusOr<PrefetchStats> Prefetch(const std::atomic<bool>& stop);

  uint64_t inodes() const { return index_.size(); }
  uint64_t failed_reads() const { return failed_reads_.load(); }
  // Null without a cache.
  const VerifiedCache* cache() const { return cache_.get(); }

 private:
  TreeFs(sdk::Client& client, TreeIndex index,
         std::vector<sdk::TreeEntry> entries, TreeFsOptions options,
         std::unique_ptr<VerifiedCache> cache);

  // NOT_FOUND for an inode the tree does not have.
  absl::StatusOr<const TreeIndex::Node*> NodeOf(uint64_t inode) const;
  const sdk::TreeEntry* EntryOf(const TreeIndex::Node& node) const;
  // One verified fetch of [offset, offset + length) of `file`, within the
  // read timeout; a failure is logged and counted.
  absl::StatusOr<std::string> Fetch(const sdk::TreeEntry& file, uint64_t offset,
                                    uint64_t length,
                                    std::optional<sdk::PriorityClass> priority);
  void LogFailure(const sdk::TreeEntry& file, uint64_t offset, uint64_t size,
                  const absl::Status& status);

  sdk::Client& client_;
  const TreeIndex index_;
  // The SDK's entries, in the manifest's order: the index's entries' twins.
  const std::vector<sdk::TreeEntry> entries_;
  const TreeFsOptions options_;
  const std::unique_ptr<VerifiedCache> cache_;  // null: none
  uint64_t file_bytes_ = 0;
  std::atomic<uint64_t> failed_reads_{0};
};

}  // namespace verity::mount

#endif  // VERITYD_CLIENT_MOUNT_TREE_FS_H_
