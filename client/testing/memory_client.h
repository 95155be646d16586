// An sdk::Client over blobs in memory, with no channel: what tests of code
// handed a Client (trees, the mount, the sync) drive so that they link no
// gRPC and run under ThreadSanitizer too. It verifies nothing (it holds only
// what it was given): a bad block is a failure a test injects, as the real
// client reports it. Counts every call. Thread-safe.

#ifndef VERITYD_CLIENT_TESTING_MEMORY_CLIENT_H_
#define VERITYD_CLIENT_TESTING_MEMORY_CLIENT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "verity/client.h"

namespace verity::testing {

class MemoryClient final : public sdk::Client {
 public:
  // The calls a test may fail or count.
  enum class Call { kFetch, kStat, kStatName, kBatchRead, kPut, kFindMissing };

  // Stores `bytes` (fs-verity, SHA-256, 4 KiB blocks) and returns its digest.
  sdk::Digest Add(absl::string_view bytes);
  // Points `name` at `digest`, with `statement` as StatName's (a signed
  // name, as the real client reports one it verified), or none.
  void Point(absl::string_view name, const sdk::Digest& digest,
             std::optional<sdk::NameStatementInfo> statement = {});
  // The next `times` calls of `call` (every later one if negative) return
  // `status` (OK: answered again).
  void Fail(Call call, absl::Status status, int times = -1);
  // Every later call of `call` takes `delay` before it answers (or fails).
  void Delay(Call call, absl::Duration delay);
  // Every later read of `digest` (Fetch, BatchRead) returns `status`.
  void FailBlob(const sdk::Digest& digest, absl::Status status);
  uint64_t calls(Call call) const;

  absl::Status Fetch(const sdk::Digest& digest, sdk::Sink& sink,
                     const sdk::FetchOptions& options) override;
  absl::Status FetchName(absl::string_view name, sdk::Sink& sink,
                         const sdk::FetchOptions& options) override;
  absl::StatusOr<sdk::PutResult> PutFile(
      absl::string_view path, const sdk::PutOptions& options) override;
  absl::StatusOr<sdk::PutResult> PutStream(
      const sdk::ByteSource& source, const sdk::PutOptions& options) override;
  absl::StatusOr<sdk::BlobInfo> Stat(const sdk::Digest& digest,
                                     absl::Time deadline) override;
  using sdk::Client::Stat;
  absl::StatusOr<sdk::BlobInfo> StatName(absl::string_view name) override;
  absl::StatusOr<std::vector<sdk::NameVersionInfo>> History(
      absl::string_view name) override;
  absl::StatusOr<sdk::LogConsistencyAnswer> LogConsistency(
      uint64_t old_size, uint64_t new_size) override;
  absl::StatusOr<std::string> ReadLog(absl::string_view path) override;
  absl::StatusOr<sdk::BlobInfo> SetName(
      absl::string_view name, const sdk::Digest& digest,
      absl::string_view name_statement) override;
  absl::StatusOr<sdk::ListPage> List(absl::string_view page_token,
                                     uint32_t page_size) override;
  absl::StatusOr<std::vector<sdk::Digest>> FindMissing(
      const std::vector<sdk::Digest>& digests) override;
  absl::StatusOr<std::vector<absl::StatusOr<std::string>>> BatchRead(
      const std::vector<sdk::Digest>& digests,
      const sdk::FetchOptions& options) override;
  absl::StatusOr<std::vector<absl::Status>> BatchUpdate(
      const std::vector<sdk::BatchUpdateBlob>& blobs) override;
  absl::Status Delete(const sdk::Digest& digest, bool force) override;
  using sdk::Client::Delete;
  absl::Status DeleteName(absl::string_view name) override;
  absl::StatusOr<sdk::CollectResult> Collect(bool dry_run) override;
  absl::StatusOr<sdk::ScrubResult> Scrub(bool wait) override;
  sdk::ClientStats Stats() const override;

 private:
  struct Blob {
    std::string bytes;
    bool tree_manifest = false;
  };
  struct Name {
    sdk::Digest digest;
    std::optional<sdk::NameStatementInfo> statement;
  };

  // Counts `call` and returns the failure set for it.
  absl::Status Enter(Call call) ABSL_LOCKS_EXCLUDED(mu_);
  // The bytes of `digest`, or why not.
  absl::StatusOr<std::string> Bytes(const sdk::Digest& digest) const
      ABSL_LOCKS_EXCLUDED(mu_);
  sdk::BlobInfo InfoOf(const sdk::Digest& digest, const Blob& blob) const;
  absl::StatusOr<sdk::PutResult> Put(std::string bytes,
                                     const sdk::PutOptions& options)
      ABSL_LOCKS_EXCLUDED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, Blob> blobs_ ABSL_GUARDED_BY(mu_);  // by digest text
  std::map<std::string, Name> names_ ABSL_GUARDED_BY(mu_);
  struct Failure {
    absl::Status status;
    int left = -1;  // calls it fails yet; negative: all
  };
  std::map<Call, Failure> failures_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Status> blob_failures_ ABSL_GUARDED_BY(mu_);
  std::map<Call, uint64_t> calls_ ABSL_GUARDED_BY(mu_);
  std::map<Call, absl::Duration> delays_ ABSL_GUARDED_BY(mu_);
};

// Writes `files` (path to content; folders made as needed) into the new
// folder `folder`, stores it as a tree through `client` (ScanTree, PutTree)
// and returns the tree's digest.
absl::StatusOr<sdk::Digest> StoreTree(
    sdk::Client& client, const std::string& folder,
    const std::map<std::string, std::string>& files);

}  // namespace verity::testing

#endif  // VERITYD_CLIENT_TESTING_MEMORY_CLIENT_H_
