// A Store that hands every call to another: the base of a store that wraps
// one and changes a few of its calls (the slab cache in front of a remote
// store, a test's hooks), overriding only those.

#ifndef VERITYD_SERVER_STORE_FORWARDING_STORE_H_
#define VERITYD_SERVER_STORE_FORWARDING_STORE_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "server/store/store.h"

namespace verity::server {

// Thread-safe, as the store it wraps, which must outlive it.
class ForwardingStore : public Store {
 public:
  absl::StatusOr<std::shared_ptr<const Blob>> OpenBlob(
      const ParsedDigest& digest) const override {
    return inner_.OpenBlob(digest);
  }
  absl::StatusOr<NamedBlob> LookupName(absl::string_view name) const override {
    return inner_.LookupName(name);
  }
  absl::StatusOr<BlobInfo> SetName(const ParsedDigest& digest,
                                   const NameWrite& write) override {
    return inner_.SetName(digest, write);
  }
  absl::StatusOr<BlobInfo> Stat(const ParsedDigest& digest) const override {
    return inner_.Stat(digest);
  }
  absl::StatusOr<NameHistory> History(absl::string_view name) const override {
    return inner_.History(name);
  }
  absl::StatusOr<NamePage> ListNames(absl::string_view after,
                                     size_t limit) const override {
    return inner_.ListNames(after, limit);
  }
  absl::StatusOr<uint64_t> DataSize(const ParsedDigest& digest) const override {
    return inner_.DataSize(digest);
  }
  absl::StatusOr<bool> Has(const ParsedDigest& digest) const override {
    return inner_.Has(digest);
  }
  absl::StatusOr<std::vector<BlobInfo>> List(absl::string_view after,
                                             size_t limit) const override {
    return inner_.List(after, limit);
  }
  absl::StatusOr<std::vector<StoredBlob>> ListStored(
      absl::string_view after, size_t limit) const override {
    return inner_.ListStored(after, limit);
  }
  absl::StatusOr<std::vector<ParsedDigest>> ListQuarantined(
      absl::string_view after, size_t limit) const override {
    return inner_.ListQuarantined(after, limit);
  }
  absl::Status DeleteBlob(const ParsedDigest& digest) override {
    return inner_.DeleteBlob(digest);
  }
  absl::Status DeleteName(absl::string_view name) override {
    return inner_.DeleteName(name);
  }
  absl::Status Quarantine(const ParsedDigest& digest,
                          absl::string_view reason) override {
    return inner_.Quarantine(digest, reason);
  }
  absl::StatusOr<absl::Time> LastUsed(
      const ParsedDigest& digest) const override {
    return inner_.LastUsed(digest);
  }
  absl::StatusOr<std::vector<absl::Time>> LastUsedOf(
      absl::Span<const ParsedDigest> blobs) const override {
    return inner_.LastUsedOf(blobs);
  }
  absl::StatusOr<absl::Time> MarkUsed(
      const ParsedDigest& digest, absl::Time now,
      absl::Duration refresh_after) const override {
    return inner_.MarkUsed(digest, now, refresh_after);
  }
  absl::StatusOr<SizedUse> MarkUsedSized(
      const ParsedDigest& digest, absl::Time now,
      absl::Duration refresh_after) const override {
    return inner_.MarkUsedSized(digest, now, refresh_after);
  }
  absl::StatusOr<std::vector<ParsedDigest>> DeleteUnusedSince(
      absl::Span<const ParsedDigest> blobs, absl::Time cutoff) override {
    return inner_.DeleteUnusedSince(blobs, cutoff);
  }
  absl::StatusOr<LeftoverPage> SweepLeftovers(absl::string_view after,
                                              absl::Time cutoff,
                                              bool dry_run) override {
    return inner_.SweepLeftovers(after, cutoff, dry_run);
  }
  absl::StatusOr<std::optional<SharedRecord>> ReadRecord(
      absl::string_view key) const override {
    return inner_.ReadRecord(key);
  }
  absl::StatusOr<SharedRecord> WriteRecord(
      absl::string_view key, absl::string_view body,
      const std::optional<std::string>& expected) override {
    return inner_.WriteRecord(key, body, expected);
  }
  absl::StatusOr<std::string> ReadLogObject(
      absl::string_view path) const override {
    return inner_.ReadLogObject(path);
  }
  absl::Status WriteLogObject(absl::string_view path,
                              absl::string_view bytes) override {
    return inner_.WriteLogObject(path, bytes);
  }
  absl::Status DeleteLogObject(absl::string_view path) override {
    return inner_.DeleteLogObject(path);
  }
  absl::StatusOr<tlog::LogObjectPage> ListLogObjects(
      absl::string_view folder, absl::string_view after) const override {
    return inner_.ListLogObjects(folder, after);
  }
  std::optional<StoreTotals> Totals() const override { return inner_.Totals(); }
  std::vector<absl::StatusOr<PutResult>> PutBatch(
      absl::Span<const BatchPut> blobs) override {
    return inner_.PutBatch(blobs);
  }
  bool IsLocal() const override { return inner_.IsLocal(); }
  absl::Status CheckHealth() const override { return inner_.CheckHealth(); }
  void Log(absl::string_view message) const override { inner_.Log(message); }

 protected:
  explicit ForwardingStore(Store& inner) : inner_(inner) {}

  Store& inner() const { return inner_; }

 private:
  absl::StatusOr<std::unique_ptr<PutWriter>> StartPut(
      const MerkleParams& params, const std::optional<ParsedDigest>& expected,
      std::optional<uint64_t> size) override {
    return inner_.BeginPut(params, expected, size);
  }

  Store& inner_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_FORWARDING_STORE_H_
