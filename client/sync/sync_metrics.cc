#include "client/sync/sync_metrics.h"

#include <string>

#include "absl/strings/ascii.h"

namespace verity::sync {
namespace {

prometheus::Counter& NewCounter(prometheus::Registry& registry,
                                const std::string& name,
                                const std::string& help) {
  return prometheus::BuildCounter()
      .Name(name)
      .Help(help)
      .Register(registry)
      .Add({});
}

}  // namespace

SyncMetrics::SyncMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      last_success_(prometheus::BuildGauge()
                        .Name("verity_sync_last_success_timestamp_seconds")
                        .Help("When an attempt last found the newest version "
                              "in place (Unix time)")
                        .Register(*registry_)
                        .Add({})),
      switches_(NewCounter(*registry_, "verity_sync_switches_total",
                           "Switches to a new verified version")),
      failures_(prometheus::BuildCounter()
                    .Name("verity_sync_failures_total")
                    .Help("Failed attempts, by reason (the status code)")
                    .Register(*registry_)),
      files_fetched_(NewCounter(*registry_, "verity_sync_files_fetched_total",
                                "Files fetched for new versions")),
      files_reused_(NewCounter(*registry_, "verity_sync_files_reused_total",
                               "Files hard-linked from the previous version")),
      bytes_fetched_(NewCounter(*registry_, "verity_sync_bytes_fetched_total",
                                "Bytes of files fetched for new versions")) {}

void SyncMetrics::Succeeded(absl::Time when) {
  last_success_.Set(absl::ToDoubleSeconds(when - absl::UnixEpoch()));
}

void SyncMetrics::Switched(const sdk::FetchTreeResult& result) {
  switches_.Increment();
  files_fetched_.Increment(static_cast<double>(result.files_fetched));
  files_reused_.Increment(static_cast<double>(result.files_reused));
  bytes_fetched_.Increment(static_cast<double>(result.bytes_fetched));
}

void SyncMetrics::Failed(const absl::Status& status) {
  failures_
      .Add({{"reason",
             absl::AsciiStrToLower(absl::StatusCodeToString(status.code()))}})
      .Increment();
}

}  // namespace verity::sync
