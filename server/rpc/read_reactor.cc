// Implements ReadReactor.

#include "server/rpc/read_reactor.h"

#include <grpcpp/impl/codegen/proto_utils.h>

#include <string>
#include <utility>

#include "lib/status_macros.h"
#include "proto/convert.h"
#include "server/rpc/call_admission.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/read_response_wire.h"
#include "server/rpc/request_checks.h"

namespace verity::server {
namespace {

ReadStreamOptions StreamOptions(const ServiceContext& context) {
  ReadStreamOptions options;
  options.chunk_bytes = context.options.read_chunk_bytes;
  options.max_chunk_bytes = context.options.max_read_chunk_bytes;
  options.budget = context.chunk_budget;
  return options;
}

}  // namespace

ReadReactor::ReadReactor(ServiceContext* context,
                         grpc::CallbackServerContext* call,
                         const grpc::ByteBuffer& request)
    : context_(context),
      timer_(context->metrics, RpcMethod::kRead),
      slot_(context),
      watch_(context->watchdog, [call] { call->TryCancel(); }),
      stream_(
          ReadStream::Create(context->reader, this, StreamOptions(*context))) {
  if (absl::Status admitted = AdmitCall(*context, *call, Role::kRead, "Read");
      !admitted.ok()) {
    stream_->Start(admitted);
    return;
  }
  grpc::ByteBuffer copy(request);  // shares the slices
  if (!grpc::SerializationTraits<v1::ReadRequest>::Deserialize(&copy, &request_)
           .ok()) {
    stream_->Start(absl::InvalidArgumentError("malformed ReadRequest"));
    return;
  }
  // Resolving a name and opening a blob of a remote store wait on the
  // network: on the I/O executor. The stream cannot finish before it
  // starts, so the reactor is there for the task.
  if (context_->store->IsLocal()) {
    Open(request_);
    return;
  }
  absl::Status queued = context_->io->Submit([this] { Open(request_); });
  if (!queued.ok()) stream_->Start(queued);
}

void ReadReactor::Open(const v1::ReadRequest& request) {
  stream_->Start(CheckAndOpen(request));
}

absl::StatusOr<ReadStream::Opened> ReadReactor::CheckAndOpen(
    const v1::ReadRequest& request) {
  RETURN_IF_ERROR(context_->CheckServing());
  RETURN_IF_ERROR(slot_.status());
  ASSIGN_OR_RETURN(
      const CheckedRead read,
      CheckReadRequest(request, context_->options.max_have_tree_blocks));
  ASSIGN_OR_RETURN(NamedBlob named, ResolveBlob(*context_->store, read.blob));
  name_statement_ = std::move(named.statement);
  ASSIGN_OR_RETURN(blob_, OpenForRead(*context_, named.digest));
  const TreeGeometry& geometry = blob_->geometry();
  ASSIGN_OR_RETURN(
      const ByteRange bytes,
      CheckByteRange(geometry.data_size(), read.offset, read.length));
  timer_.set_priority_class(read.priority_class);
  priority_class_ = read.priority_class;
  charged_tree_bytes_ = blob_->cached_tree_bytes();
  return ReadStream::Opened{
      std::make_shared<ReadJob>(blob_, BlocksOf(geometry, bytes),
                                read.priority_class, context_->read_buffers),
      request.have_whole_tree()
          ? ProofPlanner::HoldingAll(geometry)
          : ProofPlanner(geometry, {request.have_tree_blocks().begin(),
                                    request.have_tree_blocks().end()})};
}

void ReadReactor::OnCancel() { stream_->OnCancel(); }

void ReadReactor::OnDone() {
  watch_.Close();
  delete this;
}

void ReadReactor::OnWriteDone(bool ok) {
  watch_.StopWaiting();
  // Not written: the client went away, cancelled or stalled.
  stream_->OnWriteDone(
      ok ? absl::OkStatus()
         : (watch_.expired() ? context_->watchdog->IdleError()
                             : absl::CancelledError("the client went away")));
}

void ReadReactor::StartWrite(ReadMessage message) {
  v1::ReadResponse head;
  if (message.first) {
    head.set_digest(blob_->blob().digest_text());
    *head.mutable_fsverity_descriptor() =
        DescriptorToProto(blob_->blob().descriptor());
    head.set_name_statement(name_statement_);
    head.set_fsverity_signature(blob_->blob().fsverity_signature());
  }
  if (!message.data.empty()) {
    for (ReadMessage::TreeBlock& block : message.tree_blocks) {
      v1::TreeBlock* proto = head.add_tree_blocks();
      proto->set_index(block.index);
      *proto->mutable_data() = std::move(block.bytes);
    }
    head.set_data_offset(message.data_offset);
  }
  wire_ = SerializeReadResponse(head, std::move(message.data));
  watch_.StartWaiting();
  grpc::ServerWriteReactor<grpc::ByteBuffer>::StartWrite(&wire_);
}

void ReadReactor::ChunkRead(uint64_t bytes) {
  context_->metrics->AddReadBytes(priority_class_, bytes);
  // The blob's verified tree grew: the cache charges it anew.
  if (blob_->cached_tree_bytes() != charged_tree_bytes_) {
    charged_tree_bytes_ = blob_->cached_tree_bytes();
    context_->blobs->Update(*blob_);
  }
}

void ReadReactor::Finish(absl::Status status) {
  slot_.Release();
  timer_.set_code(status.code());
  if (status.code() == absl::StatusCode::kDataLoss && blob_ != nullptr) {
    ReportCorruption(context_, blob_->blob().digest(), status, [this, status] {
      grpc::ServerWriteReactor<grpc::ByteBuffer>::Finish(ToGrpcStatus(status));
    });
    return;
  }
  grpc::ServerWriteReactor<grpc::ByteBuffer>::Finish(ToGrpcStatus(status));
}

}  // namespace verity::server
