// Implements DoBatchUpdate.

#include "server/rpc/batch_update.h"

#include <optional>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/time/clock.h"
#include "lib/base/status_macros.h"
#include "server/rpc/request_checks.h"
#include "server/upkeep/tree_checks.h"

namespace verity::server {
namespace {

void SetStatus(const absl::Status& status, v1::BatchUpdateResponse::Blob* out) {
  out->set_code(static_cast<int>(status.code()));
  out->set_message(std::string(status.message()));
}

}  // namespace

absl::Status DoBatchUpdate(ServiceContext& context,
                           const v1::BatchUpdateRequest& request,
                           v1::BatchUpdateResponse* response) {
  RETURN_IF_ERROR(context.state.CheckServing());
  // A Put's admission: one of the streams, and of the Puts.
  const StreamSlot slot(&context);
  const StreamSlot put_slot(&context.state.active_puts,
                            context.options.max_puts, "Puts");
  RETURN_IF_ERROR(slot.status());
  RETURN_IF_ERROR(put_slot.status());
  ASSIGN_OR_RETURN(const uint64_t bytes, CheckBatchUpdateRequest(request));
  if (!context.batch_update_bytes->TryTake(bytes)) {
    return absl::ResourceExhaustedError(
        "the batches being stored hold all the server's room for them; "
        "retry later");
  }
  const absl::Cleanup give_back = [&] {
    context.batch_update_bytes->Give(bytes);
  };
  const absl::Time now = absl::Now();
  std::vector<BatchPut> puts;
  std::vector<size_t> from;  // puts[k] is blob from[k] of the request
  for (int i = 0; i < request.blobs_size(); ++i) {
    const v1::BatchUpdateRequest::Blob& blob = request.blobs(i);
    v1::BatchUpdateResponse::Blob* out = response->add_blobs();
    const absl::StatusOr<CheckedBatchBlob> checked = CheckBatchUpdateBlob(blob);
    if (!checked.ok()) {
      SetStatus(checked.status(), out);
      continue;
    }
    puts.push_back(BatchPut{checked->params, checked->digest, blob.data()});
    from.push_back(static_cast<size_t>(i));
  }
  const std::vector<absl::StatusOr<PutResult>> results =
      context.blobs->PutBatch(puts);
  for (size_t k = 0; k < puts.size(); ++k) {
    v1::BatchUpdateResponse::Blob* out = response->mutable_blobs(from[k]);
    absl::Status status = results[k].status();
    // A blob found stored, relied on again, as a Put's: marked after the
    // Put found it (a store's Put looks anyway; most of a batch is new), so
    // one deleted in between is retried rather than reported present.
    if (status.ok() && results[k]->already_present) {
      status = MarkFoundUsed(*context.store, puts[k].digest, now,
                             context.options.gc_grace);
    }
    SetStatus(status, out);
    if (!status.ok()) continue;
    out->set_already_present(results[k]->already_present);
    context.metrics->AddPutBytes(puts[k].data.size());
  }
  return absl::OkStatus();
}

}  // namespace verity::server
