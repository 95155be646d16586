#include "client/mount/followed_fs.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"

namespace verity::mount {
namespace {

constexpr uint64_t kRoot = 1;
constexpr uint64_t kDataBase = uint64_t{1} << 32;  // + switches
constexpr int kSlotShift = 40;
constexpr uint64_t kInnerMask = (uint64_t{1} << kSlotShift) - 1;
constexpr char kData[] = "..data";

uint64_t SlotOf(uint64_t inode) { return inode >> kSlotShift; }
uint64_t InnerOf(uint64_t inode) { return inode & kInnerMask; }
uint64_t OuterOf(uint64_t slot, uint64_t inner) {
  return (slot << kSlotShift) | inner;
}

absl::Status NoInode(uint64_t inode) {
  return absl::NotFoundError(absl::StrCat("no inode ", inode));
}

}  // namespace

FollowedFs::FollowedFs(absl::Time mtime, uid_t uid, gid_t gid)
    : mtime_(mtime), uid_(uid), gid_(gid) {}

void FollowedFs::Show(const std::string& id, std::shared_ptr<TreeFs> tree) {
  std::vector<std::string> changed = {kData};
  {
    absl::MutexLock lock(&mu_);
    if (current_ != 0 && versions_[current_].id == id) return;
    const uint64_t slot = next_slot_++;
    std::vector<std::string> names = tree->TopNames();
    versions_[slot] = Version{id, std::move(tree), 0};
    const uint64_t hidden = previous_;
    previous_ = current_;
    current_ = slot;
    ++switches_;
    if (hidden != 0) {
      changed.push_back(absl::StrCat("..", versions_[hidden].id));
      DropIfUnused(hidden);
    }
    // Names gone and names new: the kernel forgets both (a new name may be
    // cached as absent).
    std::sort(names.begin(), names.end());
    std::set_symmetric_difference(top_names_.begin(), top_names_.end(),
                                  names.begin(), names.end(),
                                  std::back_inserter(changed));
    changed.push_back(absl::StrCat("..", id));
    // A link per name shown, a new inode for a new name; a name no longer
    // shown is dropped (the kernel forgets it with the rest).
    absl::flat_hash_map<std::string, uint64_t> links;
    for (const std::string& name : names) {
      const auto kept = links_.find(name);
      const uint64_t inode = kept != links_.end() ? kept->second : next_link_++;
      links.emplace(name, inode);
    }
    link_names_.clear();
    for (const auto& [name, inode] : links) link_names_.emplace(inode, name);
    links_ = std::move(links);
    top_names_ = std::move(names);
  }
  absl::MutexLock lock(&kernel_mu_);
  if (kernel_ == nullptr) return;
  for (const std::string& name : changed) kernel_->ForgetEntry(kRoot, name);
  kernel_->ForgetInode(kRoot);
}

std::string FollowedFs::current() const {
  absl::MutexLock lock(&mu_);
  return current_ == 0 ? "" : versions_.at(current_).id;
}

std::shared_ptr<TreeFs> FollowedFs::current_tree() const {
  absl::MutexLock lock(&mu_);
  return current_ == 0 ? nullptr : versions_.at(current_).fs;
}

size_t FollowedFs::links() const {
  absl::MutexLock lock(&mu_);
  return links_.size();
}

size_t FollowedFs::versions() const {
  absl::MutexLock lock(&mu_);
  return versions_.size();
}

std::shared_ptr<TreeFs> FollowedFs::TreeOf(uint64_t slot) const {
  absl::MutexLock lock(&mu_);
  auto it = versions_.find(slot);
  return it == versions_.end() ? nullptr : it->second.fs;
}

bool FollowedFs::Shown(uint64_t slot) const {
  return slot != 0 && (slot == current_ || slot == previous_);
}

void FollowedFs::DropIfUnused(uint64_t slot) {
  auto it = versions_.find(slot);
  if (it != versions_.end() && it->second.open == 0 && !Shown(slot)) {
    versions_.erase(it);
  }
}

FollowedFs::Own FollowedFs::OwnOf(uint64_t inode, std::string* name) const {
  if (inode == kRoot) return Own::kRoot;
  if (current_ != 0 && inode == kDataBase + switches_) return Own::kData;
  const auto link = link_names_.find(inode);
  if (link == link_names_.end()) return Own::kNone;
  *name = link->second;
  return Own::kLink;
}

struct stat FollowedFs::OwnAttr(Own own, uint64_t inode,
                                absl::string_view target) const {
  struct stat st = {};
  st.st_ino = inode;
  st.st_uid = uid_;
  st.st_gid = gid_;
  st.st_blksize = 4096;
  st.st_atim = st.st_mtim = st.st_ctim = absl::ToTimespec(mtime_);
  st.st_nlink = 1;
  if (own == Own::kRoot) {
    st.st_mode = S_IFDIR | 0755;
    st.st_nlink = 4;  // ".", "..", and up to two versions
  } else {
    st.st_mode = S_IFLNK | 0777;
    st.st_size = target.size();
  }
  return st;
}

absl::StatusOr<struct stat> FollowedFs::Attr(uint64_t inode) const {
  if (SlotOf(inode) != 0) {
    const std::shared_ptr<TreeFs> tree = TreeOf(SlotOf(inode));
    if (tree == nullptr) return NoInode(inode);
    ASSIGN_OR_RETURN(struct stat st, tree->Attr(InnerOf(inode)));
    st.st_ino = inode;
    return st;
  }
  absl::MutexLock lock(&mu_);
  std::string name;
  const Own own = OwnOf(inode, &name);
  if (own == Own::kNone) return NoInode(inode);
  return OwnAttr(own, inode, TargetOf(own, name));
}

absl::StatusOr<uint64_t> FollowedFs::Lookup(uint64_t parent,
                                            absl::string_view name) const {
  if (parent == kRoot) return LookupInRoot(name);
  const std::shared_ptr<TreeFs> tree = TreeOf(SlotOf(parent));
  if (tree == nullptr) return NoInode(parent);
  ASSIGN_OR_RETURN(const uint64_t inner, tree->Lookup(InnerOf(parent), name));
  return OuterOf(SlotOf(parent), inner);
}

absl::StatusOr<uint64_t> FollowedFs::LookupInRoot(
    absl::string_view name) const {
  absl::MutexLock lock(&mu_);
  if (current_ != 0 && name == kData) return kDataBase + switches_;
  if (absl::StartsWith(name, "..")) {
    for (const uint64_t slot : {current_, previous_}) {
      if (slot != 0 && name.substr(2) == versions_.at(slot).id) {
        return OuterOf(slot, TreeIndex::kRootInode);
      }
    }
  } else if (std::binary_search(top_names_.begin(), top_names_.end(), name)) {
    return links_.at(std::string(name));
  }
  return absl::NotFoundError(absl::StrCat("no entry '", name, "'"));
}

absl::StatusOr<Listing> FollowedFs::List(uint64_t inode) const {
  if (inode == kRoot) return RootListing();
  const uint64_t slot = SlotOf(inode);
  const std::shared_ptr<TreeFs> tree = TreeOf(slot);
  if (tree == nullptr) {
    if (slot != 0) return NoInode(inode);
    RETURN_IF_ERROR(Attr(inode).status());
    return absl::FailedPreconditionError("not a directory");
  }
  ASSIGN_OR_RETURN(Listing listing, tree->List(InnerOf(inode)));
  listing.parent = InnerOf(inode) == TreeIndex::kRootInode
                       ? kRoot
                       : OuterOf(slot, listing.parent);
  for (DirEntry& entry : listing.entries) {
    entry.inode = OuterOf(slot, entry.inode);
  }
  return listing;
}

Listing FollowedFs::RootListing() const {
  absl::MutexLock lock(&mu_);
  Listing listing;
  listing.parent = kRoot;
  if (current_ == 0) return listing;
  listing.entries.push_back(DirEntry{kData, kDataBase + switches_, S_IFLNK});
  for (const uint64_t slot : {current_, previous_}) {
    if (slot == 0) continue;
    listing.entries.push_back(
        DirEntry{absl::StrCat("..", versions_.at(slot).id),
                 OuterOf(slot, TreeIndex::kRootInode), S_IFDIR});
  }
  for (const std::string& name : top_names_) {
    listing.entries.push_back(DirEntry{name, links_.at(name), S_IFLNK});
  }
  return listing;
}

absl::StatusOr<std::string> FollowedFs::ReadLink(uint64_t inode) const {
  if (SlotOf(inode) != 0) {
    const std::shared_ptr<TreeFs> tree = TreeOf(SlotOf(inode));
    if (tree == nullptr) return NoInode(inode);
    return tree->ReadLink(InnerOf(inode));
  }
  absl::MutexLock lock(&mu_);
  std::string name;
  const Own own = OwnOf(inode, &name);
  if (own == Own::kNone) return NoInode(inode);
  if (own == Own::kRoot) return absl::InvalidArgumentError("not a symlink");
  return TargetOf(own, name);
}

std::string FollowedFs::TargetOf(Own own, absl::string_view link) const {
  if (own == Own::kData) return absl::StrCat("..", versions_.at(current_).id);
  if (own == Own::kLink) return absl::StrCat(kData, "/", link);
  return "";
}

absl::StatusOr<Buffer> FollowedFs::Read(uint64_t inode, uint64_t offset,
                                        uint64_t size, absl::Time asked) {
  const std::shared_ptr<TreeFs> tree = TreeOf(SlotOf(inode));
  if (tree == nullptr) {
    RETURN_IF_ERROR(Attr(inode).status());
    return absl::InvalidArgumentError("not a file");
  }
  return tree->Read(InnerOf(inode), offset, size, asked);
}

struct statvfs FollowedFs::StatFs() const {
  const std::shared_ptr<TreeFs> tree = current_tree();
  if (tree != nullptr) return tree->StatFs();
  struct statvfs st = {};
  st.f_bsize = st.f_frsize = 4096;
  st.f_namemax = 255;
  st.f_flag = ST_RDONLY | ST_NOSUID | ST_NODEV;
  return st;
}

void FollowedFs::Opened(uint64_t inode) {
  absl::MutexLock lock(&mu_);
  auto it = versions_.find(SlotOf(inode));
  if (it != versions_.end()) ++it->second.open;
}

void FollowedFs::Released(uint64_t inode) {
  absl::MutexLock lock(&mu_);
  auto it = versions_.find(SlotOf(inode));
  if (it == versions_.end() || it->second.open == 0) return;
  --it->second.open;
  DropIfUnused(SlotOf(inode));
}

void FollowedFs::SetKernelCache(KernelCache* kernel) {
  absl::MutexLock lock(&kernel_mu_);
  kernel_ = kernel;
}

}  // namespace verity::mount
