// Test-only: an S3 bucket in memory behind the S3Transport seam, speaking
// the requests S3Store makes (objects, ranged GETs, put-if-absent, copies,
// multipart uploads, ListObjectsV2, ListMultipartUploads), that fails chosen
// requests as a flaky S3 or network would: 5xx, a timeout or a reset (before
// or after the request took effect), a truncated or corrupted body; and
// stops the process at any request.

#ifndef VERITYD_SERVER_STORE_S3_FAKE_S3_H_
#define VERITYD_SERVER_STORE_S3_FAKE_S3_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "server/store/s3/s3_client.h"

namespace verity::server {

enum class S3FaultKind {
  kHttp503,   // 503 SlowDown
  kHttp500,   // 500 InternalError
  kTimeout,   // no answer in time (HTTP status 0)
  kReset,     // connection reset (HTTP status 0)
  kTruncate,  // a 2xx GET whose body carries half the bytes
  kCorrupt,   // a 2xx GET with one bit of its body flipped
};

// Which requests fail, and how. Plain value.
struct S3Fault {
  std::string op;  // S3Request::op to match ("PutObject", "GetData", ...);
                   // empty: any
  int nth = 0;     // the matching request it hits, from 1; 0: every one
  S3FaultKind kind = S3FaultKind::kHttp503;
  // The request takes effect and only its answer is lost (5xx, timeout,
  // reset): the ambiguous failure a retry must tolerate.
  bool applied = false;
};

// Thread-safe. Answers every request before Start() returns.
class FakeS3 final : public S3Transport {
 public:
  void Inject(S3Fault fault) ABSL_LOCKS_EXCLUDED(mu_);
  // The process stops just before the nth request from now: it and every
  // later one fail (UNAVAILABLE) without taking effect.
  void CrashAtRequest(int nth) ABSL_LOCKS_EXCLUDED(mu_);
  // Forgets the faults and the crash point.
  void Reset() ABSL_LOCKS_EXCLUDED(mu_);
  bool crashed() const ABSL_LOCKS_EXCLUDED(mu_);
  int faults_hit() const ABSL_LOCKS_EXCLUDED(mu_);
  // "PutObject KEY" of the last request a fault hit.
  std::string last_hit() const ABSL_LOCKS_EXCLUDED(mu_);

  // The keys stored under `prefix`, and the multipart uploads in progress.
  std::vector<std::string> Keys(const std::string& prefix) const
      ABSL_LOCKS_EXCLUDED(mu_);
  size_t uploads() const ABSL_LOCKS_EXCLUDED(mu_);

  void Start(S3Request request,
             absl::AnyInvocable<void(S3Response) &&> done) override
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Upload {
    std::string key;
    std::map<int, std::string> parts;
  };

  // The fault for this request, if one hits it.
  const S3Fault* Check(const S3Request& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  S3Response Handle(const S3Request& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  S3Response Get(const S3Request& request) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  S3Response Put(const S3Request& request) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  S3Response Post(const S3Request& request) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  S3Response Delete(const S3Request& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  S3Response List(const S3Request& request) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  S3Response ListUploads() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, std::string> objects_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Upload> uploads_ ABSL_GUARDED_BY(mu_);  // by id
  int next_upload_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::pair<S3Fault, int>> faults_ ABSL_GUARDED_BY(mu_);  // seen
  int requests_ ABSL_GUARDED_BY(mu_) = 0;
  int crash_at_ ABSL_GUARDED_BY(mu_) = 0;  // a request; 0: none
  bool crashed_ ABSL_GUARDED_BY(mu_) = false;
  int faults_hit_ ABSL_GUARDED_BY(mu_) = 0;
  std::string last_hit_ ABSL_GUARDED_BY(mu_);
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_S3_FAKE_S3_H_
