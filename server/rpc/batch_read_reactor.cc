// Implements BatchReadReactor.

#include "server/rpc/batch_read_reactor.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/convert.h"
#include "proto/verity/v1/verity.pb.h"
#include "server/rpc/blob_read.h"
#include "server/rpc/grpc_handoff.h"
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

  using BlobRead::Refuse;
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
      timer_(context->metrics.get(), RpcMethod::kBatchRead),
      slot_(context),
      bytes_left_(kMaxBatchReadBytes) {
  Begin(*call, request);
  // Returned to gRPC, which may call OnCancel() from another thread at once.
  HandToGrpc(this);
}

void BatchReadReactor::Begin(const grpc::CallbackServerContext& call,
                             const grpc::ByteBuffer& request) {
  absl::StatusOr<v1::BatchReadRequest> parsed =
      AdmitRawRead<v1::BatchReadRequest>(*context_, call, RpcMethod::kBatchRead,
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
  if (absl::Status reserved = Reserve(reads->size()); !reserved.ok()) {
    End(std::move(reserved));
    return;
  }
  parts_.resize(reads->size());
  for (size_t i = 0; i < reads->size(); ++i) {
    blobs_.push_back(std::make_unique<Blob>(this, i));
  }
  reads_ = *std::move(reads);
  Advance();
}

absl::Status BatchReadReactor::Reserve(size_t blobs) {
  window_ = context_->batch_read_blobs->TakeUpTo(
      std::min<uint64_t>(blobs, kBatchReadWindow));
  if (window_ == 0) {
    return absl::ResourceExhaustedError(
        "the server reads as many blobs for BatchRead calls as it takes at "
        "once; retry later");
  }
  const uint64_t bytes =
      std::min<uint64_t>(kMaxBatchReadBytes, blobs * kMaxSmallReadBytes);
  if (!context_->chunk_budget->TryTake(bytes)) {
    return absl::ResourceExhaustedError(
        "the server's read window is spent; retry later");
  }
  reserved_bytes_ = bytes;
  return absl::OkStatus();
}

void BatchReadReactor::Advance() {
  {
    absl::MutexLock lock(&mu_);
    if (advancing_) return;  // that thread starts what this one would
    advancing_ = true;
  }
  AdvanceClaimed();
}

void BatchReadReactor::AdvanceClaimed() {
  while (true) {
    size_t next = 0;
    bool start = false;
    bool cancelled = false;
    bool all_ended = false;
    {
      absl::MutexLock lock(&mu_);
      if (started_ < blobs_.size() && started_ - ended_ < window_) {
        next = started_++;
        start = true;
        cancelled = cancelled_;
      } else {
        // A blob that ends from here on advances the call itself.
        advancing_ = false;
        all_ended = ended_ == blobs_.size();
      }
    }
    if (!start) {
      if (all_ended) End(absl::OkStatus());
      return;
    }
    // May end, and call BlobDone(), before it returns.
    if (cancelled) {
      blobs_[next]->Refuse(absl::CancelledError("the client went away"));
    } else {
      blobs_[next]->Start(std::move(reads_[next]));
    }
  }
}

BatchReadReactor::~BatchReadReactor() = default;

void BatchReadReactor::OnDone() {
  OnDoneScope scope(this, context_);
  delete this;
}

void BatchReadReactor::OnCancel() {
  TakeFromGrpc(this);
  {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;  // the blobs not started yet are not opened
  }
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
  {
    // One critical section: the thread advancing counts this end before it
    // stops, or this thread advances. Two blobs ending at once on two
    // threads (a remote store's) once both saw every blob ended and ended
    // the call twice, the second time on a deleted reactor.
    absl::MutexLock lock(&mu_);
    ++ended_;
    if (advancing_) return;
    advancing_ = true;
  }
  AdvanceClaimed();
}

void BatchReadReactor::End(absl::Status status) {
  context_->batch_read_blobs->Give(window_);
  context_->chunk_budget->Give(reserved_bytes_);
  slot_.Release();
  timer_.set_code(status.code());
  if (status.ok()) *response_ = SerializeBatchReadResponse(parts_);
  HandToGrpc(this);
  grpc::ServerUnaryReactor::Finish(ToGrpcStatus(status));
}

}  // namespace verity::server
