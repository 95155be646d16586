// The versions of a followed name (`verity mount --follow`) as one read-only
// file system, in the layout `verity sync` keeps in a folder (the kubelet's
// atomic writer, lib/manifest/versioned_folder.h):
//
//   /..data      -> ..<id>, a symlink that each new version replaces (the id
//                is VersionedFolder::IdOf of its digest: ..sha256-<hex>)
//   /..<id>/     a version's tree: the current one and the one before it
//   /<name>      -> ..data/<name>, for each top-level name of the current
//                version
//
// A program that opens /<name>/... resolves it through ..data into one
// version, old or new, never a mix; a file it holds open keeps the version it
// was opened in (an older version stays in memory, hidden, while any of its
// files or folders is open). Show() switches; the kernel is then told to
// forget the names that changed, so the next open sees the new version.
//
// Inodes: the root's own (the root, ..data, the links) below 2^40; a
// version's are its TreeFs inodes plus slot * 2^40, each version a new slot.

#ifndef VERITYD_CLIENT_MOUNT_FOLLOWED_FS_H_
#define VERITYD_CLIENT_MOUNT_FOLLOWED_FS_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/mount/read_only_fs.h"
#include "client/mount/tree_fs.h"

namespace verity::mount {

class FollowedFs final : public ReadOnlyFs {
 public:
  // The root's own inodes show `mtime`, `uid` and `gid`.
  FollowedFs(absl::Time mtime, uid_t uid, gid_t gid);

  // Makes `tree` the current version, named `id` (the folder ..<id>, as
  // VersionedFolder::IdOf names it); nothing if `id` is current already.
  void Show(const std::string& id, std::shared_ptr<TreeFs> tree)
      ABSL_LOCKS_EXCLUDED(mu_, kernel_mu_);
  // The current version's id, and its tree; empty and null before Show.
  std::string current() const ABSL_LOCKS_EXCLUDED(mu_);
  std::shared_ptr<TreeFs> current_tree() const ABSL_LOCKS_EXCLUDED(mu_);
  // Versions in memory: shown, or hidden with something open.
  size_t versions() const ABSL_LOCKS_EXCLUDED(mu_);
  // Top-level links held: the current version's names, no others.
  size_t links() const ABSL_LOCKS_EXCLUDED(mu_);

  // ReadOnlyFs.
  absl::StatusOr<struct stat> Attr(uint64_t inode) const override;
  absl::StatusOr<uint64_t> Lookup(uint64_t parent,
                                  absl::string_view name) const override;
  absl::StatusOr<Listing> List(uint64_t inode) const override;
  absl::StatusOr<std::string> ReadLink(uint64_t inode) const override;
  absl::StatusOr<Buffer> Read(uint64_t inode, uint64_t offset, uint64_t size,
                              absl::Time asked) override;
  struct statvfs StatFs() const override;
  void Opened(uint64_t inode) override ABSL_LOCKS_EXCLUDED(mu_);
  void Released(uint64_t inode) override ABSL_LOCKS_EXCLUDED(mu_);
  void SetKernelCache(KernelCache* kernel) override
      ABSL_LOCKS_EXCLUDED(kernel_mu_);

 private:
  struct Version {
    std::string id;
    std::shared_ptr<TreeFs> fs;
    uint64_t open = 0;  // files and folders of it open
  };
  // What an inode of the root's own is.
  enum class Own { kNone, kRoot, kData, kLink };

  // The version of slot `slot`, if it is in memory.
  std::shared_ptr<TreeFs> TreeOf(uint64_t slot) const ABSL_LOCKS_EXCLUDED(mu_);
  // Whether `inode` is the root's own, and which; a link's name in `name`.
  Own OwnOf(uint64_t inode, std::string* name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  struct stat OwnAttr(Own own, uint64_t inode, absl::string_view target) const;
  // The target of ..data or of the link `link`; "" for the root.
  std::string TargetOf(Own own, absl::string_view link) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<uint64_t> LookupInRoot(absl::string_view name) const
      ABSL_LOCKS_EXCLUDED(mu_);
  Listing RootListing() const ABSL_LOCKS_EXCLUDED(mu_);
  // Whether slot `slot` is shown: the current or the previous version.
  bool Shown(uint64_t slot) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops slot `slot` if it is neither shown nor open.
  void DropIfUnused(uint64_t slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const absl::Time mtime_;
  const uid_t uid_;
  const gid_t gid_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<uint64_t, Version> versions_ ABSL_GUARDED_BY(mu_);
  uint64_t current_ ABSL_GUARDED_BY(mu_) = 0;   // slot; 0: none yet
  uint64_t previous_ ABSL_GUARDED_BY(mu_) = 0;  // slot; 0: none
  uint64_t next_slot_ ABSL_GUARDED_BY(mu_) = 1;
  // Switches so far: ..data's inode is a new one at each.
  uint64_t switches_ ABSL_GUARDED_BY(mu_) = 0;
  // The current version's top-level names, sorted, and their links' inodes
  // both ways: a name keeps its inode while it is shown, a new name gets a
  // new one (never one given before).
  std::vector<std::string> top_names_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, uint64_t> links_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, std::string> link_names_ ABSL_GUARDED_BY(mu_);
  // From 2 (after the root), below ..data's inodes (2^32 and up).
  uint64_t next_link_ ABSL_GUARDED_BY(mu_) = 2;
  // Held while the kernel is told something, never with mu_: the kernel
  // may wait for a request that waits for mu_.
  absl::Mutex kernel_mu_ ABSL_ACQUIRED_AFTER(mu_);
  KernelCache* kernel_ ABSL_GUARDED_BY(kernel_mu_) = nullptr;
};

}  // namespace verity::mount

#endif  // VERITYD_CLIENT_MOUNT_FOLLOWED_FS_H_
