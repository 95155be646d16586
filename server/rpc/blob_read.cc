// Implements BlobRead.

#include "server/rpc/blob_read.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "proto/convert.h"
#include "server/rpc/read_response_wire.h"
#include "server/rpc/request_checks.h"

namespace verity::server {
namespace {

// A stream's chunks grow from --read_chunk_bytes as the client keeps up; a
// read in one message is one chunk of whatever it asked for.
ReadStreamOptions StreamOptions(const ServiceContext& context,
                                bool one_message) {
  ReadStreamOptions options;
  options.budget = context.chunk_budget.get();
  if (one_message) {
    options.chunk_bytes = options.max_chunk_bytes = kMaxSmallReadBytes;
  } else {
    options.chunk_bytes = context.options.read_chunk_bytes;
    options.max_chunk_bytes = context.options.max_read_chunk_bytes;
  }
  return options;
}

}  // namespace

BlobRead::BlobRead(ServiceContext* context, bool one_message)
    : context_(context),
      one_message_(one_message),
      stream_(ReadStream::Create(context->reader.get(), this,
                                 StreamOptions(*context, one_message))) {}

void BlobRead::Start(v1::ReadRequest request) {
  request_ = std::move(request);
  // Resolving a name and opening a blob of a remote store wait on the
  // network: on the I/O executor. The stream cannot finish before it
  // starts, so the read is there for the task.
  if (context_->store->IsLocal()) {
    Open();
    return;
  }
  absl::Status queued = context_->io->Submit([this] { Open(); });
  if (!queued.ok()) Refuse(std::move(queued));
}

void BlobRead::Open() { stream_->Start(CheckAndOpen()); }

absl::StatusOr<ReadStream::Opened> BlobRead::CheckAndOpen() {
  RETURN_IF_ERROR(context_->state.CheckServing());
  ASSIGN_OR_RETURN(
      const CheckedRead read,
      CheckReadRequest(request_, context_->options.max_have_tree_blocks));
  priority_class_ = read.priority_class;
  ASSIGN_OR_RETURN(NamedBlob named, ResolveBlob(*context_->store, read.blob));
  name_statement_ = std::move(named.statement);
  ASSIGN_OR_RETURN(blob_, context_->blobs->Open(named.digest));
  const TreeGeometry& geometry = blob_->geometry();
  ASSIGN_OR_RETURN(
      const ByteRange bytes,
      CheckByteRange(geometry.data_size(), read.offset, read.length));
  if (one_message_ && !FitsSmallRead(geometry, bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("one message serves at most ", kMaxSmallReadBytes,
                     " bytes of whole blocks; this range needs ",
                     BlocksOf(geometry, bytes).size() * geometry.block_size(),
                     ": use Read"));
  }
  RETURN_IF_ERROR(CheckOpened(geometry, bytes));
  charged_tree_bytes_ = blob_->cached_tree_bytes();
  return ReadStream::Opened{
      std::make_shared<ReadJob>(blob_, BlocksOf(geometry, bytes),
                                read.priority_class, context_->read_buffers),
      request_.have_whole_tree()
          ? ProofPlanner::HoldingAll(geometry)
          : ProofPlanner(geometry, {request_.have_tree_blocks().begin(),
                                    request_.have_tree_blocks().end()})};
}

void BlobRead::StartWrite(ReadMessage message) {
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

void BlobRead::ChunkRead(uint64_t bytes) {
  context_->metrics->AddReadBytes(priority_class_, bytes);
  // The blob's verified tree grew: the cache charges it anew.
  if (blob_->cached_tree_bytes() != charged_tree_bytes_) {
    charged_tree_bytes_ = blob_->cached_tree_bytes();
    context_->blobs->Update(*blob_);
  }
}

void BlobRead::Finish(absl::Status status) {
  if (status.code() == absl::StatusCode::kDataLoss && blob_ != nullptr) {
    context_->corruption->Report(
        blob_->blob().digest(), status,
        [this](absl::Status reported) { Done(std::move(reported)); });
    return;
  }
  Done(std::move(status));
}

}  // namespace verity::server
