// Names and the transparency log (server/log): a name write whose statement
// the log must hold first, and the proofs a Stat by name answers with.

#ifndef VERITYD_SERVER_RPC_LOGGED_NAMES_H_
#define VERITYD_SERVER_RPC_LOGGED_NAMES_H_

#include <cstdint>
#include <functional>
#include <optional>

#include "absl/status/statusor.h"
#include "lib/base/executor.h"
#include "proto/verity/v1/verity.pb.h"
#include "server/log/statement_log.h"
#include "server/rpc/service_context.h"
#include "server/store/store.h"

namespace verity::server {

using NameWritten = std::function<void(absl::StatusOr<v1::BlobInfo>)>;

// Points `write.name` at the stored blob `digest`, called on an I/O thread
// (it may write there). A statement goes into the server's log first
// (context->log; none: the name is written at once): checked against the
// name's current one as the store will check it (a statement certain to be
// refused is not logged), appended with the next checkpoint, then the name
// written with its log index on `on`. `done` runs once, inside the call if
// nothing is logged or the statement is refused, else on `on` (or the log's
// thread, with an error), with the blob's info and, for a logged statement,
// its log proof.
void WriteName(ServiceContext* context, Executor* on,
               const ParsedDigest& digest, NameWrite write, NameWritten done);

// Adds to `info` (a Stat by name's answer, from `named`) the proof of the
// name's logged statement against the newest checkpoint, consistent with
// `seen_size`. Nothing for a server without a log or a statement that
// was not logged.
absl::Status AddLogProof(const ServiceContext& context, const NamedBlob& named,
                         uint64_t seen_size, v1::BlobInfo* info);

// AddLogProof from memory only (StatementLog::TryProveNow): nullopt, with
// `info` unchanged, if the proof needs what is not in memory.
std::optional<absl::Status> TryAddLogProofNow(const ServiceContext& context,
                                              const NamedBlob& named,
                                              uint64_t seen_size,
                                              v1::BlobInfo* info);

v1::LogProof LogProofToProto(const StatementProof& proof);

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_LOGGED_NAMES_H_
