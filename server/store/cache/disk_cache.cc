// Implements DiskCache.

#include "server/store/cache/disk_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"

namespace verity::server {
namespace {

LruCacheOptions FilesOptions(const DiskCacheOptions& options) {
  LruCacheOptions files;
  files.max_bytes = options.max_bytes;
  return files;
}

}  // namespace

DiskCache::File::~File() { (void)unlink(path.c_str()); }

absl::StatusOr<std::unique_ptr<DiskCache>> DiskCache::Open(
    const DiskCacheOptions& options) {
  if (options.dir.empty()) {
    return absl::InvalidArgumentError("the disk cache needs a directory");
  }
  std::string slab_dir = JoinPath(options.dir, "slabs");
  RETURN_IF_ERROR(RemoveRecursively(slab_dir));
  RETURN_IF_ERROR(MakeDirs(slab_dir));
  return std::unique_ptr<DiskCache>(
      new DiskCache(options, std::move(slab_dir)));
}

DiskCache::DiskCache(const DiskCacheOptions& options, std::string slab_dir)
    : options_(options),
      slab_dir_(std::move(slab_dir)),
      files_(FilesOptions(options)),
      writer_([this] { RunWriter(); }) {}

DiskCache::~DiskCache() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  writer_.join();
}

bool DiskCache::Contains(const SlabKey& key) {
  return files_.Find(key) != nullptr;
}

bool DiskCache::Read(const SlabKey& key, uint64_t offset,
                     absl::Span<uint8_t> out) {
  // Held while reading: an eviction meanwhile deletes the file after us.
  const std::shared_ptr<File> file = files_.Find(key);
  if (file == nullptr) return false;
  absl::StatusOr<UniqueFd> fd = OpenFile(file->path, O_RDONLY);
  absl::StatusOr<size_t> read =
      fd.ok() ? PreadUpTo(fd->get(), offset, out, file->path) : fd.status();
  if (read.ok() && *read == out.size()) return true;
  files_.Erase(key);
  return false;
}

void DiskCache::Write(std::shared_ptr<const Slab> slab) {
  absl::MutexLock lock(&mu_);
  if (pending_bytes_ + slab->bytes.size() > options_.max_pending_bytes) {
    write_failures_.fetch_add(1);
    return;
  }
  pending_bytes_ += slab->bytes.size();
  pending_.push_back(Pending{std::move(slab), forgets_});
}

void DiskCache::Forget(const SlabKey& key) {
  absl::MutexLock lock(&mu_);
  ++forgets_;
  files_.Erase(key);
}

void DiskCache::RunWriter() {
  while (true) {
    Pending pending;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](DiskCache* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
            return self->stopping_ || !self->pending_.empty();
          },
          this));
      if (stopping_) return;
      pending = std::move(pending_.front());
      pending_.pop_front();
      pending_bytes_ -= pending.slab->bytes.size();
    }
    WriteNow(*pending.slab, pending.forgets);
  }
}

void DiskCache::WriteNow(const Slab& slab, uint64_t forgets) {
  if (Contains(slab.key)) return;
  auto file = std::make_shared<File>();
  file->key = slab.key;
  file->path = JoinPath(slab_dir_, absl::StrCat(slab.key.ToString(), ".",
                                                next_file_.fetch_add(1)));
  file->size = slab.bytes.size();
  // Complete before it is in the index, so a read never sees it partial; a
  // crash leaves it unindexed, and Open() deletes it.
  absl::StatusOr<UniqueFd> fd =
      OpenFile(file->path, O_WRONLY | O_CREAT | O_EXCL, 0600);
  absl::Status written =
      fd.ok() ? WriteAll(fd->get(), slab.bytes.span(), file->path)
              : fd.status();
  if (!written.ok()) {
    write_failures_.fetch_add(1);
    return;  // ~File deletes what was written
  }
  absl::MutexLock lock(&mu_);
  // A slab queued before a Forget may hold the bytes that were forgotten.
  if (forgets_ == forgets) files_.Insert(std::move(file));
}

}  // namespace verity::server
