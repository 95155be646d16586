// The metric work verityd does for one Read, timed alone: the call's latency
// (two clock reads and a histogram), its bytes, its dispatch placement and its
// verification time, plus the pool's queue wait when it goes there. Compared
// with a 4 KiB Read's whole server CPU cost by metrics_bench.sh.

#include <prometheus/registry.h>

#include "benchmark/benchmark.h"
#include "lib/base/priority_class.h"
#include "server/dispatch/dispatch_metrics.h"
#include "server/dispatch/dispatch_policy.h"
#include "server/metrics/service_metrics.h"

namespace verity::server {
namespace {

void BM_InlineReadMetrics(benchmark::State& state) {
  prometheus::Registry registry;
  ServiceMetrics service(registry);
  DispatchMetrics dispatch(registry);
  for (auto _ : state) {
    CallTimer timer(&service, RpcMethod::kRead);
    timer.set_priority_class(PriorityClass::kRt);
    dispatch.CountPlacement(DispatchPath::kInline, PriorityClass::kRt,
                            DispatchReason::kWithinLimit);
    const absl::Time start = absl::Now();
    dispatch.ObserveVerify(DispatchPath::kInline, absl::Now() - start);
    service.AddReadBytes(PriorityClass::kRt, 4096);
    timer.set_code(absl::StatusCode::kOk);
  }
}
BENCHMARK(BM_InlineReadMetrics);

void BM_PoolReadMetrics(benchmark::State& state) {
  prometheus::Registry registry;
  ServiceMetrics service(registry);
  DispatchMetrics dispatch(registry);
  for (auto _ : state) {
    CallTimer timer(&service, RpcMethod::kRead);
    timer.set_priority_class(PriorityClass::kBe);
    dispatch.CountPlacement(DispatchPath::kPool, PriorityClass::kBe,
                            DispatchReason::kSize);
    dispatch.ObserveQueueWait(PriorityClass::kBe, absl::Microseconds(8));
    const absl::Time start = absl::Now();
    dispatch.ObserveVerify(DispatchPath::kPool, absl::Now() - start);
    service.AddReadBytes(PriorityClass::kBe, 4096);
    timer.set_code(absl::StatusCode::kOk);
  }
}
BENCHMARK(BM_PoolReadMetrics);

}  // namespace
}  // namespace verity::server
