// Implements the store's quota.

#include "server/store/quota_store.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/base/status_macros.h"

namespace verity::server {
namespace {

constexpr size_t kCountPage = 1000;

// A Put's writer that takes the quota as its content arrives (or all of it
// at once when the size is known) and gives back what did not become a new
// blob.
class QuotaWriter : public PutWriter {
 public:
  QuotaWriter(QuotaStore& quota, std::unique_ptr<PutWriter> inner,
              uint64_t reserved)
      : quota_(quota), inner_(std::move(inner)), reserved_(reserved) {}

  ~QuotaWriter() override { quota_.Release(reserved_); }

  absl::Status Append(absl::Span<const uint8_t> data) override {
    const uint64_t size = inner_->size() + data.size();
    if (size > reserved_) {
      RETURN_IF_ERROR(quota_.Reserve(size - reserved_));
      reserved_ = size;
    }
    return inner_->Append(data);
  }

  absl::StatusOr<PutResult> Commit(const PutCommit& commit) override {
    absl::StatusOr<PutResult> result = inner_->Commit(commit);
    if (result.ok()) {
      quota_.Stored(reserved_, !result->already_present);
      reserved_ = 0;
    }
    return result;
  }

  uint64_t size() const override { return inner_->size(); }
  Executor* executor() const override { return inner_->executor(); }

 private:
  QuotaStore& quota_;
  const std::unique_ptr<PutWriter> inner_;
  uint64_t reserved_;
};

absl::Time Minute(absl::Time time) {
  return absl::Floor(time - absl::UnixEpoch(), absl::Minutes(1)) +
         absl::UnixEpoch();
}

}  // namespace

QuotaStore::QuotaStore(std::unique_ptr<Store> inner, uint64_t max_bytes)
    : ForwardingStore(*inner),
      owned_(std::move(inner)),
      max_bytes_(max_bytes) {}

uint64_t QuotaStore::StoredBytes() const {
  if (const std::optional<StoreTotals> totals = inner().Totals()) {
    return totals->bytes;
  }
  uint64_t bytes = counted_;
  for (const Added& added : added_) bytes += added.bytes;
  return bytes;
}

uint64_t QuotaStore::Used() const {
  absl::MutexLock lock(&mu_);
  return StoredBytes() + reserved_;
}

absl::Status QuotaStore::Recount() {
  if (inner().Totals().has_value()) return absl::OkStatus();
  const absl::Time started = absl::Now();
  uint64_t bytes = 0;
  std::string after;
  while (true) {
    ASSIGN_OR_RETURN(const std::vector<BlobInfo> page,
                     inner().List(after, kCountPage));
    for (const BlobInfo& info : page) bytes += info.descriptor.data_size;
    if (page.size() < kCountPage) break;
    after = page.back().digest;
  }
  Counted(bytes, started);
  return absl::OkStatus();
}

void QuotaStore::Counted(uint64_t bytes, absl::Time started) {
  absl::MutexLock lock(&mu_);
  while (!added_.empty() && added_.front().last < started) {
    added_.pop_front();
  }
  counted_ = bytes;
}

absl::Status QuotaStore::Reserve(uint64_t bytes) {
  if (max_bytes_ == 0) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  const uint64_t used = StoredBytes() + reserved_;
  if (used > max_bytes_ || bytes > max_bytes_ - used) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the store is full: ", used, " of its ", max_bytes_,
        " bytes (--max_store_bytes) are used or being stored, and this Put "
        "needs ",
        bytes, " more"));
  }
  reserved_ += bytes;
  return absl::OkStatus();
}

void QuotaStore::Release(uint64_t bytes) {
  if (max_bytes_ == 0 || bytes == 0) return;
  absl::MutexLock lock(&mu_);
  reserved_ -= bytes;
}

void QuotaStore::Stored(uint64_t bytes, bool added) {
  if (max_bytes_ == 0) return;
  absl::MutexLock lock(&mu_);
  reserved_ -= bytes;
  if (!added || bytes == 0 || inner().Totals().has_value()) return;
  const absl::Time now = absl::Now();
  if (added_.empty() || added_.back().minute != Minute(now)) {
    added_.push_back(Added{Minute(now), now, 0});
  }
  added_.back().last = now;
  added_.back().bytes += bytes;
}

absl::StatusOr<std::unique_ptr<PutWriter>> QuotaStore::StartPut(
    const MerkleParams& params, const std::optional<ParsedDigest>& expected,
    std::optional<uint64_t> size) {
  if (max_bytes_ == 0) return inner().BeginPut(params, expected, size);
  // Content stored already takes no more (the Put keeps the stored copy).
  if (expected.has_value()) {
    ASSIGN_OR_RETURN(const bool stored, inner().Has(*expected));
    if (stored) return inner().BeginPut(params, expected, size);
  }
  const uint64_t reserved = size.value_or(0);
  RETURN_IF_ERROR(Reserve(reserved));
  absl::StatusOr<std::unique_ptr<PutWriter>> writer =
      inner().BeginPut(params, expected, size);
  if (!writer.ok()) {
    Release(reserved);
    return writer.status();
  }
  return std::make_unique<QuotaWriter>(*this, *std::move(writer), reserved);
}

std::vector<absl::StatusOr<PutResult>> QuotaStore::PutBatch(
    absl::Span<const BatchPut> blobs) {
  if (max_bytes_ == 0) return inner().PutBatch(blobs);
  std::vector<absl::StatusOr<PutResult>> results(
      blobs.size(), absl::InternalError("not stored"));
  std::vector<BatchPut> admitted;
  std::vector<size_t> from;        // admitted[k] is blobs[from[k]]
  std::vector<uint64_t> reserved;  // what admitted[k] took
  for (size_t i = 0; i < blobs.size(); ++i) {
    // Content stored already takes no more, as for a Put.
    const absl::StatusOr<bool> stored = inner().Has(blobs[i].digest);
    uint64_t bytes = 0;
    absl::Status status = stored.status();
    if (status.ok() && !*stored) {
      bytes = blobs[i].data.size();
      status = Reserve(bytes);
    }
    if (!status.ok()) {
      results[i] = status;
      continue;
    }
    admitted.push_back(blobs[i]);
    from.push_back(i);
    reserved.push_back(bytes);
  }
  std::vector<absl::StatusOr<PutResult>> stored = inner().PutBatch(admitted);
  for (size_t k = 0; k < admitted.size(); ++k) {
    if (stored[k].ok()) {
      Stored(reserved[k], !stored[k]->already_present);
    } else {
      Release(reserved[k]);
    }
    results[from[k]] = std::move(stored[k]);
  }
  return results;
}

}  // namespace verity::server
