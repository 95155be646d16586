// Implements BatchReadReactor.

#include "server/rpc/batch_read_reactor.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/convert.h"
#include "proto/verity/v1/verity.pb.h"
#include "server/rpc/blob_read.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/raw_read_request.h"
#include "server/rpc/request_checks.h"

namespace verity::server {

// One blob of the call: its one message is kept, not sent, and its end
// counted.
class BatchReadReactor::Blob final : public BlobRead {
 public:
  Blob(BatchReadReactor* batch, size_t index)
      : BlobRead(batch->context_, /*one_message=*/true),
        batch_(batch),
        index_(index) {}

  using BlobRead::Start;
  using BlobRead::stream;

 private:
  void Send(grpc::ByteBuffer* wire) override {
    batch_->parts_[index_].read.Swap(wire);
    stream().OnWriteDone(absl::OkStatus());
  }
  void Done(absl::Status status) override {
    batch_->BlobDone(index_, std::move(status));
  }
  absl::Status CheckOpened(const TreeGeometry& /*geometry*/,
                           ByteRange bytes) override {
    return batch_->TakeBytes(bytes.size());
  }

  BatchReadReactor* const batch_;
  const size_t index_;
};

BatchReadReactor::BatchReadReactor(ServiceContext* context,
                                   grpc::CallbackServerContext* call,
                                   const grpc::ByteBuffer& request,
                                   grpc::ByteBuffer* response)
    : context_(context),
      response_(response),
      timer_(context->metrics, RpcMethod::kBatchRead),
      slot_(context),
      bytes_left_(kMaxBatchReadBytes) {
  absl::StatusOr<v1::BatchReadRequest> parsed =
      AdmitRawRead<v1::BatchReadRequest>(*context, *call, RpcMethod::kBatchRead,
                                         slot_, request);
  if (!parsed.ok()) {
    End(parsed.status());
    return;
  }
  absl::StatusOr<std::vector<v1::ReadRequest>> reads =
      CheckBatchReadRequest(*parsed);
  if (!reads.ok()) {
    End(reads.status());
    return;
  }
  if (reads->empty()) {
    End(absl::OkStatus());
    return;
  }
  // CheckBatchReadRequest() checked the class.
  timer_.set_priority_class(PriorityClassFromProto(parsed->priority_class())
                                .value_or(PriorityClass::kNone));
  parts_.resize(reads->size());
  for (size_t i = 0; i < reads->size(); ++i) {
    blobs_.push_back(std::make_unique<Blob>(this, i));
  }
  // Each blob counts until it ends; the last to end ends the call, which
  // may be before this loop is done.
  pending_ = reads->size();
  for (size_t i = 0; i < reads->size(); ++i) {
    blobs_[i]->Start(std::move((*reads)[i]));
  }
}

BatchReadReactor::~BatchReadReactor() = default;

void BatchReadReactor::OnCancel() {
  for (const std::unique_ptr<Blob>& blob : blobs_) blob->stream().OnCancel();
}

absl::Status BatchReadReactor::TakeBytes(uint64_t bytes) {
  uint64_t left = bytes_left_.load();
  do {
    if (bytes > left) {
      return absl::InvalidArgumentError(
          absl::StrCat("the blobs of one BatchRead total at most ",
                       kMaxBatchReadBytes, " bytes; read this one alone"));
    }
  } while (!bytes_left_.compare_exchange_weak(left, left - bytes));
  return absl::OkStatus();
}

void BatchReadReactor::BlobDone(size_t index, absl::Status status) {
  parts_[index].status = std::move(status);
  if (--pending_ == 0) End(absl::OkStatus());
}

void BatchReadReactor::End(absl::Status status) {
  slot_.Release();
  timer_.set_code(status.code());
  if (status.ok()) *response_ = SerializeBatchReadResponse(parts_);
  grpc::ServerUnaryReactor::Finish(ToGrpcStatus(status));
}

}  // namespace verity::server
