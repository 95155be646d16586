// Implements RepairCoordinator: the groups queued or under repair in a map
// under one lock, a ClassQueue of their keys, and an Executor task per key
// queued that runs the most urgent group.

#include "server/dispatch/repair_coordinator.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/store/fec_repair.h"

namespace verity::server {
namespace {

ExecutorOptions ThreadsOf(const RepairCoordinatorOptions& options) {
  ExecutorOptions threads;
  threads.threads = options.threads;
  // Bounded by max_groups: a group is queued at most once per class.
  threads.max_queued = SIZE_MAX;
  threads.name = options.name;
  return threads;
}

}  // namespace

RepairCoordinator::RepairCoordinator(const RepairCoordinatorOptions& options,
                                     std::shared_ptr<DispatchMetrics> metrics)
    : RepairCoordinator(options, std::move(metrics), RepairFecGroup) {}

RepairCoordinator::RepairCoordinator(const RepairCoordinatorOptions& options,
                                     std::shared_ptr<DispatchMetrics> metrics,
                                     RepairFn repair)
    : options_(options),
      metrics_(std::move(metrics)),
      repair_(std::move(repair)),
      queue_(options.order),
      threads_(ThreadsOf(options)) {}

absl::Status RepairCoordinator::Repair(std::shared_ptr<VerifiedBlob> blob,
                                       const absl::Status& bad,
                                       PriorityClass priority, Done done) {
  const std::optional<uint64_t> block = BadBlockOf(bad);
  if (!block.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no bad block to repair: ", bad.message()));
  }
  const std::string key =
      absl::StrCat(blob->blob().digest_text(), "/", FecGroupOf(*blob, *block));
  const int rank = ServiceRank(priority);
  absl::MutexLock lock(&mu_);
  auto it = groups_.find(key);
  if (it == groups_.end()) {
    if (groups_.size() >= options_.max_groups) {
      return absl::ResourceExhaustedError(
          absl::StrCat(groups_.size(), " FEC repairs are queued or under way"));
    }
    Pending& pending = groups_[key];
    pending.blob = std::move(blob);
    pending.bad = *block;
    pending.why = std::string(bad.message());
    pending.rank = rank;
    pending.waiters.push_back(std::move(done));
  } else {
    Pending& pending = it->second;
    pending.waiters.push_back(std::move(done));
    if (metrics_ != nullptr) metrics_->CountFecRepairJoined();
    if (pending.running || rank >= pending.rank) return absl::OkStatus();
    pending.rank = rank;  // queued again, more urgently
  }
  queue_.Push(priority, absl::Now(), key);
  return threads_.Submit([this] { RunNext(); });
}

void RepairCoordinator::RunNext() {
  std::string key;
  std::shared_ptr<VerifiedBlob> blob;
  uint64_t bad = 0;
  {
    absl::MutexLock lock(&mu_);
    std::optional<ClassQueue<std::string>::Popped> next = queue_.Pop();
    if (!next.has_value()) return;
    key = std::move(next->item);
    auto it = groups_.find(key);
    if (it == groups_.end() || it->second.running) return;
    it->second.running = true;
    blob = it->second.blob;
    bad = it->second.bad;
  }
  const Result result = repair_(*blob, bad);
  Pending done;
  {
    absl::MutexLock lock(&mu_);
    auto it = groups_.find(key);
    done = std::move(it->second);
    groups_.erase(it);
  }
  Report(done, result);
  for (Done& waiter : done.waiters) std::move(waiter)(result);
}

void RepairCoordinator::Report(const Pending& pending,
                               const Result& result) const {
  if (metrics_ != nullptr) {
    metrics_->CountFecRepairRun();
    if (result.ok()) {
      metrics_->CountFecRepaired(*result);
    } else {
      metrics_->CountFecRepairFailure();
    }
  }
  if (!options_.log) return;
  if (!result.ok()) {
    options_.log(
        absl::StrCat("FEC repair failed: ", result.status().message()));
  } else if (*result > 0) {
    options_.log(absl::StrCat("FEC repaired ", *result,
                              " block(s) of its RS group: ", pending.why));
  }
}

}  // namespace verity::server
