// Implements ServiceMetrics.

#include "server/metrics/service_metrics.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/metrics/histogram_quantile.h"

namespace verity::server {
namespace {

constexpr std::array<absl::string_view, kNumRpcMethods> kMethodNames = {
    "Put",     "Read",      "Stat",        "List",           "Delete",
    "SetName", "ReadSmall", "FindMissing", "BatchRead",      "History",
    "Collect", "Scrub",     "BatchUpdate", "LogConsistency", "ReadLog"};

// "OK", "NOT_FOUND", ...: gRPC's spelling.
std::string CodeName(absl::StatusCode code) {
  return absl::StatusCodeToString(code);
}

}  // namespace

absl::string_view RpcMethodName(RpcMethod method) {
  return kMethodNames[static_cast<int>(method)];
}

prometheus::Histogram::BucketBoundaries RpcLatencyBuckets() {
  prometheus::Histogram::BucketBoundaries bounds;
  for (int k = 0; k <= 38; ++k) {
    bounds.push_back(25e-6 * std::pow(2.0, k / 2.0));
  }
  return bounds;
}

ServiceMetrics::ServiceMetrics(prometheus::Registry& registry)
    : family_(prometheus::BuildHistogram()
                  .Name("verityd_rpc_duration_seconds")
                  .Help("Time from a call's arrival to its end, by method, "
                        "priority class (Read only; others none) and status")
                  .Register(registry)) {
  auto& read_bytes = prometheus::BuildCounter()
                         .Name("verityd_read_bytes_total")
                         .Help("Data bytes sent by Read, verified, by class")
                         .Register(registry);
  for (PriorityClass c : kAllPriorityClasses) {
    read_bytes_[Index(c)] = &read_bytes.Add(
        {{"priority_class", std::string(PriorityClassName(c))}});
  }
  put_bytes_ = &prometheus::BuildCounter()
                    .Name("verityd_put_bytes_total")
                    .Help("Data bytes received by Put")
                    .Register(registry)
                    .Add({});
  auto& corruption =
      prometheus::BuildCounter()
          .Name("verityd_corruption_detected_total")
          .Help(
              "Blocks read from the store that failed verification, by "
              "what failed: a data block, or the tree or descriptor")
          .Register(registry);
  corruption_[static_cast<int>(CorruptionKind::kData)] =
      &corruption.Add({{"kind", "data"}});
  corruption_[static_cast<int>(CorruptionKind::kTree)] =
      &corruption.Add({{"kind", "tree"}});
  // Successful calls exist from the start, so that rate() sees the first
  // ones: a series that appears with its first calls already counted hides
  // them.
  for (int m = 0; m < kNumRpcMethods; ++m) {
    const auto method = static_cast<RpcMethod>(m);
    if (method != RpcMethod::kRead && method != RpcMethod::kReadSmall &&
        method != RpcMethod::kBatchRead) {
      Create(method, PriorityClass::kNone, absl::StatusCode::kOk);
      continue;
    }
    for (PriorityClass c : kAllPriorityClasses) {
      Create(method, c, absl::StatusCode::kOk);
    }
  }
}

size_t ServiceMetrics::Slot(RpcMethod method, PriorityClass priority_class,
                            absl::StatusCode code) {
  const int c = static_cast<int>(code);
  return (static_cast<size_t>(method) * kNumPriorityClasses +
          Index(priority_class)) *
             kNumCodes +
         (c >= 0 && c < kNumCodes
              ? c
              : static_cast<int>(absl::StatusCode::kUnknown));
}

void ServiceMetrics::Observe(RpcMethod method, PriorityClass priority_class,
                             absl::StatusCode code, absl::Duration duration) {
  std::atomic<prometheus::Histogram*>& child =
      children_[Slot(method, priority_class, code)];
  prometheus::Histogram* histogram = child.load(std::memory_order_acquire);
  if (histogram == nullptr) histogram = Create(method, priority_class, code);
  histogram->Observe(absl::ToDoubleSeconds(duration));
}

prometheus::Histogram* ServiceMetrics::Create(RpcMethod method,
                                              PriorityClass priority_class,
                                              absl::StatusCode code) {
  absl::MutexLock lock(&mu_);
  std::atomic<prometheus::Histogram*>& child =
      children_[Slot(method, priority_class, code)];
  if (prometheus::Histogram* made = child.load(std::memory_order_acquire)) {
    return made;
  }
  prometheus::Histogram* histogram = &family_.Add(
      {{"method", std::string(kMethodNames[static_cast<int>(method)])},
       {"priority_class", std::string(PriorityClassName(priority_class))},
       {"code", CodeName(code)}},
      RpcLatencyBuckets());
  child.store(histogram, std::memory_order_release);
  return histogram;
}

std::vector<std::string> ServiceMetrics::Summary() const {
  std::vector<std::string> lines;
  for (int m = 0; m < kNumRpcMethods; ++m) {
    for (PriorityClass c : kAllPriorityClasses) {
      for (int code = 0; code < kNumCodes; ++code) {
        const prometheus::Histogram* histogram =
            children_[Slot(static_cast<RpcMethod>(m), c,
                           static_cast<absl::StatusCode>(code))]
                .load(std::memory_order_acquire);
        if (histogram == nullptr) continue;
        const auto h = histogram->Collect().histogram;
        if (h.sample_count == 0) continue;
        lines.push_back(absl::StrFormat(
            "stats rpc method=%s class=%s code=%s count=%d %s", kMethodNames[m],
            PriorityClassName(c), CodeName(static_cast<absl::StatusCode>(code)),
            h.sample_count, QuantileFieldsUs(h)));
      }
    }
  }
  return lines;
}

}  // namespace verity::server
