// Implements ReadReactor.

#include "server/rpc/read_reactor.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/status_macros.h"
#include "proto/convert.h"
#include "server/rpc/grpc_status.h"

namespace verity::server {

ReadReactor::ReadReactor(ServiceContext* context,
                         const v1::ReadRequest& request)
    : context_(context),
      timer_(context->metrics, RpcMethod::kRead),
      slot_(context) {
  absl::Status status = Start(request);
  if (!status.ok()) {
    FinishWith(status);
    return;
  }
  WriteNextOrFinish();
}

absl::Status ReadReactor::Start(const v1::ReadRequest& request) {
  RETURN_IF_ERROR(context_->CheckServing());
  RETURN_IF_ERROR(slot_.status());
  if (!v1::PriorityClass_IsValid(request.priority_class())) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown priority class ", request.priority_class()));
  }
  ASSIGN_OR_RETURN(
      ParsedDigest digest,
      ResolveBlob(*context_->store, request.digest(), request.name(),
                  request.blob_case() == v1::ReadRequest::kName));
  ASSIGN_OR_RETURN(blob_, context_->cache->Get(digest));
  RETURN_IF_ERROR(ResolveRange(request));
  const TreeGeometry& geometry = blob_->geometry();
  proofs_.emplace(
      request.have_whole_tree()
          ? ProofPlanner::HoldingAll(geometry)
          : ProofPlanner(geometry, {request.have_tree_blocks().begin(),
                                    request.have_tree_blocks().end()}));
  dispatch_.priority_class =
      static_cast<PriorityClass>(request.priority_class());
  timer_.set_priority_class(dispatch_.priority_class);
  dispatch_.bytes = (end_block_ - next_block_) * blob_->geometry().block_size();
  if (context_->options.verify_on_read && next_block_ < end_block_) {
    blob_->PrefetchTree(next_block_, end_block_);
  }
  return absl::OkStatus();
}

absl::Status ReadReactor::ResolveRange(const v1::ReadRequest& request) {
  // A zero length asks for the rest of the blob.
  std::optional<uint64_t> length;
  if (request.length() != 0) length = request.length();
  RETURN_IF_ERROR(ValidateRange(request.offset(), length));
  ASSIGN_OR_RETURN(
      const ByteRange bytes,
      CheckByteRange(blob_->geometry().data_size(), request.offset(), length));
  const BlockRange blocks = BlocksOf(blob_->geometry(), bytes);
  next_block_ = blocks.first;
  end_block_ = blocks.end;
  return absl::OkStatus();
}

void ReadReactor::OnWriteDone(bool ok) {
  if (!ok) {
    // The client went away or cancelled: stop reading and verifying at once.
    FinishWith(absl::CancelledError("the client went away"));
    return;
  }
  WriteNextOrFinish();
}

void ReadReactor::WriteNextOrFinish() {
  response_.Clear();
  if (!sent_first_) {
    sent_first_ = true;
    response_.set_digest(blob_->blob().digest_text());
    *response_.mutable_fsverity_descriptor() =
        DescriptorToProto(blob_->blob().descriptor());
    if (next_block_ == end_block_) {
      StartWrite(&response_);
      return;
    }
  } else if (next_block_ == end_block_) {
    FinishWith(absl::OkStatus());
    return;
  }
  ReadChunk();
}

void ReadReactor::ReadChunk() {
  const uint64_t chunk_blocks = std::max<uint64_t>(
      1, context_->options.read_chunk_bytes / blob_->geometry().block_size());
  chunk_end_ = std::min(end_block_, next_block_ + chunk_blocks);
  if (!context_->options.verify_on_read) {
    OnChunkRead(
        ReadUnverified(blob_->blob(), next_block_, chunk_end_, &read_.data));
    return;
  }
  context_->dispatcher->Verify(
      blob_.get(), &dispatch_, next_block_, chunk_end_, &read_, &cancelled_,
      [this](absl::Status status) { OnChunkRead(status); });
}

void ReadReactor::OnChunkRead(const absl::Status& status) {
  if (!status.ok()) {
    FinishWith(status);
    return;
  }
  response_.mutable_data()->swap(read_.data);
  context_->metrics->AddReadBytes(dispatch_.priority_class,
                                  response_.data().size());
  absl::Status tree = AddTreeBlocks(next_block_, chunk_end_);
  if (!tree.ok()) {
    FinishWith(tree);
    return;
  }
  response_.set_data_offset(next_block_ * blob_->geometry().block_size());
  next_block_ = chunk_end_;
  StartWrite(&response_);
}

absl::Status ReadReactor::AddTreeBlocks(uint64_t first_block,
                                        uint64_t end_block) {
  for (const TreeBlockId& id : proofs_->ForChunk({first_block, end_block})) {
    v1::TreeBlock* block = response_.add_tree_blocks();
    block->set_index(blob_->geometry().Ordinal(id));
    ASSIGN_OR_RETURN(*block->mutable_data(), TreeBlockBytes(id));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadReactor::TreeBlockBytes(TreeBlockId id) const {
  if (context_->options.verify_on_read) return blob_->VerifiedTreeBlock(id);
  const TreeGeometry& geometry = blob_->geometry();
  std::string block(geometry.block_size(), '\0');
  RETURN_IF_ERROR(blob_->blob().ReadTree(
      geometry.Ordinal(id) * geometry.block_size(), AsMutableBytes(&block)));
  return block;
}

void ReadReactor::FinishWith(const absl::Status& status) {
  timer_.set_code(status.code());
  if (status.code() == absl::StatusCode::kDataLoss && blob_ != nullptr) {
    ReportCorruption(context_, blob_->blob().digest(), status);
  }
  Finish(ToGrpcStatus(status));
}

}  // namespace verity::server
