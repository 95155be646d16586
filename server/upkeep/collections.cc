// Implements a server's garbage collections.

#include "server/upkeep/collections.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace verity::server {

Collections::Collections(std::shared_ptr<Store> store, SweepDelete remove,
                         std::shared_ptr<CollectionMetrics> metrics,
                         CollectionsOptions options)
    : store_(std::move(store)),
      remove_(std::move(remove)),
      metrics_(std::move(metrics)),
      options_(std::move(options)) {}

void Collections::Start(std::string holder) {
  {
    absl::MutexLock lock(&mu_);
    holder_ = std::move(holder);
  }
  if (options_.interval > absl::ZeroDuration()) {
    thread_ = std::thread([this] { Loop(); });
  }
}

Collections::~Collections() { Stop(); }

void Collections::Stop() {
  stopping_.store(true);
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

void Collections::Loop() {
  while (!stop_.WaitForNotificationWithTimeout(options_.interval)) {
    // Its outcome is logged and counted; the next one comes regardless.
    RunNow(/*dry_run=*/false).IgnoreError();
  }
}

absl::StatusOr<CollectReport> Collections::RunNow(bool dry_run) {
  absl::MutexLock lock(&mu_);
  CollectOptions options;
  options.grace = options_.grace;
  options.dry_run = dry_run;
  options.holder = holder_;
  options.cancel = &stopping_;
  const absl::Time started = absl::Now();
  const absl::StatusOr<CollectReport> report =
      Collect(*store_, remove_, options, started);
  if (report.ok() && options_.counted) {
    // A dry run's `freed` is what it would have freed: still stored.
    options_.counted(report->bytes - (dry_run ? 0 : report->freed_bytes),
                     started);
  }
  if (report.ok()) {
    options_.log(absl::StrCat("garbage collection: ",
                              FormatCollectReport(*report, dry_run)));
  } else {
    options_.log(
        absl::StrCat("garbage collection ", dry_run ? "(dry run) " : "",
                     "did not complete: ", report.status().ToString()));
  }
  if (metrics_ != nullptr) {
    metrics_->Collected(report.status(), report.ok() ? &*report : nullptr,
                        dry_run, absl::Now());
  }
  return report;
}

}  // namespace verity::server
