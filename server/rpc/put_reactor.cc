// Implements PutReactor.

#include "server/rpc/put_reactor.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/base/status_macros.h"
#include "lib/manifest/tree_manifest.h"
#include "proto/convert.h"
#include "server/rpc/call_admission.h"
#include "server/rpc/grpc_handoff.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/logged_names.h"
#include "server/rpc/request_checks.h"
#include "server/upkeep/tree_checks.h"

namespace verity::server {

PutReactor::PutReactor(ServiceContext* context,
                       grpc::CallbackServerContext* call,
                       v1::PutResponse* response)
    : context_(context),
      timer_(context->metrics.get(), RpcMethod::kPut),
      call_(call),
      response_(response),
      slot_(context),
      put_slot_(&context->state.active_puts, context->options.max_puts, "Puts"),
      watch_(context->watchdog.get(), [call] { call->TryCancel(); }),
      steps_(context->io.get()) {
  absl::Status status = AdmitCall(context->gate, *call, Role::kWrite, "Put");
  if (status.ok()) status = context_->state.CheckServing();
  if (status.ok()) status = slot_.status();
  if (status.ok()) status = put_slot_.status();
  if (!status.ok()) {
    FinishWith(status);
    return;
  }
  ReadNext();
}

void PutReactor::ReadNext() {
  watch_.StartWaiting();
  HandToGrpc(this);
  StartRead(&request_);
}

void PutReactor::OnDone() {
  OnDoneScope scope(this, context_);
  watch_.Close();
  // A Put that ended unfinished still has its writer, whose destruction
  // removes the staging directory: that, too, where the steps run.
  if (writer_ != nullptr && steps_->Submit([this] { delete this; }).ok()) {
    return;
  }
  delete this;
}

void PutReactor::FinishWith(const absl::Status& status) {
  context_->manifest_bytes->Give(std::exchange(manifest_charged_, 0));
  manifest_.reset();
  put_slot_.Release();
  slot_.Release();
  timer_.set_code(status.code());
  HandToGrpc(this);
  Finish(ToGrpcStatus(status));
}

void PutReactor::OnReadDone(bool ok) {
  TakeFromGrpc(this);
  // Writing and hashing the content, and the commit's fsyncs, renames and
  // uploads, run off the gRPC threads (steps_); the next read starts from
  // there.
  watch_.StopWaiting();
  absl::Status queued = steps_->Submit([this, ok] {
    if (!ok) {
      // Either the client half-closed (all content sent) or the stream broke
      // (or stalled and was cancelled). Only the first may store anything.
      if (!call_->IsCancelled()) {
        Commit();
      } else {
        FinishWith(watch_.expired()
                       ? context_->watchdog->IdleError()
                       : absl::CancelledError("the Put was cancelled"));
      }
      return;
    }
    absl::Status status = Consume(request_);
    if (!status.ok()) {
      FinishWith(status);
      return;
    }
    ReadNext();
  });
  if (!queued.ok()) FinishWith(queued);
}

absl::Status PutReactor::Consume(const v1::PutRequest& request) {
  switch (request.part_case()) {
    case v1::PutRequest::kHeader:
      if (writer_ != nullptr) {
        return absl::InvalidArgumentError("a Put has exactly one header");
      }
      return Begin(request.header());
    case v1::PutRequest::kData:
      if (writer_ == nullptr) {
        return absl::InvalidArgumentError(
            "the first message of a Put must be its header");
      }
      context_->metrics->AddPutBytes(request.data().size());
      if (manifest_.has_value()) {
        if (request.data().size() > kMaxTreeManifestBytes - manifest_->size()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "a tree manifest is at most ", kMaxTreeManifestBytes, " bytes"));
        }
        // Held until the check: charged to what all Puts may hold.
        if (!context_->manifest_bytes->TryTake(request.data().size())) {
          return absl::ResourceExhaustedError(
              "the tree manifests being checked hold all the server's room "
              "for them; retry later");
        }
        manifest_charged_ += request.data().size();
        manifest_->append(request.data());
      }
      return writer_->Append(AsBytes(request.data()));
    case v1::PutRequest::PART_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("empty Put message");
}

absl::Status PutReactor::Begin(const v1::PutHeader& header) {
  ASSIGN_OR_RETURN(CheckedPutHeader checked, CheckPutHeader(header));
  commit_.expected = std::move(checked.expected);
  commit_.fsverity_signature = std::move(checked.fsverity_signature);
  commit_.tree_manifest = checked.tree_manifest;
  if (checked.tree_manifest) manifest_.emplace();
  // A statement that the request alone shows is bad fails before any
  // content is taken; its digest and version are checked at the commit.
  if (!checked.name.empty()) {
    ASSIGN_OR_RETURN(
        commit_.name,
        context_->names->Prepare(
            checked.name, checked.name_statement, commit_.expected,
            checked.tree_manifest ? NameKind::kTree : NameKind::kFile,
            absl::Now()));
  }
  ASSIGN_OR_RETURN(writer_,
                   context_->blobs->BeginPut(checked.params, commit_.expected,
                                             checked.size));
  if (writer_->executor() != nullptr) steps_ = writer_->executor();
  return absl::OkStatus();
}

void PutReactor::Commit() {
  // A statement the server logs is logged once the content is stored, and
  // the name written after it (WriteName): the content's commit leaves it.
  NameWrite logged;
  if (context_->log != nullptr && !commit_.name.statement.empty()) {
    logged = std::exchange(commit_.name, NameWrite{});
  }
  absl::StatusOr<ParsedDigest> digest = CommitContent(!logged.name.empty());
  if (!digest.ok() || logged.name.empty()) {
    FinishWith(digest.status());
    return;
  }
  WriteName(context_, context_->io.get(), *digest, std::move(logged),
            [this](absl::StatusOr<v1::BlobInfo> info) {
              if (info.ok()) *response_->mutable_info() = *std::move(info);
              FinishWith(info.status());
            });
}

absl::StatusOr<ParsedDigest> PutReactor::CommitContent(bool named_later) {
  if (writer_ == nullptr) {
    return absl::InvalidArgumentError("a Put needs a header");
  }
  const absl::Time now = absl::Now();
  const absl::Duration grace = context_->options.gc_grace;
  if (manifest_.has_value()) {
    RETURN_IF_ERROR(CheckStoredTree(*context_->store, *manifest_,
                                    context_->lookups.get(), now, grace));
  }
  const bool named = named_later || !commit_.name.name.empty();
  // A blob stored already, relied on again (and a root if named).
  if (commit_.expected.has_value()) {
    RETURN_IF_ERROR(
        MarkStoredUsed(*context_->store, *commit_.expected, named, now, grace));
  }
  // New content may replace a quarantined copy: CommitPut drops it from the
  // cache. A name write its check refuses leaves the name as it was and the
  // blob stored, as a failure to record the name always has.
  ASSIGN_OR_RETURN(PutResult result,
                   context_->blobs->CommitPut(*writer_, commit_));
  writer_.reset();
  *response_->mutable_info() = BlobInfoToProto(result.info);
  response_->set_already_present(result.already_present);
  return ParseDigest(result.info.digest);
}

}  // namespace verity::server
