// What dispatch_load reads from: verityd (its Read stream or ReadSmall call,
// the client not verifying; or the SDK, the client verifying with its tree
// cached, which reads ranges that fit with ReadSmall) or the
// bare gRPC echo server (echo_server.cc), behind one interface so that every
// target runs under the same client harness.

#ifndef VERITYD_TESTS_BENCH_LOAD_TARGET_H_
#define VERITYD_TESTS_BENCH_LOAD_TARGET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/verity/v1/verity.pb.h"

namespace verity::bench {

// The bytes reads choose offsets in.
struct BlobShape {
  uint64_t data_size = 0;
  uint64_t block_size = 0;
};

// What each read of one client asks for.
struct ReadSpec {
  uint64_t length = 0;
  v1::PriorityClass priority_class = v1::PRIORITY_CLASS_NONE;  // verityd only
};

// One client: its own connection. Not thread-safe: one thread uses it.
class LoadReader {
 public:
  virtual ~LoadReader() = default;
  // Reads [offset, offset + length); OK only if every byte came (and, for a
  // verifying client, was verified).
  virtual absl::Status Read(uint64_t offset) = 0;
  // SDK clients: resumed or retried Read streams, and tree blocks received,
  // since the reader was ready (after its warm-up); 0 for the others.
  virtual uint64_t retries() const { return 0; }
  virtual uint64_t tree_blocks_received() const { return 0; }
};

// A server to read from. Thread-safe: NewReader may be called from any
// number of threads at once.
class LoadTarget {
 public:
  virtual ~LoadTarget() = default;
  virtual absl::StatusOr<BlobShape> Shape() const = 0;
  // Connects a new client (and, for a verifying one, fetches the whole blob
  // once so that its tree cache holds every tree block) before returning.
  virtual absl::StatusOr<std::unique_ptr<LoadReader>> NewReader(
      const ReadSpec& spec) const = 0;
};

// What --target names: the kind of server and how a client reads from it.
struct TargetOptions {
  std::string kind;         // one of TargetKinds()
  std::string address;      // host:port
  std::string digest;       // verityd: the blob to read
  uint64_t echo_bytes = 0;  // echo: the server's buffer size (--bytes)
};

// "verityd", "verityd_small", "verityd_verified", "echo_unary",
// "echo_stream".
std::vector<std::string> TargetKinds();

// INVALID_ARGUMENT for an unknown kind.
absl::StatusOr<std::unique_ptr<LoadTarget>> MakeLoadTarget(
    const TargetOptions& options);

}  // namespace verity::bench

#endif  // VERITYD_TESTS_BENCH_LOAD_TARGET_H_
