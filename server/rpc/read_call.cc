// Implements ReadCall.

#include "server/rpc/read_call.h"

#include <grpcpp/impl/codegen/proto_utils.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/tree/read_plan.h"
#include "proto/convert.h"
#include "server/rpc/call_admission.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/read_response_wire.h"
#include "server/rpc/request_checks.h"

namespace verity::server {
namespace {

// A stream's chunks grow from --read_chunk_bytes as the client keeps up; a
// small read is one chunk of whatever it asked for.
ReadStreamOptions StreamOptions(const ServiceContext& context,
                                RpcMethod method) {
  ReadStreamOptions options;
  options.budget = context.chunk_budget;
  if (method == RpcMethod::kReadSmall) {
    options.chunk_bytes = options.max_chunk_bytes = kMaxSmallReadBytes;
  } else {
    options.chunk_bytes = context.options.read_chunk_bytes;
    options.max_chunk_bytes = context.options.max_read_chunk_bytes;
  }
  return options;
}

}  // namespace

ReadCall::ReadCall(ServiceContext* context, RpcMethod method)
    : context_(context),
      method_(method),
      timer_(context->metrics, method),
      slot_(context),
      stream_(ReadStream::Create(context->reader, this,
                                 StreamOptions(*context, method))) {}

void ReadCall::Begin(const grpc::CallbackServerContext& call,
                     const grpc::ByteBuffer& request) {
  if (absl::Status admitted =
          AdmitCall(context_->gate, call, Role::kRead, RpcMethodName(method_));
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
  // starts, so the call is there for the task.
  if (context_->store->IsLocal()) {
    Open();
    return;
  }
  absl::Status queued = context_->io->Submit([this] { Open(); });
  if (!queued.ok()) stream_->Start(queued);
}

void ReadCall::Open() { stream_->Start(CheckAndOpen()); }

absl::StatusOr<ReadStream::Opened> ReadCall::CheckAndOpen() {
  RETURN_IF_ERROR(context_->state.CheckServing());
  RETURN_IF_ERROR(slot_.status());
  ASSIGN_OR_RETURN(
      const CheckedRead read,
      CheckReadRequest(request_, context_->options.max_have_tree_blocks));
  ASSIGN_OR_RETURN(NamedBlob named, ResolveBlob(*context_->store, read.blob));
  name_statement_ = std::move(named.statement);
  ASSIGN_OR_RETURN(blob_, context_->blobs->Open(named.digest));
  const TreeGeometry& geometry = blob_->geometry();
  ASSIGN_OR_RETURN(
      const ByteRange bytes,
      CheckByteRange(geometry.data_size(), read.offset, read.length));
  if (method_ == RpcMethod::kReadSmall && !FitsSmallRead(geometry, bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("ReadSmall serves at most ", kMaxSmallReadBytes,
                     " bytes of whole blocks; this range needs ",
                     BlocksOf(geometry, bytes).size() * geometry.block_size(),
                     ": use Read"));
  }
  timer_.set_priority_class(read.priority_class);
  priority_class_ = read.priority_class;
  charged_tree_bytes_ = blob_->cached_tree_bytes();
  return ReadStream::Opened{
      std::make_shared<ReadJob>(blob_, BlocksOf(geometry, bytes),
                                read.priority_class, context_->read_buffers),
      request_.have_whole_tree()
          ? ProofPlanner::HoldingAll(geometry)
          : ProofPlanner(geometry, {request_.have_tree_blocks().begin(),
                                    request_.have_tree_blocks().end()})};
}

void ReadCall::StartWrite(ReadMessage message) {
  v1::ReadResponse head;
  if (message.first) {
    head.set_digest(blob_->blob().digest_text());
    SetDescriptor(blob_->blob().descriptor(), &head);
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
  Send(&wire_);
}

void ReadCall::ChunkRead(uint64_t bytes) {
  context_->metrics->AddReadBytes(priority_class_, bytes);
  // The blob's verified tree grew: the cache charges it anew.
  if (blob_->cached_tree_bytes() != charged_tree_bytes_) {
    charged_tree_bytes_ = blob_->cached_tree_bytes();
    context_->blobs->Update(*blob_);
  }
}

void ReadCall::Finish(absl::Status status) {
  slot_.Release();
  if (status.code() == absl::StatusCode::kDataLoss && blob_ != nullptr) {
    context_->corruption->Report(blob_->blob().digest(), status,
                                 [this](absl::Status reported) {
                                   timer_.set_code(reported.code());
                                   End(ToGrpcStatus(reported));
                                 });
    return;
  }
  timer_.set_code(status.code());
  End(ToGrpcStatus(status));
}

}  // namespace verity::server
