// Implements a scrub pass and its saved position.

#include "server/upkeep/scrubber.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "lib/base/status_macros.h"
#include "server/upkeep/lease.h"

namespace verity::server {
namespace {

constexpr size_t kBlobsPerPage = 100;
constexpr absl::string_view kScrubMagic = "verity-scrub 1";

absl::Time Seconds(absl::Time time) {
  return absl::FromUnixSeconds(absl::ToUnixSeconds(time));
}

absl::StatusOr<absl::Time> TimeLine(absl::string_view line,
                                    absl::string_view field) {
  int64_t seconds = 0;
  if (!absl::ConsumePrefix(&line, field) || !absl::ConsumePrefix(&line, " ") ||
      !absl::SimpleAtoi(line, &seconds) || seconds < 0) {
    return absl::DataLossError(
        absl::StrCat("the scrub's position has a bad ", field));
  }
  return absl::FromUnixSeconds(seconds);
}

// The position a record holds: a fresh one if there is none, or if it does
// not parse.
ScrubPosition PositionOf(const std::optional<SharedRecord>& record) {
  if (!record.has_value()) return ScrubPosition{};
  const absl::StatusOr<ScrubPosition> decoded =
      DecodeScrubPosition(record->body);
  return decoded.ok() ? *decoded : ScrubPosition{};
}

// The position, saved by compare-and-set over the version read or written
// last: a pass that lost its lease cannot overwrite its successor's.
class PositionRecord {
 public:
  static absl::StatusOr<PositionRecord> Read(Store& store) {
    ASSIGN_OR_RETURN(const std::optional<SharedRecord> record,
                     store.ReadRecord(kScrubRecordKey));
    PositionRecord result(store);
    result.position_ = PositionOf(record);
    if (record.has_value()) result.version_ = record->version;
    return result;
  }

  ScrubPosition& position() { return position_; }

  absl::Status Save() {
    ASSIGN_OR_RETURN(
        SharedRecord written,
        store_->WriteRecord(kScrubRecordKey, EncodeScrubPosition(position_),
                            version_));
    version_ = std::move(written.version);
    return absl::OkStatus();
  }

 private:
  explicit PositionRecord(Store& store) : store_(&store) {}

  Store* store_;
  ScrubPosition position_;
  std::optional<std::string> version_;
};

// Checks one listed blob into `report`; an error ends the pass.
absl::Status ScrubOne(const Store& store, const ParsedDigest& digest,
                      const ScrubPassOptions& options, ScrubReport& report) {
  absl::StatusOr<BlobScrub> scrub = absl::DataLossError("");
  absl::StatusOr<std::shared_ptr<const Blob>> blob = store.OpenBlob(digest);
  if (blob.ok()) {
    scrub = ScrubBlob(*std::move(blob), options.hooks);
  } else if (absl::IsDataLoss(blob.status())) {
    scrub = BlobScrub{};
    scrub->damage = blob.status();
  } else {
    scrub = blob.status();
  }
  if (absl::IsNotFound(scrub.status())) return absl::OkStatus();  // deleted
  if (absl::IsCancelled(scrub.status()) ||
      absl::IsUnavailable(scrub.status())) {
    return scrub.status();
  }
  if (!scrub.ok()) {
    report.unread++;
    options.log(absl::StrCat("scrub could not read blob ", digest.ToString(),
                             ": ", scrub.status().ToString()));
    return absl::OkStatus();
  }
  report.blobs++;
  report.bytes += scrub->bytes;
  report.bad_blocks += scrub->bad_blocks;
  report.repaired_blocks += scrub->repaired_blocks;
  if (!scrub->damage.ok()) {
    report.unrepairable++;
    if (options.report) options.report(digest, scrub->damage);
  }
  if (options.checked) options.checked(*scrub);
  return absl::OkStatus();
}

}  // namespace

std::string EncodeScrubPosition(const ScrubPosition& position) {
  return absl::StrCat(
      kScrubMagic, "\nstarted ", absl::ToUnixSeconds(position.started),
      "\nafter ", position.after.empty() ? "-" : position.after, "\ncompleted ",
      absl::ToUnixSeconds(position.completed), "\n");
}

absl::StatusOr<ScrubPosition> DecodeScrubPosition(absl::string_view body) {
  const std::vector<absl::string_view> lines = absl::StrSplit(body, '\n');
  if (lines.size() != 5 || lines[0] != kScrubMagic || !lines[4].empty()) {
    return absl::DataLossError("the scrub's position is malformed");
  }
  ScrubPosition position;
  ASSIGN_OR_RETURN(position.started, TimeLine(lines[1], "started"));
  absl::string_view after = lines[2];
  if (!absl::ConsumePrefix(&after, "after ") ||
      (after != "-" && !ParseDigest(after).ok())) {
    return absl::DataLossError("the scrub's position has a bad after");
  }
  if (after != "-") position.after = std::string(after);
  ASSIGN_OR_RETURN(position.completed, TimeLine(lines[3], "completed"));
  return position;
}

absl::StatusOr<ScrubPosition> ReadScrubPosition(const Store& store) {
  ASSIGN_OR_RETURN(const std::optional<SharedRecord> record,
                   store.ReadRecord(kScrubRecordKey));
  return PositionOf(record);
}

std::string FormatScrubReport(const ScrubReport& report) {
  return absl::StrCat("blobs=", report.blobs, " bytes=", report.bytes,
                      " bad_blocks=", report.bad_blocks,
                      " repaired_blocks=", report.repaired_blocks,
                      " unrepairable=", report.unrepairable,
                      " unread=", report.unread,
                      report.resumed ? " resumed" : "",
                      " took=", absl::FormatDuration(report.took));
}

absl::StatusOr<ScrubReport> RunScrubPass(Store& store,
                                         const ScrubPassOptions& options) {
  const absl::Time start = absl::Now();
  ASSIGN_OR_RETURN(StoreLease lease,
                   StoreLease::Acquire(store, kScrubLease, options.holder,
                                       start, start, options.lease_ttl));
  ScrubReport report;
  absl::StatusOr<PositionRecord> record = PositionRecord::Read(store);
  absl::Status status = record.status();
  if (status.ok()) {
    ScrubPosition& position = record->position();
    report.resumed = position.started != absl::UnixEpoch();
    absl::Time saved = start;
    status = [&]() -> absl::Status {
      // A new pass is on record from its start: a restart resumes it.
      if (!report.resumed) {
        position.started = Seconds(start);
        position.after.clear();
        RETURN_IF_ERROR(record->Save());
      }
      while (true) {
        ASSIGN_OR_RETURN(const std::vector<BlobInfo> page,
                         store.List(position.after, kBlobsPerPage));
        for (const BlobInfo& info : page) {
          if (options.cancel != nullptr && options.cancel->load()) {
            return absl::CancelledError("the scrub was stopped");
          }
          RETURN_IF_ERROR(lease.RenewIfDue(absl::Now()));
          ASSIGN_OR_RETURN(const ParsedDigest digest, ParseDigest(info.digest));
          RETURN_IF_ERROR(ScrubOne(store, digest, options, report));
          position.after = info.digest;
          if (absl::Now() - saved >= options.save_every) {
            RETURN_IF_ERROR(record->Save());
            saved = absl::Now();
          }
        }
        if (page.size() < kBlobsPerPage) return absl::OkStatus();
      }
    }();
    if (status.ok()) {
      report.completed = Seconds(absl::Now());
      position = ScrubPosition{absl::UnixEpoch(), "", report.completed};
    }
    // Where it stopped, or that it completed; a save that fails leaves the
    // last one, from which the next pass checks a few blobs again.
    if (absl::Status saved_now = record->Save(); status.ok()) {
      status = saved_now;
    }
  }
  lease.Release();
  RETURN_IF_ERROR(status);
  report.took = absl::Now() - start;
  return report;
}

}  // namespace verity::server
