// What a read-only FUSE file system answers, without FUSE: the seam between
// client/mount/fuse_mount.h, which speaks to the kernel, and the trees it
// serves (TreeFs: one version; FollowedFs: the versions of a followed name).
// Inode 1 is the root.

#ifndef VERITYD_CLIENT_MOUNT_READ_ONLY_FS_H_
#define VERITYD_CLIENT_MOUNT_READ_ONLY_FS_H_

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/buffer_pool.h"

namespace verity::mount {

// One entry of a directory listing.
struct DirEntry {
  std::string name;
  uint64_t inode = 0;
  mode_t type = 0;  // S_IFDIR, S_IFREG or S_IFLNK
};

// A directory's listing: its parent, and its entries by name.
struct Listing {
  uint64_t parent = 0;
  std::vector<DirEntry> entries;
};

// What the kernel must drop from its caches when a file system changes (it
// caches names, attributes and listings for a long time): fuse_mount's, set
// with ReadOnlyFs::SetKernelCache once mounted.
class KernelCache {
 public:
  virtual ~KernelCache() = default;
  // The name `name` in the directory `parent` (and a negative lookup of it).
  virtual void ForgetEntry(uint64_t parent, absl::string_view name) = 0;
  // The attributes and cached listing of `inode`.
  virtual void ForgetInode(uint64_t inode) = 0;
};

// Thread-safe: the FUSE loop calls it from many threads at once.
class ReadOnlyFs {
 public:
  virtual ~ReadOnlyFs() = default;

  // NOT_FOUND for an unknown inode or name; FAILED_PRECONDITION for a lookup
  // or a listing of something that is not a directory.
  virtual absl::StatusOr<struct stat> Attr(uint64_t inode) const = 0;
  virtual absl::StatusOr<uint64_t> Lookup(uint64_t parent,
                                          absl::string_view name) const = 0;
  virtual absl::StatusOr<Listing> List(uint64_t inode) const = 0;
  // A symlink's target; INVALID_ARGUMENT for anything else.
  virtual absl::StatusOr<std::string> ReadLink(uint64_t inode) const = 0;
  // Up to `size` bytes of the file `inode` from `offset`, every one verified,
  // in page-aligned memory (the kernel copies from it faster than from a
  // misaligned std::string's: docs/tuning.md); INVALID_ARGUMENT for anything
  // but a file. `asked` is when the kernel asked: a read's time limit counts
  // from then, however long it waited for a thread.
  virtual absl::StatusOr<Buffer> Read(uint64_t inode, uint64_t offset,
                                      uint64_t size, absl::Time asked) = 0;
  virtual struct statvfs StatFs() const = 0;

  // A file or directory was opened, or released: what is open is kept.
  virtual void Opened(uint64_t /*inode*/) {}
  virtual void Released(uint64_t /*inode*/) {}
  // Set once mounted, and to null before the session ends; a file system
  // that never changes ignores it.
  virtual void SetKernelCache(KernelCache* /*kernel*/) {}
};

}  // namespace verity::mount

#endif  // VERITYD_CLIENT_MOUNT_READ_ONLY_FS_H_
