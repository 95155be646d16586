// --verify_on_read=false: chunks and tree blocks read from the store and sent
// as they are. For benchmarks and diagnostics only: clients still verify, but
// the server would send what it cannot vouch for.

#ifndef VERITYD_SERVER_DISPATCH_UNVERIFIED_READER_H_
#define VERITYD_SERVER_DISPATCH_UNVERIFIED_READER_H_

#include <memory>
#include <optional>
#include <string>

#include "server/dispatch/chunk_reader.h"

namespace verity::server {

// Stateless; thread-safe. A chunk the store has here is read on the calling
// thread; any other is fetched, with the tree blocks it would need, as the
// verifying reader fetches it.
class UnverifiedReader final : public ChunkReader {
 public:
  void Begin(const ReadJob& /*job*/) override {}
  std::optional<absl::Status> TryReadNow(ReadJob& job) override;
  void ReadLater(std::shared_ptr<ReadJob> job, Done done) override;
  // FAILED_PRECONDITION for a tree block the store does not have here.
  absl::StatusOr<std::string> TreeBlock(const VerifiedBlob& blob,
                                        TreeBlockId id) const override;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_DISPATCH_UNVERIFIED_READER_H_
