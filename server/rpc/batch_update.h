// BatchUpdate: many small blobs stored in one call (REAPI's
// BatchUpdateBlobs), each checked against its digest, made durable together
// by the store (Store::PutBatch).

#ifndef VERITYD_SERVER_RPC_BATCH_UPDATE_H_
#define VERITYD_SERVER_RPC_BATCH_UPDATE_H_

#include "absl/status/status.h"
#include "proto/verity/v1/verity.pb.h"
#include "server/rpc/service_context.h"

namespace verity::server {

// Answers one BatchUpdate: RESOURCE_EXHAUSTED beyond --max_streams or
// --max_puts (it counts as one Put) or while all calls together hold
// ServiceOptions::max_batch_update_bytes; INVALID_ARGUMENT for a request
// over its limits (request_checks.h); else one status per blob, as a Put of
// it with its digest would end (each blob found stored is marked used, as a
// Put's). Blocking: on the I/O executor.
absl::Status DoBatchUpdate(ServiceContext& context,
                           const v1::BatchUpdateRequest& request,
                           v1::BatchUpdateResponse* response);

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_BATCH_UPDATE_H_
