// One Put stream: a header, then content that is written to staging and hashed
// as it arrives; committed to the store only when the client has sent
// everything.

#ifndef VERITYD_SERVER_RPC_PUT_REACTOR_H_
#define VERITYD_SERVER_RPC_PUT_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "lib/base/executor.h"
#include "lib/tree/descriptor.h"
#include "proto/verity/v1/verity.pb.h"
#include "server/rpc/service_context.h"
#include "server/store/store.h"

namespace verity::server {

// Owned by gRPC: deletes itself in OnDone() (on the I/O executor if that
// discards an uncommitted Put).
// One read or one store step (on the I/O executor, or on the executor the
// store's writer names) is in flight at a time, so the steps never run
// concurrently and memory per stream is one message plus the tree being
// built.
class PutReactor final : public grpc::ServerReadReactor<v1::PutRequest> {
 public:
  PutReactor(ServiceContext* context, grpc::CallbackServerContext* call,
             v1::PutResponse* response);

  void OnReadDone(bool ok) override;
  void OnDone() override;

 private:
  absl::Status Consume(const v1::PutRequest& request);
  absl::Status Begin(const v1::PutHeader& header);
  // Commits the content, then the name (after its statement is logged, with
  // a log), then finishes the call.
  void Commit();
  // Commits the content (and the header's name, unless the log takes it:
  // `named_later`) and answers with its info; returns its digest.
  absl::StatusOr<ParsedDigest> CommitContent(bool named_later);
  // Starts reading the next message, which the client must send in time.
  void ReadNext();

  void FinishWith(const absl::Status& status);

  ServiceContext* const context_;
  CallTimer timer_;
  grpc::CallbackServerContext* const call_;
  v1::PutResponse* const response_;
  StreamSlot slot_;
  StreamSlot put_slot_;
  // Waits while a read is pending: the client must send the next message.
  StreamWatchdog::Stream watch_;
  v1::PutRequest request_;
  std::unique_ptr<PutWriter> writer_;
  // Where the store steps run: the I/O executor until the writer names its
  // own (PutWriter::executor), on which a Put may wait for capacity other
  // Puts hold without holding a thread that reads need.
  Executor* steps_;
  // What Commit commits besides the content (the header's).
  PutCommit commit_;
  // A tree manifest's content, checked before the commit; empty otherwise.
  // What it holds is charged to ServiceContext::manifest_bytes until the
  // Put ends.
  std::optional<std::string> manifest_;
  uint64_t manifest_charged_ = 0;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_PUT_REACTOR_H_
