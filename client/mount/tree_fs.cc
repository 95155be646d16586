#include "client/mount/tree_fs.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/sdk/sdk_convert.h"
#include "lib/base/printable.h"
#include "lib/base/status_macros.h"

namespace verity::mount {
namespace {

// What statfs reports as the block size, and st_blksize: reads of this size
// are what the mount serves best.
constexpr uint64_t kBlockSize = 4096;

// What a prefetch fetches at once: few requests, none long enough to delay
// a stop much.
constexpr uint64_t kPrefetchBytes = uint64_t{8} << 20;

// A fetch's verified bytes in a Buffer: page-aligned, as the kernel copies
// from fastest and as the disk cache writes with O_DIRECT, and not zeroed
// first (every byte of a fetch that succeeds is written). Random access.
class BufferSink final : public sdk::Sink {
 public:
  explicit BufferSink(BufferPool& pool) : pool_(pool) {}

  bool SupportsRandomAccess() const override { return true; }
  absl::Status Start(uint64_t size) override {
    buffer_ = pool_.Take(size);
    return absl::OkStatus();
  }
  absl::Status Write(uint64_t offset, absl::Span<const uint8_t> data) override {
    if (offset > buffer_.size() || data.size() > buffer_.size() - offset) {
      return absl::InternalError(
          absl::StrCat("a write at ", offset, " of ", data.size(),
                       " bytes overruns the ", buffer_.size(), "-byte range"));
    }
    if (!data.empty())
      std::memcpy(buffer_.data() + offset, data.data(), data.size());
    return absl::OkStatus();
  }
  void Abort() override { buffer_ = Buffer(); }

  Buffer Release() { return std::move(buffer_); }

 private:
  BufferPool& pool_;
  Buffer buffer_;
};

}  // namespace

std::shared_ptr<BufferPool> NewReadBuffers() {
  BufferPoolOptions options;
  options.max_buffer_bytes = size_t{1} << 20;
  options.max_idle_bytes = size_t{16} << 20;
  return BufferPool::Create(options);
}

absl::StatusOr<std::unique_ptr<TreeFs>> TreeFs::Create(
    sdk::Client& client, const std::vector<sdk::TreeEntry>& entries,
    TreeFsOptions options) {
  ASSIGN_OR_RETURN(std::vector<TreeEntry> lib, client::ToLibEntries(entries));
  TreeManifest manifest;
  manifest.entries = std::move(lib);
  TreeIndex index = TreeIndex::Build(std::move(manifest));
  if (index.size() != entries.size() + 1) {
    return absl::InvalidArgumentError(
        "the tree lists an entry whose parent is not a directory before it");
  }
  return std::unique_ptr<TreeFs>(
      new TreeFs(client, std::move(index), entries, std::move(options)));
}

TreeFs::TreeFs(sdk::Client& client, TreeIndex index,
               std::vector<sdk::TreeEntry> entries, TreeFsOptions options)
    : client_(client),
      index_(std::move(index)),
      entries_(std::move(entries)),
      options_(std::move(options)),
      cache_(options_.cache.get()),
      failed_reads_(options_.failed_reads != nullptr
                        ? options_.failed_reads
                        : std::make_shared<std::atomic<uint64_t>>(0)),
      buffers_(options_.buffers != nullptr ? options_.buffers
                                           : NewReadBuffers()),
      sizes_(new std::atomic<uint8_t>[entries_.size()]()) {
  for (const sdk::TreeEntry& entry : entries_) file_bytes_ += entry.size;
}

absl::StatusOr<const TreeIndex::Node*> TreeFs::NodeOf(uint64_t inode) const {
  const TreeIndex::Node* node = index_.Find(inode);
  if (node == nullptr) {
    return absl::NotFoundError(absl::StrCat("no inode ", inode));
  }
  return node;
}

const sdk::TreeEntry* TreeFs::EntryOf(const TreeIndex::Node& node) const {
  if (node.entry == nullptr) return nullptr;
  return &entries_[node.entry - index_.manifest().entries.data()];
}

absl::StatusOr<struct stat> TreeFs::Attr(uint64_t inode) const {
  ASSIGN_OR_RETURN(const TreeIndex::Node* node, NodeOf(inode));
  struct stat st = {};
  st.st_ino = inode;
  st.st_uid = options_.uid;
  st.st_gid = options_.gid;
  st.st_blksize = kBlockSize;
  st.st_atim = st.st_mtim = st.st_ctim = absl::ToTimespec(options_.mtime);
  const sdk::TreeEntry* entry = EntryOf(*node);
  if (node->is_directory()) {
    st.st_mode = S_IFDIR | 0755;
    st.st_nlink = 2;
    for (uint64_t child : node->children) {
      st.st_nlink += index_.Find(child)->is_directory();
    }
  } else if (entry->type == sdk::TreeEntryType::kSymlink) {
    st.st_mode = S_IFLNK | 0777;
    st.st_nlink = 1;
    st.st_size = entry->target.size();
  } else {
    st.st_mode = S_IFREG | (entry->executable ? 0755 : 0644);
    st.st_nlink = 1;
    st.st_size = entry->size;
    st.st_blocks = (entry->size + 511) / 512;
  }
  return st;
}

absl::StatusOr<uint64_t> TreeFs::Lookup(uint64_t parent,
                                        absl::string_view name) const {
  RETURN_IF_ERROR(Directory(parent).status());
  const std::optional<uint64_t> inode = index_.Lookup(parent, name);
  if (!inode.has_value()) {
    return absl::NotFoundError(absl::StrCat("no entry '", name, "'"));
  }
  return *inode;
}

absl::StatusOr<const TreeIndex::Node*> TreeFs::Directory(uint64_t inode) const {
  ASSIGN_OR_RETURN(const TreeIndex::Node* node, NodeOf(inode));
  if (!node->is_directory()) {
    return absl::FailedPreconditionError(
        absl::StrCat(EntryOf(*node)->path, " is not a directory"));
  }
  return node;
}

absl::StatusOr<Listing> TreeFs::List(uint64_t inode) const {
  ASSIGN_OR_RETURN(const TreeIndex::Node* node, Directory(inode));
  Listing listing;
  listing.parent = node->parent;
  listing.entries.reserve(node->children.size());
  for (const uint64_t child : node->children) {
    const TreeIndex::Node& c = *index_.Find(child);
    const sdk::TreeEntry* entry = EntryOf(c);
    const mode_t type = c.is_directory()                              ? S_IFDIR
                        : entry->type == sdk::TreeEntryType::kSymlink ? S_IFLNK
                                                                      : S_IFREG;
    listing.entries.push_back(DirEntry{std::string(c.name), child, type});
  }
  return listing;
}

std::vector<std::string> TreeFs::TopNames() const {
  std::vector<std::string> names;
  for (const uint64_t child : index_.Find(TreeIndex::kRootInode)->children) {
    names.emplace_back(index_.Find(child)->name);
  }
  return names;
}

absl::StatusOr<std::string> TreeFs::ReadLink(uint64_t inode) const {
  ASSIGN_OR_RETURN(const TreeIndex::Node* node, NodeOf(inode));
  const sdk::TreeEntry* entry = EntryOf(*node);
  if (entry == nullptr || entry->type != sdk::TreeEntryType::kSymlink) {
    return absl::InvalidArgumentError("not a symlink");
  }
  return entry->target;
}

absl::StatusOr<Buffer> TreeFs::Read(uint64_t inode, uint64_t offset,
                                    uint64_t size, absl::Time asked) {
  const absl::Time deadline = asked + options_.read_timeout;
  ASSIGN_OR_RETURN(const TreeIndex::Node* node, NodeOf(inode));
  const sdk::TreeEntry* file = EntryOf(*node);
  if (file == nullptr || file->type != sdk::TreeEntryType::kFile) {
    return absl::InvalidArgumentError("not a file");
  }
  if (absl::Status sized = CheckSize(file - entries_.data(), deadline);
      !sized.ok()) {
    LogFailure(*file, offset, size, sized);
    return sized;
  }
  if (offset >= file->size || size == 0) return Buffer();
  const uint64_t length = std::min(size, file->size - offset);
  if (cache_ == nullptr) {
    return Fetch(*file, offset, length, options_.fetch.priority, deadline);
  }
  return cache_->Read(*file->digest, file->size, offset, length,
                      [this, file, deadline](uint64_t begin, uint64_t count) {
                        return Fetch(*file, begin, count,
                                     options_.fetch.priority, deadline);
                      });
}

absl::StatusOr<Buffer> TreeFs::Fetch(const sdk::TreeEntry& file,
                                     uint64_t offset, uint64_t length,
                                     std::optional<sdk::PriorityClass> priority,
                                     absl::Time deadline) {
  sdk::FetchOptions fetch = options_.fetch;
  fetch.priority = priority;
  fetch.deadline = deadline;
  fetch.offset = offset;
  fetch.length = length;
  BufferSink sink(*buffers_);
  const absl::Status fetched = client_.Fetch(*file.digest, sink, fetch);
  if (!fetched.ok()) {
    LogFailure(file, offset, length, fetched);
    return fetched;
  }
  return sink.Release();
}

absl::StatusOr<PrefetchStats> TreeFs::Prefetch(const std::atomic<bool>& stop) {
  if (cache_ == nullptr) {
    return absl::FailedPreconditionError("prefetch needs a cache");
  }
  PrefetchStats stats;
  uint64_t planned = 0;  // bytes of the files taken on so far
  for (const sdk::TreeEntry& file : entries_) {
    if (file.type != sdk::TreeEntryType::kFile) continue;
    planned += file.size;
    if (planned > cache_->max_bytes()) {
      stats.cache_full = true;
      break;
    }
    if (!CheckSize(&file - entries_.data(), absl::Now() + options_.read_timeout)
             .ok()) {
      ++stats.failed;
      continue;
    }
    absl::Status filled = absl::OkStatus();
    for (uint64_t offset = 0; offset < file.size && filled.ok();
         offset += kPrefetchBytes) {
      if (stop.load()) {
        stats.stopped = true;
        return stats;
      }
      const uint64_t length = std::min(kPrefetchBytes, file.size - offset);
      filled = cache_->Fill(*file.digest, file.size, offset, length,
                            [&](uint64_t begin, uint64_t count) {
                              absl::StatusOr<Buffer> bytes = Fetch(
                                  file, begin, count, sdk::PriorityClass::kIdle,
                                  absl::Now() + options_.read_timeout);
                              if (bytes.ok()) stats.bytes += bytes->size();
                              return bytes;
                            });
    }
    ++(filled.ok() ? stats.files : stats.failed);
  }
  return stats;
}

absl::Status TreeFs::CheckSize(size_t i, absl::Time deadline) {
  std::atomic<uint8_t>& known = sizes_[i];
  const sdk::TreeEntry& file = entries_[i];
  if (known.load() == 0) {
    // Two first reads may both ask: the answer is the same.
    ASSIGN_OR_RETURN(const sdk::BlobInfo info,
                     client_.Stat(*file.digest, deadline));
    known.store(info.size == file.size ? 1 : 2);
  }
  if (known.load() == 1) return absl::OkStatus();
  return absl::DataLossError(
      absl::StrCat("the manifest says ", file.size,
                   " bytes, and its blob has another size"));
}

void TreeFs::LogFailure(const sdk::TreeEntry& file, uint64_t offset,
                        uint64_t size, const absl::Status& status) {
  failed_reads_->fetch_add(1);
  PrintLine(options_.log, "verity mount",
            absl::StrCat("read of ", file.path, " [", offset, ", ",
                         offset + size, ") (", file.digest->ToString(),
                         ") failed, EIO: ", status.ToString()));
}

struct statvfs TreeFs::StatFs() const {
  struct statvfs st = {};
  st.f_bsize = st.f_frsize = kBlockSize;
  st.f_blocks = (file_bytes_ + kBlockSize - 1) / kBlockSize;
  st.f_files = index_.size();
  st.f_namemax = 255;
  st.f_flag = ST_RDONLY | ST_NOSUID | ST_NODEV;
  return st;
}

}  // namespace verity::mount
