// Test-only: a verityd running in the test process on 127.0.0.1:0 over a fresh
// store, and helpers to put and read blobs through the real API.

#ifndef VERITYD_TESTS_TESTING_TEST_SERVER_H_
#define VERITYD_TESTS_TESTING_TEST_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/testing/test_blob.h"
#include "lib/tree/merkle_params.h"
#include "proto/verity/v1/verity.grpc.pb.h"
#include "server/server_options.h"
#include "server/verityd.h"

namespace verity::testing {

// A fresh directory under $TEST_TMPDIR (or /tmp), unique per call.
std::string NewTempDir();

// Deterministic pseudo-random bytes (lib/testing/test_blob.h).
using ::verity::RandomBytes;

class TestServer {
 public:
  // Defaults `options.listen` to 127.0.0.1:0 and the store root to a new temp
  // dir; waits until serving.
  static std::unique_ptr<TestServer> Start(server::ServerOptions options = {});

  // Stops the server and starts a new one on the same store (and a new port).
  void Restart();

  server::Verityd& verityd() { return *server_; }
  const server::ServerOptions& options() const { return options_; }
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }
  v1::Verity::Stub& stub() { return *stub_; }

 private:
  explicit TestServer(server::ServerOptions options);
  void Connect();

  server::ServerOptions options_;
  std::unique_ptr<server::Verityd> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Verity::Stub> stub_;
};

// Names `digest` `name` with `statement` (none: "") through SetName; the
// status is the call's.
absl::StatusOr<v1::BlobInfo> SetName(v1::Verity::Stub& stub,
                                     absl::string_view name,
                                     absl::string_view digest,
                                     absl::string_view statement);

// Puts `data` in chunks of `chunk` bytes, its size in the header if `sized`.
// The status is the call's.
absl::StatusOr<v1::PutResponse> PutBlob(v1::Verity::Stub& stub,
                                        absl::string_view data,
                                        const MerkleParams& params = {},
                                        absl::string_view name = "",
                                        absl::string_view expected_digest = "",
                                        size_t chunk = 100000,
                                        bool sized = false);

// What a verifying read delivered: the verified bytes, and how the read ended.
struct ReadResult {
  absl::Status status;
  std::string data;
};

// Reads [offset, offset + length) of the blob `digest` (or `name`, if digest is
// empty) through the client's verifying reader.
// Puts `data` after `header`, in chunks of `chunk` bytes. The status is the
// call's.
absl::StatusOr<v1::PutResponse> PutWithHeader(v1::Verity::Stub& stub,
                                              const v1::PutHeader& header,
                                              absl::string_view data,
                                              size_t chunk = 100000);

ReadResult ReadBlob(v1::Verity::Stub& stub, absl::string_view digest,
                    uint64_t offset = 0, uint64_t length = 0,
                    absl::string_view name = "");

// Where a stored blob is in `server`'s file store, per the store's documented
// layout: the directory of its `data` and `tree` files, or, for a blob a
// sized Put stored under FileStoreOptions::record_max_bytes, its record file.
std::string BlobDir(const TestServer& server, absl::string_view digest);

// Flips one bit of the byte at `offset` of the file at `path`, in place.
void FlipBit(const std::string& path, uint64_t offset);

// The digest text `fsverity digest` would print for `data`.
std::string DigestOf(absl::string_view data, const MerkleParams& params = {});

}  // namespace verity::testing

#endif  // VERITYD_TESTS_TESTING_TEST_SERVER_H_
