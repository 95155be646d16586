// Implements the name writes that wait for the log, and the log's proofs in
// a Stat by name.

#include "server/rpc/logged_names.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "lib/base/status_macros.h"

namespace verity::server {
namespace {

void AddHashes(const std::vector<tlog::LogHash>& hashes,
               google::protobuf::RepeatedPtrField<std::string>* out) {
  for (const tlog::LogHash& hash : hashes) {
    out->Add(tlog::LogHashToBytes(hash));
  }
}

// The store's check of `write` (its statement against the name's current
// one), run once before the statement is logged. The write runs it again
// as its compare-and-set.
absl::Status PrecheckName(const Store& store, const NameWrite& write,
                          const ParsedDigest& digest) {
  absl::StatusOr<NamedBlob> current = store.LookupName(write.name);
  if (!current.ok() && !absl::IsNotFound(current.status())) {
    return current.status();
  }
  return RunNameCheck(write, digest, current.ok() ? current->statement : "");
}

absl::StatusOr<v1::BlobInfo> WriteNow(ServiceContext* context,
                                      const ParsedDigest& digest,
                                      const NameWrite& write,
                                      const LogReceipt* receipt) {
  ASSIGN_OR_RETURN(const BlobInfo info, context->blobs->SetName(digest, write));
  v1::BlobInfo proto = BlobInfoToProto(info);
  if (receipt != nullptr) {
    // The name is written: a proof the tiles cannot give yet (a replica's
    // integration pending) is left out, and a Stat gives it later.
    absl::StatusOr<StatementProof> proof =
        context->log->Prove(receipt->index, write.statement, 0);
    if (proof.ok()) *proto.mutable_log_proof() = LogProofToProto(*proof);
  }
  return proto;
}

}  // namespace

void WriteName(ServiceContext* context, Executor* on,
               const ParsedDigest& digest, NameWrite write, NameWritten done) {
  if (context->log == nullptr || write.statement.empty()) {
    done(WriteNow(context, digest, write, nullptr));
    return;
  }
  if (absl::Status checked = PrecheckName(*context->store, write, digest);
      !checked.ok()) {
    done(checked);
    return;
  }
  std::string statement = write.statement;
  absl::Status queued = context->log->Append(
      std::move(statement), [context, on, digest, write = std::move(write),
                             done](absl::StatusOr<LogReceipt> receipt) mutable {
        if (!receipt.ok()) {
          done(receipt.status());
          return;
        }
        write.log_index = receipt->index;
        // Off the log's thread: the write fsyncs, or waits on the network.
        absl::Status submitted =
            on->Submit([context, digest, write = std::move(write), done,
                        receipt = *std::move(receipt)] {
              done(WriteNow(context, digest, write, &receipt));
            });
        if (!submitted.ok()) done(submitted);
      });
  if (!queued.ok()) done(queued);
}

absl::Status AddLogProof(const ServiceContext& context, const NamedBlob& named,
                         uint64_t seen_size, v1::BlobInfo* info) {
  if (context.log == nullptr || !named.log_index.has_value()) {
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(
      const StatementProof proof,
      context.log->Prove(*named.log_index, named.statement, seen_size));
  *info->mutable_log_proof() = LogProofToProto(proof);
  return absl::OkStatus();
}

std::optional<absl::Status> TryAddLogProofNow(const ServiceContext& context,
                                              const NamedBlob& named,
                                              uint64_t seen_size,
                                              v1::BlobInfo* info) {
  if (context.log == nullptr || !named.log_index.has_value()) {
    return absl::OkStatus();
  }
  std::optional<absl::StatusOr<StatementProof>> proof =
      context.log->TryProveNow(*named.log_index, named.statement, seen_size);
  if (!proof.has_value()) return std::nullopt;
  if (!proof->ok()) return proof->status();
  *info->mutable_log_proof() = LogProofToProto(**proof);
  return absl::OkStatus();
}

v1::LogProof LogProofToProto(const StatementProof& proof) {
  v1::LogProof out;
  out.set_checkpoint(proof.checkpoint.note);
  out.set_index(proof.index);
  AddHashes(proof.inclusion, out.mutable_inclusion());
  out.set_consistency_from(proof.consistency_from);
  AddHashes(proof.consistency, out.mutable_consistency());
  return out;
}

}  // namespace verity::server
