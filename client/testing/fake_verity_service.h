// Test support: an in-memory verityd on 127.0.0.1:0 that streams honest Read
// responses, with a hook to tamper with them, and keeps names' statements
// unchecked, for testing the SDK and the CLI without the real server.

#ifndef VERITYD_CLIENT_TESTING_FAKE_VERITY_SERVICE_H_
#define VERITYD_CLIENT_TESTING_FAKE_VERITY_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "client/testing/read_stream_fixture.h"
#include "proto/verity/v1/verity.grpc.pb.h"

namespace verity::client {

// Thread-safe. Blobs are kept whole in memory, keyed by digest text.
class FakeVerityService final : public verity::v1::Verity::Service {
 public:
  // Rewrites a Read stream before it is sent.
  using Tamper = std::function<void(std::vector<verity::v1::ReadResponse>*)>;

  // Stores `blob`, optionally under `name` (whose statement stays as it
  // was: a bucket writer re-pointing a name).
  void Add(const TestBlob& blob, const std::string& name = "")
      ABSL_LOCKS_EXCLUDED(mu_);
  // Replaces the statement stored with `name` (empty removes it), which Stat
  // and Read by name then return, as a bucket writer could.
  void SetStatement(const std::string& name, std::string statement)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Replaces the fs-verity signature stored with the blob `digest_text`
  // (empty removes it), which Stat and the first Read message then carry.
  void SetSignature(const std::string& digest_text, std::string signature)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The statement stored with `name`; empty if none.
  std::string Statement(const std::string& name) const ABSL_LOCKS_EXCLUDED(mu_);
  void SetTamper(Tamper tamper) ABSL_LOCKS_EXCLUDED(mu_);
  // The status each Read ends with after its (tampered) stream; OK unless
  // set. With a tamper that truncates, this makes a broken stream.
  void SetReadStatus(std::function<grpc::Status()> status)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Caps List pages, as the real server caps them at 1000.
  void SetMaxPageSize(uint32_t max_page_size) ABSL_LOCKS_EXCLUDED(mu_);
  // The content stored for `digest_text`; empty if none.
  std::string Content(const std::string& digest_text) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // The last ReadRequest received, and every one.
  verity::v1::ReadRequest last_read() const ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<verity::v1::ReadRequest> reads() const ABSL_LOCKS_EXCLUDED(mu_);

  grpc::Status Put(grpc::ServerContext* context,
                   grpc::ServerReader<verity::v1::PutRequest>* reader,
                   verity::v1::PutResponse* response) override
      ABSL_LOCKS_EXCLUDED(mu_);
  grpc::Status Read(
      grpc::ServerContext* context, const verity::v1::ReadRequest* request,
      grpc::ServerWriter<verity::v1::ReadResponse>* writer) override
      ABSL_LOCKS_EXCLUDED(mu_);
  grpc::Status Stat(grpc::ServerContext* context,
                    const verity::v1::StatRequest* request,
                    verity::v1::BlobInfo* response) override
      ABSL_LOCKS_EXCLUDED(mu_);
  grpc::Status List(grpc::ServerContext* context,
                    const verity::v1::ListRequest* request,
                    verity::v1::ListResponse* response) override
      ABSL_LOCKS_EXCLUDED(mu_);
  grpc::Status Delete(grpc::ServerContext* context,
                      const verity::v1::DeleteRequest* request,
                      verity::v1::DeleteResponse* response) override
      ABSL_LOCKS_EXCLUDED(mu_);
  // Stores the name and statement as given: the fake checks no statement.
  grpc::Status SetName(grpc::ServerContext* context,
                       const verity::v1::SetNameRequest* request,
                       verity::v1::BlobInfo* response) override
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // The digest text `digest` or `name` refers to; empty if none.
  std::string Resolve(const std::string& digest, const std::string& name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  verity::v1::BlobInfo InfoOf(const std::string& digest_text) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The statement of `name`, as Stat and Read by name return it.
  std::string StatementLocked(const std::string& name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SetNameLocked(const std::string& name, const std::string& digest_text,
                     const std::string& statement)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<verity::v1::ReadResponse> StreamFor(
      const verity::v1::ReadRequest& request, const TestBlob& blob) const;

  mutable absl::Mutex mu_;
  std::map<std::string, TestBlob> blobs_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> names_ ABSL_GUARDED_BY(mu_);
  // Name -> its statement, for the names that have one.
  std::map<std::string, std::string> statements_ ABSL_GUARDED_BY(mu_);
  // Digest text -> the blob's fs-verity signature, for blobs that have one.
  std::map<std::string, std::string> signatures_ ABSL_GUARDED_BY(mu_);
  Tamper tamper_ ABSL_GUARDED_BY(mu_);
  uint32_t max_page_size_ ABSL_GUARDED_BY(mu_) = 1000;
  std::function<grpc::Status()> read_status_ ABSL_GUARDED_BY(mu_);
  std::vector<verity::v1::ReadRequest> reads_ ABSL_GUARDED_BY(mu_);
};

// A gRPC server running a FakeVerityService on an ephemeral local port.
// Thread-compatible; shuts down on destruction.
class FakeVerityServer {
 public:
  FakeVerityServer();
  ~FakeVerityServer();

  FakeVerityService& service() { return service_; }
  // "127.0.0.1:PORT".
  const std::string& address() const { return address_; }

 private:
  FakeVerityService service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

}  // namespace verity::client

#endif  // VERITYD_CLIENT_TESTING_FAKE_VERITY_SERVICE_H_
