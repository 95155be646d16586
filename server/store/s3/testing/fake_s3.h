// Test-only: an S3 bucket in memory behind the S3Transport seam, speaking
// the requests S3Store makes (objects with ETags, ranged GETs, put-if-absent
// and put-if-match, copies, multipart uploads, ListObjectsV2 with each
// object's time, ListMultipartUploads, DeleteObjects), that fails chosen
// requests as a flaky S3 or network would: 5xx, a timeout or a reset (before
// or after the request took effect), a truncated or corrupted body; and
// stops the process at any request. By default it answers every request
// before Start() returns; it can answer blob reads later, on its own threads,
// as the curl client does.

#ifndef VERITYD_SERVER_STORE_S3_TESTING_FAKE_S3_H_
#define VERITYD_SERVER_STORE_S3_TESTING_FAKE_S3_H_

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
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

// How FakeS3 answers. Plain value; the defaults answer every request before
// Start() returns.
struct FakeS3Options {
  // If set, a GET into the caller's buffer (S3Request::into: a blob's ranged
  // read) is answered later, on one of `answer_threads` threads, after a
  // random delay of up to `max_get_delay` drawn from `seed`: its bytes land
  // in the buffer and `done` runs only then, out of order, as with a real
  // S3. What that exposes is the reader's assumption that a read completes
  // at once. Other requests are still answered at once.
  bool answer_gets_later = false;
  absl::Duration max_get_delay = absl::Milliseconds(3);
  uint32_t seed = 1;
  int answer_threads = 2;
};

// Thread-safe. Destroying it answers the GETs still waiting first, as the
// curl client completes its transfers when it goes: give it to one S3Client
// alone, so that this happens before what their callbacks reach is gone.
class FakeS3 final : public S3Transport {
 public:
  FakeS3() : FakeS3(FakeS3Options()) {}
  explicit FakeS3(const FakeS3Options& options);
  FakeS3(const FakeS3&) = delete;
  FakeS3& operator=(const FakeS3&) = delete;
  ~FakeS3() override;

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
  // Makes the objects under `prefix` look written `by` earlier (their
  // LastModified in listings).
  void Backdate(const std::string& prefix, absl::Duration by)
      ABSL_LOCKS_EXCLUDED(mu_);

  // GETs answered later so far (FakeS3Options::answer_gets_later).
  int answered_later() const ABSL_LOCKS_EXCLUDED(delay_mu_);

  void Start(S3Request request,
             absl::AnyInvocable<void(S3Response) &&> done) override
      ABSL_LOCKS_EXCLUDED(mu_, delay_mu_);

 private:
  using Done = absl::AnyInvocable<void(S3Response) &&>;
  struct Upload {
    std::string key;
    std::map<int, std::string> parts;
  };
  // A GET waiting for its answer.
  struct Pending {
    S3Request request;
    Done done;
  };

  // Answers `request` now, on this thread.
  void AnswerNow(S3Request request, Done done) ABSL_LOCKS_EXCLUDED(mu_);
  // Queues `request` to be answered later; false (and nothing taken) if it
  // is to be answered now.
  bool Delay(S3Request& request, Done& done) ABSL_LOCKS_EXCLUDED(delay_mu_);
  // An answer thread: answers each pending GET when it is due, until the
  // queue is empty and the fake is being destroyed.
  void AnswerDue() ABSL_LOCKS_EXCLUDED(delay_mu_);
  // Waits for the next GET that is due; nullopt once there is none left to
  // wait for.
  std::optional<Pending> NextDue() ABSL_LOCKS_EXCLUDED(delay_mu_);

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
  S3Response DeleteMany(const S3Request& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  S3Response List(const S3Request& request) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Stores `bytes` as `key` under a new ETag, which it returns.
  std::string SetObject(const std::string& key, std::string bytes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  S3Response ListUploads() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, std::string> objects_ ABSL_GUARDED_BY(mu_);
  // Each object's ETag: a new one for every write, as S3's changes with the
  // content.
  std::map<std::string, std::string> etags_ ABSL_GUARDED_BY(mu_);
  // When each object was last written.
  std::map<std::string, absl::Time> times_ ABSL_GUARDED_BY(mu_);
  uint64_t next_etag_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, Upload> uploads_ ABSL_GUARDED_BY(mu_);  // by id
  int next_upload_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::pair<S3Fault, int>> faults_ ABSL_GUARDED_BY(mu_);  // seen
  int requests_ ABSL_GUARDED_BY(mu_) = 0;
  int crash_at_ ABSL_GUARDED_BY(mu_) = 0;  // a request; 0: none
  bool crashed_ ABSL_GUARDED_BY(mu_) = false;
  int faults_hit_ ABSL_GUARDED_BY(mu_) = 0;
  std::string last_hit_ ABSL_GUARDED_BY(mu_);

  const FakeS3Options options_;
  // The GETs answered later; never held while answering.
  mutable absl::Mutex delay_mu_;
  absl::CondVar wake_;  // a GET was queued, or the fake is going
  // By due time; equal ones in the order they came.
  std::multimap<absl::Time, Pending> pending_ ABSL_GUARDED_BY(delay_mu_);
  std::mt19937 random_ ABSL_GUARDED_BY(delay_mu_);
  bool stopping_ ABSL_GUARDED_BY(delay_mu_) = false;
  int answered_later_ ABSL_GUARDED_BY(delay_mu_) = 0;
  std::vector<std::thread> answerers_;  // last: they use the members above
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_S3_TESTING_FAKE_S3_H_
