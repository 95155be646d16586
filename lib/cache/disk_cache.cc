// Implements DiskCache.

#include "lib/cache/disk_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/buffer_pool.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"

namespace verity {
namespace {

LruCacheOptions FilesOptions(const DiskCacheOptions& options) {
  LruCacheOptions files;
  files.max_bytes = options.max_bytes;
  return files;
}

std::string Sha256Of(absl::Span<const uint8_t> bytes) {
  return ComputeHash(HashAlgorithm::kSha256, bytes);
}

}  // namespace

DiskCache::File::~File() { (void)unlink(path.c_str()); }

absl::StatusOr<std::unique_ptr<DiskCache>> DiskCache::Open(
    const DiskCacheOptions& options) {
  if (options.dir.empty()) {
    return absl::InvalidArgumentError("the disk cache needs a directory");
  }
  RETURN_IF_ERROR(MakeDirs(options.dir));
  // What it holds is checked before use, but a directory others can write
  // into could still be filled by them, or its lock held.
  RETURN_IF_ERROR(CheckOwnDirectory(options.dir, /*absent_ok=*/false));
  const std::string lock_path = JoinPath(options.dir, "lock");
  ASSIGN_OR_RETURN(UniqueFd lock, OpenLockFile(lock_path));
  if (flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the cache directory ", options.dir, " is in use by another cache (",
          lock_path, " is locked)"));
    }
    return ErrnoStatus(errno, "flock", lock_path);
  }
  std::string slab_dir = JoinPath(options.dir, "slabs");
  RETURN_IF_ERROR(RemoveRecursively(slab_dir));
  RETURN_IF_ERROR(MakeDirs(slab_dir));
  return std::unique_ptr<DiskCache>(
      new DiskCache(options, std::move(lock), std::move(slab_dir)));
}

DiskCache::DiskCache(const DiskCacheOptions& options, UniqueFd lock,
                     std::string slab_dir)
    : options_(options),
      lock_(std::move(lock)),
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

bool DiskCache::Contains(absl::string_view key) {
  return files_.Find(std::string(key)) != nullptr;
}

bool DiskCache::Read(absl::string_view key, uint64_t offset,
                     absl::Span<uint8_t> out) {
  // Held while reading: an eviction meanwhile deletes the file after us.
  const std::shared_ptr<File> file = files_.Find(std::string(key));
  if (file == nullptr) return false;
  if (ReadFile(*file, offset, out)) return true;
  files_.Erase(file->key);
  return false;
}

bool DiskCache::ReadFile(const File& file, uint64_t offset,
                         absl::Span<uint8_t> out) {
  absl::StatusOr<UniqueFd> fd = OpenFile(file.path, O_RDONLY);
  if (!fd.ok()) return false;
  if (!options_.check_reads) {
    absl::StatusOr<size_t> read =
        PreadUpToDirect(fd->get(), offset, out, file.path);
    return read.ok() && *read == out.size();
  }
  if (offset > file.size || out.size() > file.size - offset) return false;
  if (out.empty()) return true;
  // The pieces that hold the range, each read whole (it was hashed whole).
  const uint64_t first = offset / kCheckedPieceBytes;
  const uint64_t last = (offset + out.size() - 1) / kCheckedPieceBytes;
  const uint64_t begin = first * kCheckedPieceBytes;
  const uint64_t end = std::min((last + 1) * kCheckedPieceBytes, file.size);
  Buffer pieces;
  absl::Span<uint8_t> into = out;
  if (begin != offset || end != offset + out.size()) {
    pieces = Buffer::Allocate(end - begin);
    into = absl::MakeSpan(pieces.data(), end - begin);
  }
  absl::StatusOr<size_t> read =
      PreadUpToDirect(fd->get(), begin, into, file.path);
  if (!read.ok() || *read != into.size()) return false;
  for (uint64_t i = first; i <= last; ++i) {
    if (Sha256Of(into.subspan((i - first) * kCheckedPieceBytes,
                              kCheckedPieceBytes)) != file.sha256[i]) {
      changed_files_.fetch_add(1);
      return false;
    }
  }
  if (into.data() != out.data()) {
    std::memcpy(out.data(), into.data() + (offset - begin), out.size());
  }
  return true;
}

void DiskCache::Write(std::string key, absl::Span<const uint8_t> bytes,
                      std::shared_ptr<const void> owner) {
  absl::MutexLock lock(&mu_);
  if (pending_bytes_ + bytes.size() > options_.max_pending_bytes) {
    write_failures_.fetch_add(1);
    return;
  }
  pending_bytes_ += bytes.size();
  ++queued_;
  pending_.push_back(
      Pending{std::move(key), bytes, std::move(owner), forgets_});
}

void DiskCache::Forget(absl::string_view key) {
  absl::MutexLock lock(&mu_);
  ++forgets_;
  files_.Erase(std::string(key));
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
      pending_bytes_ -= pending.bytes.size();
    }
    WriteNow(pending);
    absl::MutexLock lock(&mu_);
    ++done_;
  }
}

void DiskCache::AwaitWrites() {
  struct Target {
    DiskCache* cache;
    uint64_t done;
  };
  absl::MutexLock lock(&mu_);
  Target target{this, queued_};
  mu_.Await(absl::Condition(
      +[](Target* t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(t->cache->mu_) {
        return t->cache->stopping_ || t->cache->done_ >= t->done;
      },
      &target));
}

void DiskCache::WriteNow(const Pending& pending) {
  if (Contains(pending.key)) return;
  auto file = std::make_shared<File>();
  file->key = pending.key;
  file->path = JoinPath(
      slab_dir_, absl::StrCat(pending.key, ".", next_file_.fetch_add(1)));
  file->size = pending.bytes.size();
  if (options_.check_reads) {
    for (uint64_t at = 0; at < pending.bytes.size(); at += kCheckedPieceBytes) {
      file->sha256.push_back(
          Sha256Of(pending.bytes.subspan(at, kCheckedPieceBytes)));
    }
  }
  // Complete before it is in the index, so a read never sees it partial; a
  // crash leaves it unindexed, and Open() deletes it.
  absl::StatusOr<UniqueFd> fd =
      OpenFile(file->path, O_WRONLY | O_CREAT | O_EXCL, 0600);
  absl::Status written =
      fd.ok() ? WriteNewFileDirect(fd->get(), pending.bytes, file->path)
              : fd.status();
  if (!written.ok()) {
    write_failures_.fetch_add(1);
    return;  // ~File deletes what was written
  }
  absl::MutexLock lock(&mu_);
  // An entry queued before a Forget may hold the bytes that were forgotten.
  if (forgets_ == pending.forgets) files_.Insert(std::move(file));
}

}  // namespace verity
