// --verify_on_read=false: chunks and tree blocks read from the store and sent
// as they are. For benchmarks and diagnostics only: clients still verify, but
// the server would send what it cannot vouch for.

#ifndef VERITYD_SERVER_DISPATCH_UNVERIFIED_READER_H_
#define VERITYD_SERVER_DISPATCH_UNVERIFIED_READER_H_

#include <string>

#include "server/dispatch/chunk_reader.h"

namespace verity::server {

// Stateless; thread-safe. Everything runs on the calling thread.
class UnverifiedReader final : public ChunkReader {
 public:
  void Begin(const ReadJob& /*job*/) override {}
  void Read(ReadJob* job, Done done) override;
  absl::StatusOr<std::string> TreeBlock(const VerifiedBlob& blob,
                                        TreeBlockId id) const override;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_DISPATCH_UNVERIFIED_READER_H_
