// One Read stream: resolves the blob, then writes the requested blocks one
// message at a time, each verified before it is sent, with the tree blocks the
// client needs to verify it again.

#ifndef VERITYD_SERVER_READ_REACTOR_H_
#define VERITYD_SERVER_READ_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "proto/verity/v1/verity.pb.h"
#include "server/service_context.h"
#include "server/verified_blob.h"

namespace verity::server {

// Owned by gRPC: deletes itself in OnDone(). At most one write is in flight, so
// a slow client holds at most one message in server memory. All methods run on
// gRPC callback threads, one at a time (the next write starts only from
// OnWriteDone).
class ReadReactor final : public grpc::ServerWriteReactor<v1::ReadResponse> {
 public:
  ReadReactor(ServiceContext* context, const v1::ReadRequest& request);

  void OnWriteDone(bool ok) override;
  void OnCancel() override {}
  void OnDone() override { delete this; }

 private:
  absl::Status Start(const v1::ReadRequest& request);
  absl::Status ResolveRange(const v1::ReadRequest& request);
  // Fills response_ with the next message; false once the range is done.
  absl::StatusOr<bool> FillNext();
  absl::Status AddTreeBlocks(uint64_t first_block, uint64_t end_block);
  absl::StatusOr<std::string> TreeBlockBytes(TreeBlockId id) const;
  void WriteNextOrFinish();
  void FinishWith(const absl::Status& status);

  ServiceContext* const context_;
  StreamSlot slot_;
  std::shared_ptr<VerifiedBlob> blob_;
  uint64_t next_block_ = 0;
  uint64_t end_block_ = 0;
  bool sent_first_ = false;
  // Tree blocks the client said it holds, by ordinal; or all of them.
  absl::flat_hash_set<uint64_t> client_has_;
  bool client_has_all_ = false;
  // Per level, the first block index not yet sent: chunks go in order, so the
  // blocks a chunk needs start at or after it.
  std::vector<uint64_t> unsent_from_;
  v1::ReadResponse response_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_READ_REACTOR_H_
