// Implements ReadReactor.

#include "server/rpc/read_reactor.h"

#include <grpcpp/impl/codegen/proto_utils.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/status_macros.h"
#include "proto/convert.h"
#include "server/rpc/call_admission.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/read_response_wire.h"
#include "server/rpc/request_checks.h"

namespace verity::server {

ReadReactor::ReadReactor(ServiceContext* context,
                         grpc::CallbackServerContext* call,
                         const grpc::ByteBuffer& request)
    : context_(context),
      timer_(context->metrics, RpcMethod::kRead),
      slot_(context),
      watch_(context->watchdog, [call] { call->TryCancel(); }) {
  if (absl::Status admitted = AdmitCall(*context, *call, Role::kRead, "Read");
      !admitted.ok()) {
    FinishWith(admitted);
    return;
  }
  grpc::ByteBuffer copy(request);  // shares the slices
  if (!grpc::SerializationTraits<v1::ReadRequest>::Deserialize(&copy, &request_)
           .ok()) {
    FinishWith(absl::InvalidArgumentError("malformed ReadRequest"));
    return;
  }
  // Resolving a name and opening a blob of a remote store wait on the
  // network: on the I/O executor.
  if (context_->store->IsLocal()) {
    StartAndWrite();
    return;
  }
  absl::Status queued = context_->io->Submit([this] { StartAndWrite(); });
  if (!queued.ok()) FinishWith(queued);
}

void ReadReactor::StartAndWrite() {
  absl::Status status = Start(request_);
  if (!status.ok()) {
    FinishWith(status);
    return;
  }
  // OnCancel() may have come before the job existed: it is cancelled now.
  job_ready_.store(true);
  if (cancelled_.load()) job_->Cancel();
  {
    absl::MutexLock lock(&mu_);
    all_read_ = job_->done();
    ++advancing_;
  }
  Advance();
}

absl::Status ReadReactor::Start(const v1::ReadRequest& request) {
  RETURN_IF_ERROR(context_->CheckServing());
  RETURN_IF_ERROR(slot_.status());
  ASSIGN_OR_RETURN(
      const CheckedRead read,
      CheckReadRequest(request, context_->options.max_have_tree_blocks));
  ASSIGN_OR_RETURN(const ParsedDigest digest,
                   ResolveBlob(*context_->store, read.blob));
  ASSIGN_OR_RETURN(blob_, OpenForRead(*context_, digest));
  const TreeGeometry& geometry = blob_->geometry();
  ASSIGN_OR_RETURN(
      const ByteRange bytes,
      CheckByteRange(geometry.data_size(), read.offset, read.length));
  const BlockRange blocks = BlocksOf(geometry, bytes);
  timer_.set_priority_class(read.priority_class);
  job_.emplace(blob_, blocks, read.priority_class);
  window_.emplace(
      context_->options.read_chunk_bytes / geometry.block_size(),
      context_->options.max_read_chunk_bytes / geometry.block_size(),
      geometry.block_size(), context_->chunk_budget);
  proofs_.emplace(
      request.have_whole_tree()
          ? ProofPlanner::HoldingAll(geometry)
          : ProofPlanner(geometry, {request.have_tree_blocks().begin(),
                                    request.have_tree_blocks().end()}));
  charged_tree_bytes_ = blob_->cached_tree_bytes();
  context_->reader->Begin(*job_);
  return absl::OkStatus();
}

void ReadReactor::OnCancel() {
  // Nothing is read before Start() has made the job. Both flags are
  // sequentially consistent: this or StartAndWrite() sees the other's store.
  cancelled_.store(true);
  if (job_ready_.load()) job_->Cancel();
}

void ReadReactor::OnDone() {
  watch_.Close();
  delete this;
}

void ReadReactor::OnWriteDone(bool ok) {
  watch_.StopWaiting();
  {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!ok) {
      // The client went away, cancelled or stalled: stop reading and
      // verifying at once.
      job_->Cancel();
      EndWith(watch_.expired() ? context_->watchdog->IdleError()
                               : absl::CancelledError("the client went away"));
    }
    ++advancing_;
  }
  Advance();
}

void ReadReactor::Advance() {
  for (;;) {
    Step step;
    {
      absl::MutexLock lock(&mu_);
      step = NextStep();
    }
    switch (step.kind) {
      case Step::Kind::kNone:
        return;
      case Step::Kind::kRead:
        ReadChunk();
        break;
      case Step::Kind::kWrite:
        if (absl::Status status = Write(std::move(step)); !status.ok()) {
          absl::MutexLock lock(&mu_);
          writing_ = false;
          EndWith(status);
        }
        break;
      case Step::Kind::kFinish:
        FinishWith(step.status);
        return;
    }
  }
}

ReadReactor::Step ReadReactor::NextStep() {
  Step step = ClaimStep();
  // A thread that found nothing to do leaves Advance() now, and one that
  // finishes never touches the reactor again.
  if (step.kind == Step::Kind::kNone || step.kind == Step::Kind::kFinish) {
    --advancing_;
  }
  return step;
}

ReadReactor::Step ReadReactor::ClaimStep() {
  Step step;
  if (finished_) return step;
  if (end_.has_value()) {
    // Another thread still in Advance() would touch the reactor after
    // Finish() let gRPC delete it: the last one out finishes.
    if (reading_ || writing_ || advancing_ > 1) return step;
    finished_ = true;
    step.kind = Step::Kind::kFinish;
    step.status = *end_;
    return step;
  }
  if (!writing_ && (ready_.has_value() || (!sent_first_ && all_read_))) {
    writing_ = true;
    step.kind = Step::Kind::kWrite;
    step.first = !sent_first_;
    sent_first_ = true;
    step.chunk = std::move(ready_);
    ready_.reset();
    return step;
  }
  if (!reading_ && !ready_.has_value() && !all_read_) {
    reading_ = true;
    step.kind = Step::Kind::kRead;
    return step;
  }
  if (all_read_ && sent_first_ && !ready_.has_value() && !writing_) {
    EndWith(absl::OkStatus());
    return ClaimStep();
  }
  return step;
}

void ReadReactor::ReadChunk() {
  job_->StartChunk(window_->blocks());
  context_->reader->Read(&*job_,
                         [this](absl::Status status) { OnChunkRead(status); });
}

void ReadReactor::OnChunkRead(const absl::Status& status) {
  if (status.ok()) {
    context_->metrics->AddReadBytes(job_->priority_class(),
                                    job_->chunk().data.size());
    if (blob_->cached_tree_bytes() != charged_tree_bytes_) {
      charged_tree_bytes_ = blob_->cached_tree_bytes();
      context_->blobs->Update(*blob_);
    }
  }
  {
    absl::MutexLock lock(&mu_);
    reading_ = false;
    // Every chunk but the first was started while a message was being sent:
    // if that is done, the client is waiting for this one.
    window_->OnChunkRead(/*client_waiting=*/!writing_);
    if (status.ok()) {
      ready_ = ReadyChunk{job_->chunk_blocks(), job_->TakeChunk()};
      all_read_ = job_->done();
    } else {
      EndWith(status);
    }
    ++advancing_;
  }
  Advance();
}

absl::Status ReadReactor::Write(Step step) {
  response_.Clear();
  if (step.first) {
    response_.set_digest(blob_->blob().digest_text());
    *response_.mutable_fsverity_descriptor() =
        DescriptorToProto(blob_->blob().descriptor());
  }
  std::string data;
  if (step.chunk.has_value()) {
    RETURN_IF_ERROR(AddTreeBlocks(step.chunk->blocks));
    response_.set_data_offset(step.chunk->blocks.first *
                              blob_->geometry().block_size());
    data = std::move(step.chunk->data);
  }
  wire_ = SerializeReadResponse(response_, std::move(data));
  watch_.StartWaiting();
  StartWrite(&wire_);
  return absl::OkStatus();
}

void ReadReactor::EndWith(const absl::Status& status) {
  if (!end_.has_value()) end_ = status;
}

absl::Status ReadReactor::AddTreeBlocks(BlockRange chunk) {
  for (const TreeBlockId& id : proofs_->ForChunk(chunk)) {
    v1::TreeBlock* block = response_.add_tree_blocks();
    block->set_index(blob_->geometry().Ordinal(id));
    ASSIGN_OR_RETURN(*block->mutable_data(),
                     context_->reader->TreeBlock(*blob_, id));
  }
  return absl::OkStatus();
}

void ReadReactor::FinishWith(const absl::Status& status) {
  slot_.Release();
  timer_.set_code(status.code());
  if (status.code() == absl::StatusCode::kDataLoss && blob_ != nullptr) {
    ReportCorruption(context_, blob_->blob().digest(), status,
                     [this, status] { Finish(ToGrpcStatus(status)); });
    return;
  }
  Finish(ToGrpcStatus(status));
}

}  // namespace verity::server
