// The options of an S3 store whose client talks to a test's S3Transport (a
// FakeS3, or a transport of the test's own) instead of a network.

#ifndef VERITYD_SERVER_STORE_S3_TESTING_FAKE_S3_STORE_H_
#define VERITYD_SERVER_STORE_S3_TESTING_FAKE_S3_STORE_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "server/store/s3/s3_client.h"
#include "server/store/s3/s3_store.h"

namespace verity::server {

// Bucket "bucket", prefix "p/", S3's smallest part (5 MiB), the log dropped,
// every client made over `transport`. Tests change what they need.
S3StoreOptions FakeS3StoreOptions(std::shared_ptr<S3Transport> transport);

// The object `key` as the bucket holds it, read by `client` as anyone with
// the bucket's credentials could; NOT_FOUND if there is none.
absl::StatusOr<std::string> ReadObject(S3Client& client,
                                       const std::string& key);
// Writes `body` over `key` the same way.
absl::Status WriteObject(S3Client& client, const std::string& key,
                         std::string body);

// Counts the requests of each operation (S3Request::op) on their way to
// another transport, and runs `before` (if set) on each first: a test's
// step between two of a store's requests. Thread-safe.
class CountingTransport final : public S3Transport {
 public:
  explicit CountingTransport(std::shared_ptr<S3Transport> inner)
      : inner_(std::move(inner)) {}
  void Start(S3Request request,
             absl::AnyInvocable<void(S3Response) &&> done) override {
    std::function<void(const S3Request&)> hook;
    {
      absl::MutexLock lock(&mu);
      ++ops[request.op];
      hook = before;
    }
    if (hook) hook(request);
    inner_->Start(std::move(request), std::move(done));
  }

  absl::Mutex mu;
  absl::flat_hash_map<std::string, int> ops ABSL_GUARDED_BY(mu);
  std::function<void(const S3Request&)> before ABSL_GUARDED_BY(mu);

 private:
  const std::shared_ptr<S3Transport> inner_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_S3_TESTING_FAKE_S3_STORE_H_
