// Implements DispatchMetrics.

#include "server/dispatch/dispatch_metrics.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "server/metrics/histogram_quantile.h"

namespace verity::server {
namespace {

// The reasons each path can have.
bool Possible(DispatchPath path, DispatchReason reason) {
  switch (reason) {
    case DispatchReason::kForced:
      return true;
    case DispatchReason::kWithinLimit:
      return path == DispatchPath::kInline;
    case DispatchReason::kSize:
    case DispatchReason::kCacheMiss:
    case DispatchReason::kBudget:
      return path == DispatchPath::kPool;
  }
  return false;
}

constexpr std::array<DispatchPath, kNumDispatchPaths> kPaths = {
    DispatchPath::kInline, DispatchPath::kPool};

}  // namespace

prometheus::Histogram::BucketBoundaries FineLatencyBuckets() {
  prometheus::Histogram::BucketBoundaries bounds;
  for (int k = 0; k <= 40; ++k) bounds.push_back(1e-6 * std::pow(2.0, k / 2.0));
  return bounds;
}

DispatchMetrics::DispatchMetrics(prometheus::Registry& registry) {
  auto& placements =
      prometheus::BuildCounter()
          .Name("verityd_dispatch_total")
          .Help(
              "Read requests placed on a verification path, by class and "
              "reason; a fallback from inline counts once on each path")
          .Register(registry);
  for (DispatchPath path : kPaths) {
    for (PriorityClass c : kAllPriorityClasses) {
      for (int r = 0; r < kNumDispatchReasons; ++r) {
        const auto reason = static_cast<DispatchReason>(r);
        if (!Possible(path, reason)) continue;
        placements_[static_cast<int>(path)][Index(c)][r] = &placements.Add(
            {{"path", std::string(DispatchPathName(path))},
             {"priority_class", std::string(PriorityClassName(c))},
             {"reason", std::string(DispatchReasonName(reason))}});
      }
    }
  }
  auto& verify = prometheus::BuildHistogram()
                     .Name("verityd_verify_duration_seconds")
                     .Help(
                         "Time to read and verify one response's data "
                         "blocks, by verification path")
                     .Register(registry);
  for (DispatchPath path : kPaths) {
    verify_[static_cast<int>(path)] = &verify.Add(
        {{"path", std::string(DispatchPathName(path))}}, FineLatencyBuckets());
  }
  fec_repairs_ =
      &prometheus::BuildCounter()
           .Name("verityd_fec_repairs_total")
           .Help(
               "FEC repairs of an RS group run, each for every read of the "
               "group that waited for it")
           .Register(registry)
           .Add({});
  fec_repair_joins_ =
      &prometheus::BuildCounter()
           .Name("verityd_fec_repair_joins_total")
           .Help(
               "Reads that met a bad block whose RS group was queued or "
               "under repair already, and waited for that repair")
           .Register(registry)
           .Add({});
  fec_repaired_blocks_ =
      &prometheus::BuildCounter()
           .Name("verityd_fec_repaired_blocks_total")
           .Help(
               "Blocks that failed verification, rebuilt from the blob's "
               "FEC area, verified again and written back")
           .Register(registry)
           .Add({});
  fec_repair_failures_ =
      &prometheus::BuildCounter()
           .Name("verityd_fec_repair_failures_total")
           .Help(
               "FEC repairs that could not rebuild the bad block (more bad "
               "blocks in its RS group than roots, damaged parity, a failed "
               "write); the read then fails with DATA_LOSS")
           .Register(registry)
           .Add({});
  auto& wait = prometheus::BuildHistogram()
                   .Name("verityd_verify_queue_wait_seconds")
                   .Help(
                       "Time verification work waited in the pool's queue "
                       "before a pool thread started it")
                   .Register(registry);
  for (PriorityClass c : kAllPriorityClasses) {
    queue_wait_[Index(c)] =
        &wait.Add({{"priority_class", std::string(PriorityClassName(c))}},
                  FineLatencyBuckets());
  }
  auto& limit = prometheus::BuildGauge()
                    .Name("verityd_dispatch_inline_limit_bytes")
                    .Help(
                        "The largest Read request verified inline, by class: "
                        "calibrated at start-up, then tuned online")
                    .Register(registry);
  for (PriorityClass c : kAllPriorityClasses) {
    inline_limit_[Index(c)] =
        &limit.Add({{"priority_class", std::string(PriorityClassName(c))}});
  }
}

void DispatchMetrics::CountPlacement(DispatchPath path,
                                     PriorityClass priority_class,
                                     DispatchReason reason) {
  prometheus::Counter* counter =
      placements_[static_cast<int>(path)][Index(priority_class)]
                 [static_cast<int>(reason)];
  if (counter != nullptr) counter->Increment();
}

void DispatchMetrics::ObserveVerify(DispatchPath path,
                                    absl::Duration duration) {
  verify_[static_cast<int>(path)]->Observe(absl::ToDoubleSeconds(duration));
}

void DispatchMetrics::SetInlineLimit(PriorityClass priority_class,
                                     uint64_t bytes) {
  inline_limit_[Index(priority_class)]->Set(static_cast<double>(bytes));
}

void DispatchMetrics::ObserveQueueWait(PriorityClass priority_class,
                                       absl::Duration wait) {
  queue_wait_[Index(priority_class)]->Observe(absl::ToDoubleSeconds(wait));
}

uint64_t DispatchMetrics::placements(DispatchPath path,
                                     PriorityClass priority_class,
                                     DispatchReason reason) const {
  const prometheus::Counter* counter =
      placements_[static_cast<int>(path)][Index(priority_class)]
                 [static_cast<int>(reason)];
  return counter == nullptr ? 0 : static_cast<uint64_t>(counter->Value());
}

uint64_t DispatchMetrics::verify_count(DispatchPath path) const {
  return verify_[static_cast<int>(path)]->Collect().histogram.sample_count;
}

uint64_t DispatchMetrics::queue_wait_count(PriorityClass priority_class) const {
  return queue_wait_[Index(priority_class)]->Collect().histogram.sample_count;
}

std::vector<std::string> DispatchMetrics::Summary() const {
  std::vector<std::string> lines;
  for (DispatchPath path : kPaths) {
    for (PriorityClass c : kAllPriorityClasses) {
      for (int r = 0; r < kNumDispatchReasons; ++r) {
        const auto reason = static_cast<DispatchReason>(r);
        const uint64_t n = placements(path, c, reason);
        if (n == 0) continue;
        lines.push_back(
            absl::StrCat("stats dispatch path=", DispatchPathName(path),
                         " class=", PriorityClassName(c),
                         " reason=", DispatchReasonName(reason), " count=", n));
      }
    }
  }
  for (DispatchPath path : kPaths) {
    const auto h = verify_[static_cast<int>(path)]->Collect().histogram;
    if (h.sample_count == 0) continue;
    lines.push_back(absl::StrCat("stats verify path=", DispatchPathName(path),
                                 " count=", h.sample_count, " ",
                                 QuantileFieldsUs(h)));
  }
  for (PriorityClass c : kAllPriorityClasses) {
    const auto h = queue_wait_[Index(c)]->Collect().histogram;
    if (h.sample_count == 0) continue;
    lines.push_back(
        absl::StrCat("stats queue_wait class=", PriorityClassName(c),
                     " count=", h.sample_count, " ", QuantileFieldsUs(h)));
  }
  return lines;
}

void DispatchMetrics::CountFecRepairRun() { fec_repairs_->Increment(); }

void DispatchMetrics::CountFecRepairJoined() { fec_repair_joins_->Increment(); }

void DispatchMetrics::CountFecRepaired(uint64_t blocks) {
  fec_repaired_blocks_->Increment(static_cast<double>(blocks));
}

void DispatchMetrics::CountFecRepairFailure() {
  fec_repair_failures_->Increment();
}

uint64_t DispatchMetrics::fec_repairs() const {
  return static_cast<uint64_t>(fec_repairs_->Value());
}

uint64_t DispatchMetrics::fec_repair_joins() const {
  return static_cast<uint64_t>(fec_repair_joins_->Value());
}

uint64_t DispatchMetrics::fec_repaired_blocks() const {
  return static_cast<uint64_t>(fec_repaired_blocks_->Value());
}

uint64_t DispatchMetrics::fec_repair_failures() const {
  return static_cast<uint64_t>(fec_repair_failures_->Value());
}

}  // namespace verity::server
