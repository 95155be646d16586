// Implements VerityService. Stat and List of a local store touch only its
// in-memory index, so they answer on the callback thread (a Stat by name
// with a log proof too, when the log's tiles it needs are cached); those of
// a remote store wait on the network, and Delete renames and fsyncs (or
// waits on the network), so they run on the I/O executor.

#include "server/rpc/verity_service.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/base/status_macros.h"
#include "server/rpc/batch_read_reactor.h"
#include "server/rpc/batch_update.h"
#include "server/rpc/call_admission.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/logged_names.h"
#include "server/rpc/put_reactor.h"
#include "server/rpc/read_reactor.h"
#include "server/rpc/request_checks.h"
#include "server/rpc/small_read_reactor.h"
#include "server/upkeep/roots.h"
#include "server/upkeep/tree_checks.h"

namespace verity::server {
namespace {

using Finish = std::function<void(const absl::Status&)>;

// Answers a unary call that needs `role` with what `work` passes to the
// finish it is given, once: on the callback thread, or on `on` if it is not
// null (the call, and so its request and response, lives until the reactor
// finishes, which `work` may leave to another thread).
template <typename Work>
grpc::ServerUnaryReactor* AnswerLater(ServiceContext* context,
                                      grpc::CallbackServerContext* call,
                                      RpcMethod method, Role role, Executor* on,
                                      Work work) {
  grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
  auto timer = std::make_shared<CallTimer>(context->metrics.get(), method);
  Finish finish = [reactor, timer](const absl::Status& status) {
    timer->set_code(status.code());
    reactor->Finish(ToGrpcStatus(status));
  };
  if (absl::Status admitted =
          AdmitCall(context->gate, *call, role, RpcMethodName(method));
      !admitted.ok()) {
    finish(admitted);
    return reactor;
  }
  if (on == nullptr) {
    work(finish);
    return reactor;
  }
  absl::Status queued =
      on->Submit([finish, work = std::move(work)]() mutable { work(finish); });
  // A refused task was dropped unrun: answer with why.
  if (!queued.ok()) finish(queued);
  return reactor;
}

// Answers with what `now` returns on the callback thread; or, if it returns
// nullopt (what it needs is not in memory, and it did nothing that waits),
// with what `work` returns on `later`. RocksDB's kBlockCacheTier read, then
// the read that may wait.
template <typename Now, typename Work>
grpc::ServerUnaryReactor* AnswerNowOrLater(ServiceContext* context,
                                           grpc::CallbackServerContext* call,
                                           RpcMethod method, Role role,
                                           Executor* later, Now now,
                                           Work work) {
  return AnswerLater(
      context, call, method, role, /*on=*/nullptr,
      [later, now = std::move(now),
       work = std::move(work)](const Finish& finish) mutable {
        if (std::optional<absl::Status> status = now()) return finish(*status);
        absl::Status queued = later->Submit(
            [finish, work = std::move(work)]() mutable { finish(work()); });
        if (!queued.ok()) finish(queued);
      });
}

// AnswerLater for work that answers with what it returns.
template <typename Work>
grpc::ServerUnaryReactor* Answer(ServiceContext* context,
                                 grpc::CallbackServerContext* call,
                                 RpcMethod method, Role role, Executor* on,
                                 Work work) {
  return AnswerLater(context, call, method, role, on,
                     [work = std::move(work)](const Finish& finish) mutable {
                       finish(work());
                     });
}

template <typename Request>
absl::StatusOr<NamedBlob> Resolve(const ServiceContext& context,
                                  const Request& request) {
  RETURN_IF_ERROR(context.state.CheckServing());
  ASSIGN_OR_RETURN(const BlobSelector blob,
                   CheckBlobSelector(request.digest(), request.name(),
                                     request.blob_case() == Request::kName));
  return ResolveBlob(*context.store, blob);
}

// The blob a Stat asks for, its info in `response`; no log proof yet.
absl::StatusOr<NamedBlob> StatInto(const ServiceContext& context,
                                   const v1::StatRequest& request,
                                   v1::BlobInfo* response) {
  ASSIGN_OR_RETURN(NamedBlob blob, Resolve(context, request));
  ASSIGN_OR_RETURN(BlobInfo info, context.store->Stat(blob.digest));
  // Empty unless by name: the statement belongs to the name, not the blob.
  info.name_statement = blob.statement;
  *response = BlobInfoToProto(info);
  return blob;
}

absl::Status DoStat(const ServiceContext& context,
                    const v1::StatRequest& request, v1::BlobInfo* response) {
  ASSIGN_OR_RETURN(const NamedBlob blob, StatInto(context, request, response));
  return AddLogProof(context, blob, request.log_size_seen(), response);
}

// DoStat from memory (a local store's index, the log's cached tiles):
// nullopt if the log proof needs a tile that is not cached.
std::optional<absl::Status> TryStatNow(const ServiceContext& context,
                                       const v1::StatRequest& request,
                                       v1::BlobInfo* response) {
  absl::StatusOr<NamedBlob> blob = StatInto(context, request, response);
  if (!blob.ok()) return blob.status();
  return TryAddLogProofNow(context, *blob, request.log_size_seen(), response);
}

absl::Status DoList(const ServiceContext& context,
                    const v1::ListRequest& request,
                    v1::ListResponse* response) {
  RETURN_IF_ERROR(context.state.CheckServing());
  const size_t page_size = ListPageSize(request);
  // The page token is the last digest of the previous page: stable under
  // concurrent puts.
  ASSIGN_OR_RETURN(std::vector<BlobInfo> blobs,
                   context.store->List(request.page_token(), page_size + 1));
  const bool more = blobs.size() > page_size;
  if (more) blobs.pop_back();
  for (const BlobInfo& info : blobs) {
    *response->add_blobs() = BlobInfoToProto(info);
  }
  if (more) response->set_next_page_token(blobs.back().digest);
  return absl::OkStatus();
}

absl::Status DoDelete(ServiceContext* context,
                      const v1::DeleteRequest& request) {
  ASSIGN_OR_RETURN(NamedBlob blob, Resolve(*context, request));
  if (request.blob_case() == v1::DeleteRequest::kName) {
    return context->blobs->DeleteName(request.name());
  }
  if (!request.force()) {
    // The roots are read whole each time: rm is rare, and a mark kept
    // between calls would miss what other replicas named since.
    ASSIGN_OR_RETURN(const ReachableBlobs reached,
                     MarkReachable(*context->store));
    if (const RootPath* path = reached.Find(blob.digest); path != nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat(blob.digest.ToString(), " is reached from ",
                       DescribeRootPath(*path), "; --force deletes it anyway"));
    }
  }
  return context->blobs->DeleteBlob(blob.digest);
}

// Everything a SetName checks before the name is written (and its
// statement logged).
absl::StatusOr<NameWrite> PrepareSetName(ServiceContext* context,
                                         const CheckedSetName& checked) {
  RETURN_IF_ERROR(context->state.CheckServing());
  // What the blob is, for the statement's kind to match (a statement's
  // check needs no more than its parse; the store checks the rest).
  absl::StatusOr<BlobInfo> blob = context->store->Stat(checked.digest);
  if (absl::IsDataLoss(blob.status())) {  // quarantined: not served
    return absl::NotFoundError(absl::StrCat("cannot name ",
                                            checked.digest.ToString(), ": ",
                                            blob.status().message()));
  }
  RETURN_IF_ERROR(blob.status());
  const NameKind kind = blob->tree_manifest ? NameKind::kTree : NameKind::kFile;
  if (blob->tree_manifest) {
    // A tree named again (an older release, by digest) must still have its
    // files, as a tree Put checks: garbage collection may have taken them.
    ASSIGN_OR_RETURN(const std::optional<std::string> manifest,
                     ReadStoredTree(*context->store, checked.digest));
    if (manifest.has_value()) {
      RETURN_IF_ERROR(CheckStoredTree(*context->store, *manifest,
                                      context->lookups.get(), absl::Now(),
                                      context->options.gc_grace));
    }
  }
  ASSIGN_OR_RETURN(NameWrite write,
                   context->names->Prepare(checked.name, checked.name_statement,
                                           checked.digest, kind, absl::Now()));
  RETURN_IF_ERROR(MarkStoredUsed(*context->store, checked.digest,
                                 /*becomes_root=*/true, absl::Now(),
                                 context->options.gc_grace));
  return write;
}

void DoSetName(ServiceContext* context, const v1::SetNameRequest& request,
               v1::BlobInfo* response, const Finish& finish) {
  absl::StatusOr<CheckedSetName> checked = CheckSetNameRequest(request);
  if (!checked.ok()) {
    finish(checked.status());
    return;
  }
  absl::StatusOr<NameWrite> write = PrepareSetName(context, *checked);
  if (!write.ok()) {
    finish(write.status());
    return;
  }
  WriteName(context, context->io.get(), checked->digest, *std::move(write),
            [response, finish](absl::StatusOr<v1::BlobInfo> info) {
              if (info.ok()) *response = *std::move(info);
              finish(info.status());
            });
}

absl::Status DoLogConsistency(const ServiceContext& context,
                              const v1::LogConsistencyRequest& request,
                              v1::LogConsistencyResponse* response) {
  RETURN_IF_ERROR(context.state.CheckServing());
  if (context.log == nullptr) {
    return absl::FailedPreconditionError(
        "this server keeps no transparency log (--log_key)");
  }
  ASSIGN_OR_RETURN(
      const ConsistencyAnswer answer,
      context.log->Consistency(request.old_size(), request.new_size()));
  response->set_checkpoint(answer.checkpoint.note);
  response->set_old_size(answer.old_size);
  response->set_new_size(answer.new_size);
  for (const tlog::LogHash& hash : answer.proof) {
    response->add_proof(tlog::LogHashToBytes(hash));
  }
  return absl::OkStatus();
}

absl::Status DoReadLog(const ServiceContext& context,
                       const v1::ReadLogRequest& request,
                       v1::ReadLogResponse* response) {
  RETURN_IF_ERROR(context.state.CheckServing());
  if (context.log == nullptr) {
    return absl::FailedPreconditionError(
        "this server keeps no transparency log (--log_key)");
  }
  ASSIGN_OR_RETURN(*response->mutable_data(),
                   context.log->ReadObject(request.path()));
  return absl::OkStatus();
}

absl::Status DoHistory(const ServiceContext& context,
                       const v1::HistoryRequest& request,
                       v1::HistoryResponse* response) {
  RETURN_IF_ERROR(context.state.CheckServing());
  ASSIGN_OR_RETURN(const NameHistory history,
                   context.store->History(request.name()));
  for (const NameVersion& version : history.versions) {
    *response->add_versions() = NameVersionToProto(version);
  }
  return absl::OkStatus();
}

absl::Status DoCollect(ServiceContext* context,
                       const v1::CollectRequest& request,
                       v1::CollectResponse* response) {
  RETURN_IF_ERROR(context->state.CheckServing());
  ASSIGN_OR_RETURN(const CollectReport report,
                   context->collect(request.dry_run()));
  response->set_blobs(report.blobs);
  response->set_bytes(report.bytes);
  response->set_reachable(report.reachable);
  response->set_reachable_bytes(report.reachable_bytes);
  response->set_quarantined(report.quarantined);
  response->set_quarantined_freed(report.quarantined_freed);
  response->set_leftovers(report.leftovers);
  response->set_leftover_bytes(report.leftover_bytes);
  response->set_freed(report.freed);
  response->set_freed_bytes(report.freed_bytes);
  response->set_young(report.young);
  response->set_names(report.names);
  response->set_trees(report.trees);
  response->set_seconds(absl::ToDoubleSeconds(report.took));
  return absl::OkStatus();
}

absl::Status DoScrub(ServiceContext* context, const v1::ScrubRequest& request,
                     v1::ScrubResponse* response) {
  RETURN_IF_ERROR(context->state.CheckServing());
  ASSIGN_OR_RETURN(const ScrubStatus status, context->scrub(request.wait()));
  response->set_running(status.running);
  response->set_pass_started(absl::ToUnixSeconds(status.position.started));
  response->set_last_completed(absl::ToUnixSeconds(status.position.completed));
  if (!status.report.has_value()) return absl::OkStatus();
  const ScrubReport& report = *status.report;
  response->set_waited(true);
  response->set_blobs(report.blobs);
  response->set_bytes(report.bytes);
  response->set_bad_blocks(report.bad_blocks);
  response->set_repaired_blocks(report.repaired_blocks);
  response->set_unrepairable(report.unrepairable);
  response->set_unread(report.unread);
  response->set_seconds(absl::ToDoubleSeconds(report.took));
  return absl::OkStatus();
}

absl::Status DoFindMissing(const ServiceContext& context,
                           const v1::FindMissingRequest& request,
                           v1::FindMissingResponse* response) {
  RETURN_IF_ERROR(context.state.CheckServing());
  ASSIGN_OR_RETURN(const std::vector<ParsedDigest> digests,
                   CheckFindMissingRequest(request));
  ASSIGN_OR_RETURN(
      const std::vector<ParsedDigest> missing,
      FindMissingBlobs(*context.store, digests, context.lookups.get(),
                       absl::Now(), context.options.gc_grace));
  for (const ParsedDigest& digest : missing) {
    response->add_missing(digest.ToString());
  }
  return absl::OkStatus();
}

}  // namespace

grpc::ServerUnaryReactor* VerityService::FindMissing(
    grpc::CallbackServerContext* call, const v1::FindMissingRequest* request,
    v1::FindMissingResponse* response) {
  // Tells whether blobs exist, as Stat does: the read role. It marks what
  // it finds used, which writes to the store: never inline.
  return Answer(context_, call, RpcMethod::kFindMissing, Role::kRead,
                context_->io.get(), [this, request, response] {
                  return DoFindMissing(*context_, *request, response);
                });
}

grpc::ServerUnaryReactor* VerityService::BatchUpdate(
    grpc::CallbackServerContext* call, const v1::BatchUpdateRequest* request,
    v1::BatchUpdateResponse* response) {
  // Stores blobs, as Put: the write role. Hashing and the store's writes and
  // syncs: never inline.
  return Answer(context_, call, RpcMethod::kBatchUpdate, Role::kWrite,
                context_->io.get(), [this, request, response] {
                  return DoBatchUpdate(*context_, *request, response);
                });
}

grpc::ServerUnaryReactor* VerityService::History(
    grpc::CallbackServerContext* call, const v1::HistoryRequest* request,
    v1::HistoryResponse* response) {
  // What a name pointed at, as Stat by name tells what it points at: read.
  // The history is read from the store's file or object: never inline.
  return Answer(context_, call, RpcMethod::kHistory, Role::kRead,
                context_->io.get(), [this, request, response] {
                  return DoHistory(*context_, *request, response);
                });
}

grpc::ServerUnaryReactor* VerityService::Collect(
    grpc::CallbackServerContext* call, const v1::CollectRequest* request,
    v1::CollectResponse* response) {
  // Deletes what no name reaches: admin, as Delete of a blob. It takes
  // minutes on a large store: on a thread of its own, not the I/O pool's.
  return Answer(context_, call, RpcMethod::kCollect, Role::kAdmin,
                context_->upkeep.get(), [this, request, response] {
                  return DoCollect(context_, *request, response);
                });
}

grpc::ServerUnaryReactor* VerityService::Scrub(
    grpc::CallbackServerContext* call, const v1::ScrubRequest* request,
    v1::ScrubResponse* response) {
  // Reads the whole store and rewrites what FEC repairs: admin, as gc. It
  // reads the store's position, and may wait for hours for the pass: on a
  // thread of its own, not the I/O pool's.
  return Answer(context_, call, RpcMethod::kScrub, Role::kAdmin,
                context_->upkeep.get(), [this, request, response] {
                  return DoScrub(context_, *request, response);
                });
}

grpc::ServerUnaryReactor* VerityService::SetName(
    grpc::CallbackServerContext* call, const v1::SetNameRequest* request,
    v1::BlobInfo* response) {
  // Re-pointing a name is what a Put with a name does (write); it renames
  // and fsyncs, or waits on the network: never inline.
  // With a log, the name is written once its statement is logged: the
  // call is answered from the thread that writes it.
  return AnswerLater(context_, call, RpcMethod::kSetName, Role::kWrite,
                     context_->io.get(),
                     [this, request, response](const Finish& finish) {
                       DoSetName(context_, *request, response, finish);
                     });
}

grpc::ServerReadReactor<v1::PutRequest>* VerityService::Put(
    grpc::CallbackServerContext* call, v1::PutResponse* response) {
  return new PutReactor(context_, call, response);
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* VerityService::Read(
    grpc::CallbackServerContext* call, const grpc::ByteBuffer* request) {
  return new ReadReactor(context_, call, *request);
}

grpc::ServerUnaryReactor* VerityService::ReadSmall(
    grpc::CallbackServerContext* call, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return new SmallReadReactor(context_, call, *request, response);
}

grpc::ServerUnaryReactor* VerityService::BatchRead(
    grpc::CallbackServerContext* call, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return new BatchReadReactor(context_, call, *request, response);
}

grpc::ServerUnaryReactor* VerityService::Stat(grpc::CallbackServerContext* call,
                                              const v1::StatRequest* request,
                                              v1::BlobInfo* response) {
  const auto stat = [this, request, response] {
    return DoStat(*context_, *request, response);
  };
  if (!context_->store->IsLocal()) {
    return Answer(context_, call, RpcMethod::kStat, Role::kRead,
                  context_->io.get(), stat);
  }
  if (context_->log == nullptr ||
      request->blob_case() != v1::StatRequest::kName) {
    return Answer(context_, call, RpcMethod::kStat, Role::kRead, nullptr, stat);
  }
  // A name's log proof: from the tiles the log keeps cached, else read
  // from the store.
  return AnswerNowOrLater(
      context_, call, RpcMethod::kStat, Role::kRead, context_->io.get(),
      [this, request, response] {
        return TryStatNow(*context_, *request, response);
      },
      stat);
}

grpc::ServerUnaryReactor* VerityService::LogConsistency(
    grpc::CallbackServerContext* call, const v1::LogConsistencyRequest* request,
    v1::LogConsistencyResponse* response) {
  // Reads tiles from the store: never inline.
  return Answer(context_, call, RpcMethod::kLogConsistency, Role::kRead,
                context_->io.get(), [this, request, response] {
                  return DoLogConsistency(*context_, *request, response);
                });
}

grpc::ServerUnaryReactor* VerityService::ReadLog(
    grpc::CallbackServerContext* call, const v1::ReadLogRequest* request,
    v1::ReadLogResponse* response) {
  return Answer(context_, call, RpcMethod::kReadLog, Role::kRead,
                context_->io.get(), [this, request, response] {
                  return DoReadLog(*context_, *request, response);
                });
}

grpc::ServerUnaryReactor* VerityService::List(grpc::CallbackServerContext* call,
                                              const v1::ListRequest* request,
                                              v1::ListResponse* response) {
  return Answer(context_, call, RpcMethod::kList, Role::kRead,
                context_->store->IsLocal() ? nullptr : context_->io.get(),
                [this, request, response] {
                  return DoList(*context_, *request, response);
                });
}

grpc::ServerUnaryReactor* VerityService::Delete(
    grpc::CallbackServerContext* call, const v1::DeleteRequest* request,
    v1::DeleteResponse* /*response*/) {
  // Removing a name changes what it refers to (write); removing a blob takes
  // it from every name (admin). Deleting renames and fsyncs, or waits on the
  // network: never inline.
  const Role role = request->blob_case() == v1::DeleteRequest::kName
                        ? Role::kWrite
                        : Role::kAdmin;
  return Answer(context_, call, RpcMethod::kDelete, role, context_->io.get(),
                [this, request] { return DoDelete(context_, *request); });
}

}  // namespace verity::server
