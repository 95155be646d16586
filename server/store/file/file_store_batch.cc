// Implements FileStore::PutBatch: many small blobs staged, made durable by one
// syncfs, renamed into place, and made durable by one more, where one Put
// each would take two each (or share them only with the Puts in flight).

#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "lib/base/status_macros.h"
#include "server/store/file/file_store.h"
#include "server/store/put_pipeline.h"

namespace verity::server {

std::vector<absl::StatusOr<PutResult>> FileStore::PutBatch(
    absl::Span<const BatchPut> blobs) {
  std::vector<absl::StatusOr<PutResult>> results(
      blobs.size(), absl::InternalError("not stored"));
  // Before the first write, as a Put's.
  const uint64_t mark = group_sync_->Mark();
  Batch batch;
  std::vector<std::unique_ptr<PutPipeline>> staged(blobs.size());
  // The same content twice in one batch is stored once.
  absl::flat_hash_map<std::string, size_t> first;
  for (size_t i = 0; i < blobs.size(); ++i) {
    const BatchPut& blob = blobs[i];
    if (!first.emplace(blob.digest.ToString(), i).second) continue;
    const absl::Status staging = [&]() -> absl::Status {
      ASSIGN_OR_RETURN(
          std::unique_ptr<PutPipeline> put,
          NewPut(blob.params, blob.digest, blob.data.size(), mark, &batch));
      RETURN_IF_ERROR(put->Append(AsBytes(blob.data)));
      PutCommit commit;
      commit.expected = blob.digest;
      RETURN_IF_ERROR(put->Stage(commit));
      staged[i] = std::move(put);
      return absl::OkStatus();
    }();
    if (!staging.ok()) results[i] = staging;
  }
  // Every record durable before any is renamed into place.
  const absl::Status synced = group_sync_->Sync(mark);
  for (size_t i = 0; i < blobs.size(); ++i) {
    if (staged[i] == nullptr) continue;
    if (!synced.ok()) {
      results[i] = synced;
      continue;
    }
    batch.index = i;
    results[i] = staged[i]->Publish();
  }
  SettleBatch(batch, mark, results);
  for (size_t i = 0; i < blobs.size(); ++i) {
    const size_t original = first.at(blobs[i].digest.ToString());
    if (original != i) results[i] = results[original];
  }
  return results;
}

void FileStore::SettleBatch(const Batch& batch, uint64_t mark,
                            std::vector<absl::StatusOr<PutResult>>& results) {
  if (batch.renamed.empty()) return;
  // The one commit point of the batch's new blobs.
  const absl::Status synced = group_sync_->Sync(mark);
  absl::MutexLock mutation(&mutation_mu_);
  for (const auto& [index, blob] : batch.renamed) {
    const absl::Status settled = Settle(blob, synced);
    if (!settled.ok()) {
      results[index] = settled;
      continue;
    }
    absl::ReaderMutexLock lock(&mu_);
    results[index] =
        PutResult{InfoOf(blob.digest_text, blobs_.at(blob.digest_text)), false};
  }
}

}  // namespace verity::server
