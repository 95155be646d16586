// Implements StreamAttempt: a Read RPC (or one ReadSmall call) whose every
// message goes through the ReadStreamVerifier, and whose verified bytes go
// to the fetch's writer. The shared tree locks itself, briefly, so a slow
// sink never stalls other streams.

#include "client/sdk/stream_attempt.h"

#include <utility>
#include <vector>

#include "client/sdk/grpc_status.h"
#include "lib/base/status_macros.h"
#include "lib/tree/read_plan.h"

namespace verity::client {

StreamAttempt::StreamAttempt(const ReadTarget& target,
                             std::shared_ptr<VerifiedTree> tree, uint64_t begin,
                             std::optional<uint64_t> end)
    : target_(target),
      begin_(begin),
      end_(end),
      verifier_(target.trusted, begin,
                end.has_value() ? std::optional<uint64_t>(*end - begin)
                                : std::nullopt,
                target.verifier, target.cache) {
  // Fails only for a tree of another digest, which the cache never returns;
  // the verifier then authenticates its own.
  if (tree != nullptr) verifier_.UseVerifiedTree(std::move(tree)).IgnoreError();
}

std::optional<uint64_t> StreamAttempt::blob_size() const {
  if (verifier_.verified_tree() == nullptr) return std::nullopt;
  return verifier_.verified_tree()->geometry().data_size();
}

v1::ReadRequest StreamAttempt::MakeRequest(bool* names_held) const {
  v1::ReadRequest request;
  request.set_digest(target_.trusted.ToString());
  request.set_offset(begin_);
  if (end_.has_value()) request.set_length(*end_ - begin_);
  request.set_priority_class(target_.priority);
  const std::shared_ptr<VerifiedTree> tree = verifier_.verified_tree();
  if (tree == nullptr) return request;
  bool held = false;
  if (verifier_.HoldsAllTreeBlocks()) {
    request.set_have_whole_tree(true);
    held = tree->geometry().num_levels() > 0;
  } else {
    // A longer list is cut (top levels first), and the server then resends
    // blocks the client already holds, which it checks.
    std::vector<uint64_t> blocks = verifier_.HeldTreeBlocks();
    if (blocks.size() > kMaxHaveTreeBlocks) blocks.resize(kMaxHaveTreeBlocks);
    request.mutable_have_tree_blocks()->Add(blocks.begin(), blocks.end());
    held = !blocks.empty();
  }
  if (names_held != nullptr) *names_held = held;
  return request;
}

void StreamAttempt::CountRequest(bool names_held) const {
  if (names_held) {
    FetchCounters::Add(target_.counters->requests_with_held_tree_blocks, 1);
  }
}

bool StreamAttempt::FitsSmallRead() const {
  const std::shared_ptr<VerifiedTree> tree = verifier_.verified_tree();
  return tree != nullptr && end_.has_value() &&
         target_.read->small_reads_served() &&
         verity::FitsSmallRead(tree->geometry(), {begin_, *end_});
}

AttemptResult StreamAttempt::Run(grpc::ClientContext* context,
                                 FetchWriter& writer, int part) {
  if (FitsSmallRead()) return RunSmall(context, writer, part);
  FetchCounters::Add(target_.counters->read_streams, 1);
  bool names_held = false;
  std::unique_ptr<grpc::ClientReader<ReceivedReadResponse>> reader =
      target_.read->Start(context, MakeRequest(&names_held));
  CountRequest(names_held);
  ReceivedReadResponse msg;
  absl::Status local;
  while (local.ok() && reader->Read(&msg)) {
    local = OnMessage(msg, writer, part);
  }
  if (!local.ok()) {
    // Drained so that Finish() does not wait on a server still sending.
    context->TryCancel();
    while (reader->Read(&msg)) {
    }
    reader->Finish().IgnoreError();
    return {local, false};
  }
  absl::Status rpc = FromGrpcStatus(reader->Finish());
  if (!rpc.ok()) return {std::move(rpc), true};
  return {verifier_.Finish(), false};
}

AttemptResult StreamAttempt::RunSmall(grpc::ClientContext* context,
                                      FetchWriter& writer, int part) {
  ReceivedReadResponse msg;
  bool names_held = false;
  const grpc::Status rpc =
      target_.read->ReadSmall(context, MakeRequest(&names_held), &msg);
  // A server from before ReadSmall (the caller remembers it).
  if (rpc.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    return {FromGrpcStatus(rpc), true, /*again_as_stream=*/true};
  }
  FetchCounters::Add(target_.counters->small_reads, 1);
  CountRequest(names_held);
  if (!rpc.ok()) return {FromGrpcStatus(rpc), true};
  absl::Status local = OnMessage(msg, writer, part);
  if (!local.ok()) return {std::move(local), false};
  return {verifier_.Finish(), false};
}

absl::Status StreamAttempt::OnMessage(ReceivedReadResponse& received,
                                      FetchWriter& writer, int part) {
  RETURN_IF_ERROR(received.Parse());
  const v1::ReadResponse& msg = received.head();
  const ByteChain data = received.data();
  if (first_message_) {
    first_message_ = false;
    if (target_.signature != nullptr) {
      RETURN_IF_ERROR(
          target_.signature->Check(target_.trusted, msg.fsverity_signature()));
    }
  }
  FetchCounters& counters = *target_.counters;
  const uint64_t added_before = verifier_.tree_blocks_added();
  const auto deliver = [&](absl::Span<const uint8_t> bytes) {
    // The first message has been verified by the time data arrives.
    RETURN_IF_ERROR(writer.Start(end_.value_or(blob_size().value_or(0))));
    RETURN_IF_ERROR(writer.Write(part, verifier_.verified_end(), bytes));
    FetchCounters::Add(counters.bytes_delivered, bytes.size());
    return absl::OkStatus();
  };
  const absl::Status status = verifier_.OnResponse(msg, data, deliver);
  FetchCounters::Add(counters.tree_blocks_received, msg.tree_blocks_size());
  FetchCounters::Add(counters.tree_blocks_hashed,
                     verifier_.tree_blocks_added() - added_before);
  if (status.ok()) {
    FetchCounters::Add(counters.data_bytes_verified, data.size());
  }
  return status;
}

}  // namespace verity::client
