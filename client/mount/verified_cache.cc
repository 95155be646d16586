#include "client/mount/verified_cache.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/bytes.h"
#include "lib/base/status_macros.h"
#include "lib/tree/descriptor.h"

namespace verity::mount {
namespace {

constexpr uint64_t kSlab = VerifiedCache::kSlabBytes;

// "sha256-<hex>.<index>": a file name.
std::string SlabKey(const sdk::Digest& digest, uint64_t index) {
  return absl::StrCat(DigestFileName(digest.ToString()), ".", index);
}

// Copies the part of `bytes` (which begin at file offset `begin`) that lies
// in [offset, end) to its place in `out` (which holds the range from
// `offset`), if there is an `out`.
void CopyOverlap(absl::string_view bytes, uint64_t begin, uint64_t offset,
                 uint64_t end, uint8_t* out) {
  if (out == nullptr) return;
  const uint64_t from = std::max(offset, begin);
  const uint64_t to = std::min(end, begin + bytes.size());
  if (from < to) {
    std::memcpy(out + (from - offset), bytes.data() + (from - begin),
                to - from);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<VerifiedCache>> VerifiedCache::Open(
    const std::string& dir, uint64_t max_bytes,
    std::shared_ptr<BufferPool> buffers) {
  DiskCacheOptions options;
  options.dir = dir;
  options.max_bytes = max_bytes;
  options.check_reads = true;
  ASSIGN_OR_RETURN(std::unique_ptr<DiskCache> disk, DiskCache::Open(options));
  return std::unique_ptr<VerifiedCache>(
      new VerifiedCache(std::move(disk), max_bytes, std::move(buffers)));
}

absl::StatusOr<Buffer> VerifiedCache::Read(const sdk::Digest& digest,
                                           uint64_t size, uint64_t offset,
                                           uint64_t length, Fetch fetch) {
  Buffer out = buffers_->Take(length);
  if (length == 0) return out;
  RETURN_IF_ERROR(ReadSlabs(digest, size, offset / kSlab,
                            (offset + length - 1) / kSlab, offset,
                            offset + length, fetch, out.data()));
  return out;
}

absl::Status VerifiedCache::Fill(const sdk::Digest& digest, uint64_t size,
                                 uint64_t offset, uint64_t length,
                                 Fetch fetch) {
  if (length == 0) return absl::OkStatus();
  RETURN_IF_ERROR(ReadSlabs(digest, size, offset / kSlab,
                            (offset + length - 1) / kSlab, offset,
                            offset + length, fetch, nullptr));
  disk_->AwaitWrites();
  return absl::OkStatus();
}

absl::Status VerifiedCache::ReadSlabs(const sdk::Digest& digest, uint64_t size,
                                      uint64_t first, uint64_t last,
                                      uint64_t offset, uint64_t end,
                                      Fetch fetch, uint8_t* out) {
  uint64_t i = first;
  while (i <= last) {
    const std::string key = SlabKey(digest, i);
    bool cached = false;
    if (out == nullptr) {
      cached = disk_->Contains(key);
    } else {
      // Straight into its place: the slab's part in [offset, end).
      const uint64_t begin = i * kSlab;
      const uint64_t from = std::max(offset, begin);
      const uint64_t to = std::min({end, begin + kSlab, size});
      cached = disk_->Read(key, from - begin,
                           absl::MakeSpan(out + (from - offset), to - from));
    }
    if (cached) {
      if (out != nullptr) hits_.fetch_add(1, std::memory_order_relaxed);
      ++i;
      continue;
    }
    if (const std::shared_ptr<Flight> flight = FlightOf(key)) {
      joined_.fetch_add(1, std::memory_order_relaxed);
      flight->done.WaitForNotification();
      RETURN_IF_ERROR(flight->status);
      const absl::string_view slab =
          flight->bytes->view().substr(i * kSlab - flight->begin, kSlab);
      CopyOverlap(slab, i * kSlab, offset, end, out);
      ++i;
      continue;
    }
    // The run of missing slabs from here, fetched in one.
    const auto [flight, j] = Claim(digest, i, last);
    if (flight == nullptr) continue;  // cached or claimed since: look again
    RETURN_IF_ERROR(
        FetchSlabs(digest, size, i, j, offset, end, fetch, out, *flight));
    i = j + 1;
  }
  return absl::OkStatus();
}

std::shared_ptr<VerifiedCache::Flight> VerifiedCache::FlightOf(
    const std::string& key) {
  absl::MutexLock lock(&flights_mu_);
  const auto it = flights_.find(key);
  return it == flights_.end() ? nullptr : it->second;
}

std::pair<std::shared_ptr<VerifiedCache::Flight>, uint64_t>
VerifiedCache::Claim(const sdk::Digest& digest, uint64_t first, uint64_t last) {
  const auto free =
      [&](uint64_t index) ABSL_EXCLUSIVE_LOCKS_REQUIRED(flights_mu_) {
        const std::string key = SlabKey(digest, index);
        return !flights_.contains(key) && !disk_->Contains(key);
      };
  absl::MutexLock lock(&flights_mu_);
  if (!free(first)) return {nullptr, 0};
  auto flight = std::make_shared<Flight>();
  uint64_t j = first;
  flights_[SlabKey(digest, first)] = flight;
  while (j < last && free(j + 1)) flights_[SlabKey(digest, ++j)] = flight;
  return {std::move(flight), j};
}

absl::Status VerifiedCache::FetchSlabs(const sdk::Digest& digest, uint64_t size,
                                       uint64_t first, uint64_t last,
                                       uint64_t offset, uint64_t end,
                                       Fetch fetch, uint8_t* out,
                                       Flight& flight) {
  const uint64_t begin = first * kSlab;
  const uint64_t stop = std::min((last + 1) * kSlab, size);
  absl::StatusOr<Buffer> fetched = fetch(begin, stop - begin);
  flight.status = fetched.status();
  flight.begin = begin;
  if (fetched.ok()) {
    misses_.fetch_add(last - first + 1, std::memory_order_relaxed);
    // Each slab starts on a page of the fetched buffer: written with
    // O_DIRECT.
    flight.bytes = std::make_shared<const Buffer>(*std::move(fetched));
    for (uint64_t i = first; i <= last; ++i) {
      const absl::string_view slab =
          flight.bytes->view().substr((i - first) * kSlab, kSlab);
      disk_->Write(SlabKey(digest, i), AsBytes(slab), flight.bytes);
    }
  }
  {
    absl::MutexLock lock(&flights_mu_);
    for (uint64_t i = first; i <= last; ++i) {
      flights_.erase(SlabKey(digest, i));
    }
  }
  flight.done.Notify();
  RETURN_IF_ERROR(flight.status);
  CopyOverlap(flight.bytes->view(), begin, offset, end, out);
  return absl::OkStatus();
}

VerifiedCacheStats VerifiedCache::stats() const {
  VerifiedCacheStats stats;
  stats.hits = hits_.load(std::memory_order_relaxed);
  stats.misses = misses_.load(std::memory_order_relaxed);
  stats.bytes = disk_->bytes();
  stats.changed = disk_->changed_files();
  stats.failures = disk_->write_failures();
  stats.joined = joined_.load(std::memory_order_relaxed);
  return stats;
}

}  // namespace verity::mount
