// Implements CorruptionReporter.

#include "server/rpc/corruption_reporter.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/store/verified_blob.h"

namespace verity::server {

CorruptionReporter::CorruptionReporter(const Store* store, ServedBlobs* blobs,
                                       ServiceMetrics* metrics, Executor* io,
                                       OnCorruption on_corruption)
    : store_(store),
      blobs_(blobs),
      metrics_(metrics),
      io_(io),
      on_corruption_(on_corruption) {}

void CorruptionReporter::Report(
    const ParsedDigest& digest, const absl::Status& status,
    absl::AnyInvocable<void(absl::Status) &&> then) const {
  // Shared, so that a refused task does not take `then` along.
  auto finish = std::make_shared<absl::AnyInvocable<void(absl::Status) &&>>(
      std::move(then));
  const absl::Status queued = io_->Submit([this, digest, status, finish] {
    if (absl::IsNotFound(store_->Stat(digest).status())) {
      const std::string gone = absl::StrCat("blob ", digest.ToString(),
                                            " was deleted while it was read");
      store_->Log(gone);
      std::move (*finish)(absl::NotFoundError(gone));
      return;
    }
    Count(status);
    // The cached copy goes only after the mark (ServedBlobs::Quarantine),
    // or a read in between would cache it again.
    if (on_corruption_ == OnCorruption::kQuarantine) {
      const absl::Status quarantined =
          blobs_->Quarantine(digest, status.message());
      if (!quarantined.ok()) {
        store_->Log(absl::StrCat("could not quarantine ", digest.ToString(),
                                 ": ", quarantined.message()));
      }
    }
    std::move (*finish)(status);
  });
  if (!queued.ok()) {
    Count(status);
    if (on_corruption_ == OnCorruption::kQuarantine) {
      store_->Log(absl::StrCat("could not quarantine ", digest.ToString(), ": ",
                               queued.message()));
    }
    std::move (*finish)(status);
  }
}

void CorruptionReporter::Count(const absl::Status& status) const {
  store_->Log(absl::StrCat("corruption detected: ", status.message()));
  metrics_->CountCorruption(IsTreeCorruption(status) ? CorruptionKind::kTree
                                                     : CorruptionKind::kData);
}

}  // namespace verity::server
