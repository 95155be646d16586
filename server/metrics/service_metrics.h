// The Verity service's metrics: the latency of every call, as
// verityd_rpc_duration_seconds{method, priority_class, code}, from the call's
// arrival to its end (for streams, the last message and the status
// delivered); bytes read by class and put; corruption detected. Every counter
// and the latency of every successful call exist from construction; the
// latency of a failed call with a given code is made on first use. All are
// then found by array index: nothing is looked up by label on the hot path.

#ifndef VERITYD_SERVER_METRICS_SERVICE_METRICS_H_
#define VERITYD_SERVER_METRICS_SERVICE_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/base/priority_class.h"

namespace verity::server {

enum class RpcMethod {
  kPut = 0,
  kRead,
  kStat,
  kList,
  kDelete,
  kSetName,
  kReadSmall,
  kFindMissing,
  kBatchRead,
  kHistory,
  kCollect,
  kScrub,
  kBatchUpdate,
  kLogConsistency,
  kReadLog
};
inline constexpr int kNumRpcMethods = 15;

// "Put", "Read", "Stat", "List", "Delete", "SetName", "ReadSmall",
// "FindMissing", "BatchRead", "History", "Collect", "Scrub", "BatchUpdate",
// "LogConsistency", "ReadLog".
absl::string_view RpcMethodName(RpcMethod method);

// What a DATA_LOSS was found in: a data block, or the tree (or descriptor)
// that authenticates it.
enum class CorruptionKind { kData = 0, kTree = 1 };

// Thread-safe.
class ServiceMetrics {
 public:
  // `registry` must outlive this.
  explicit ServiceMetrics(prometheus::Registry& registry);

  // Calls without a priority class (all but Read, ReadSmall and BatchRead)
  // pass kNone.
  void Observe(RpcMethod method, PriorityClass priority_class,
               absl::StatusCode code, absl::Duration duration)
      ABSL_LOCKS_EXCLUDED(mu_);

  void AddReadBytes(PriorityClass priority_class, uint64_t bytes) {
    read_bytes_[Index(priority_class)]->Increment(static_cast<double>(bytes));
  }
  void AddPutBytes(uint64_t bytes) {
    put_bytes_->Increment(static_cast<double>(bytes));
  }
  void CountCorruption(CorruptionKind kind) {
    corruption_[static_cast<int>(kind)]->Increment();
  }

  // One "stats rpc method=... class=... code=... count=N p50_us=..." line per
  // series observed.
  std::vector<std::string> Summary() const;

 private:
  static constexpr int kNumCodes = 17;  // absl::StatusCode 0..16
  static size_t Slot(RpcMethod method, PriorityClass priority_class,
                     absl::StatusCode code);
  prometheus::Histogram* Create(RpcMethod method, PriorityClass priority_class,
                                absl::StatusCode code) ABSL_LOCKS_EXCLUDED(mu_);

  prometheus::Family<prometheus::Histogram>& family_;
  std::array<prometheus::Counter*, kNumPriorityClasses> read_bytes_{};
  prometheus::Counter* put_bytes_ = nullptr;
  std::array<prometheus::Counter*, 2> corruption_{};
  absl::Mutex mu_;  // serializes making a child
  std::array<std::atomic<prometheus::Histogram*>,
             kNumRpcMethods * kNumPriorityClasses * kNumCodes>
      children_{};
};

// Times one call and records it when destroyed: a member of a stream's
// reactor (destroyed in OnDone), or a local of a unary handler.
class CallTimer {
 public:
  CallTimer(ServiceMetrics* metrics, RpcMethod method)
      : metrics_(metrics), method_(method), start_(absl::Now()) {}
  ~CallTimer() {
    metrics_->Observe(method_, priority_class_, code_, absl::Now() - start_);
  }
  CallTimer(const CallTimer&) = delete;
  CallTimer& operator=(const CallTimer&) = delete;

  void set_priority_class(PriorityClass c) { priority_class_ = c; }
  void set_code(absl::StatusCode code) { code_ = code; }

 private:
  ServiceMetrics* const metrics_;
  const RpcMethod method_;
  const absl::Time start_;
  PriorityClass priority_class_ = PriorityClass::kNone;
  absl::StatusCode code_ = absl::StatusCode::kOk;
};

// From 25 µs to about 13 s, sqrt(2) apart.
prometheus::Histogram::BucketBoundaries RpcLatencyBuckets();

}  // namespace verity::server

#endif  // VERITYD_SERVER_METRICS_SERVICE_METRICS_H_
