// Test-only: a Verity service in front of a real verityd that breaks, stalls
// or corrupts Read streams on purpose, and records every ReadRequest, to test
// how the SDK resumes and what it tells the server. It answers ReadSmall as a
// server from before that call did (UNIMPLEMENTED), or forwards it; so too
// BatchRead.

#ifndef VERITYD_TESTS_SDK_FLAKY_PROXY_H_
#define VERITYD_TESTS_SDK_FLAKY_PROXY_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "proto/verity/v1/verity.grpc.pb.h"

namespace verity::testing {

// Thread-safe. Forwards Read, Stat and List, and ReadSmall if asked to; Put
// and Delete go to the server directly.
class FlakyProxy final : public v1::Verity::Service {
 public:
  struct Options {
    // A broken stream forwards a number of messages drawn uniformly from
    // [min_messages, max_messages], then ends with `code` (or, if `stall`,
    // waits until the client gives up). max_messages < 0: never break.
    int min_messages = 0;
    int max_messages = -1;
    grpc::StatusCode code = grpc::StatusCode::UNAVAILABLE;
    bool stall = false;
    // Flips a bit in the data of this message of every stream; -1: none.
    int corrupt_message = -1;
    uint32_t seed = 1;
    // ReadSmall: forwarded, or UNIMPLEMENTED; if `corrupt_small_reads`, with
    // a bit of its data flipped.
    bool serve_small_reads = false;
    bool corrupt_small_reads = false;
    // BatchRead: forwarded, or UNIMPLEMENTED; a bit of the data of the
    // answer's blob of this index flipped; -1: none.
    bool serve_batch_reads = false;
    int corrupt_batch_blob = -1;
  };

  FlakyProxy(std::shared_ptr<grpc::Channel> upstream, Options options);

  std::vector<v1::ReadRequest> reads() const ABSL_LOCKS_EXCLUDED(mu_);
  // ReadSmall calls, served or not.
  std::vector<v1::ReadRequest> small_reads() const ABSL_LOCKS_EXCLUDED(mu_);
  int broken_streams() const ABSL_LOCKS_EXCLUDED(mu_);

  grpc::Status Read(grpc::ServerContext* context,
                    const v1::ReadRequest* request,
                    grpc::ServerWriter<v1::ReadResponse>* writer) override;
  grpc::Status ReadSmall(grpc::ServerContext* context,
                         const v1::ReadRequest* request,
                         v1::ReadResponse* response) override;
  grpc::Status BatchRead(grpc::ServerContext* context,
                         const v1::BatchReadRequest* request,
                         v1::BatchReadResponse* response) override;
  grpc::Status Stat(grpc::ServerContext* context,
                    const v1::StatRequest* request,
                    v1::BlobInfo* response) override;
  grpc::Status List(grpc::ServerContext* context,
                    const v1::ListRequest* request,
                    v1::ListResponse* response) override;

 private:
  // Records the request; returns how many messages its stream forwards
  // before it breaks, or -1 for all.
  int Limit(const v1::ReadRequest& request) ABSL_LOCKS_EXCLUDED(mu_);
  // Cancels the upstream stream and waits for it to end.
  static void Abandon(grpc::ClientContext* context,
                      grpc::ClientReader<v1::ReadResponse>& reader);
  // Ends a client stream the way options_ says.
  grpc::Status Break(grpc::ServerContext* context, int sent)
      ABSL_LOCKS_EXCLUDED(mu_);

  const std::unique_ptr<v1::Verity::Stub> upstream_;
  const Options options_;
  mutable absl::Mutex mu_;
  std::mt19937 rng_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::ReadRequest> reads_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::ReadRequest> small_reads_ ABSL_GUARDED_BY(mu_);
  int broken_ ABSL_GUARDED_BY(mu_) = 0;
};

// A FlakyProxy serving on 127.0.0.1:0; shuts down on destruction.
class ProxyServer {
 public:
  ProxyServer(std::shared_ptr<grpc::Channel> upstream,
              FlakyProxy::Options options);
  ~ProxyServer();

  FlakyProxy& proxy() { return proxy_; }
  // "127.0.0.1:PORT".
  const std::string& address() const { return address_; }

 private:
  FlakyProxy proxy_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

}  // namespace verity::testing

#endif  // VERITYD_TESTS_SDK_FLAKY_PROXY_H_
