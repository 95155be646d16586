// A scrub pass: every stored blob checked whole (blob_scrub.h) in digest
// order, one pass at a time on a store however many replicas share it (under
// the scrub lease), and resumed where it stopped: its position is a shared
// record of the store, saved as it goes.
//
// The record ("scrub"): "verity-scrub 1\nstarted <unix seconds>\nafter
// <digest text, or ->\ncompleted <unix seconds>\n": when the pass under way
// began (0: none is), the last blob it checked, and when the last pass
// completed (0: never).

#ifndef VERITYD_SERVER_UPKEEP_SCRUBBER_H_
#define VERITYD_SERVER_UPKEEP_SCRUBBER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/store/store.h"
#include "server/upkeep/blob_scrub.h"

namespace verity::server {

inline constexpr absl::string_view kScrubRecordKey = "scrub";

// Where scrubbing a store stands. Plain value; times to the second.
struct ScrubPosition {
  absl::Time started = absl::UnixEpoch();    // epoch: no pass under way
  std::string after;                         // the last blob checked
  absl::Time completed = absl::UnixEpoch();  // epoch: no pass completed
};

std::string EncodeScrubPosition(const ScrubPosition& position);
// DATA_LOSS unless `body` is what EncodeScrubPosition makes.
absl::StatusOr<ScrubPosition> DecodeScrubPosition(absl::string_view body);

// The store's position (a fresh one if it has none, or one that does not
// parse).
absl::StatusOr<ScrubPosition> ReadScrubPosition(const Store& store);

struct ScrubPassOptions {
  // Who scrubs, in the lease (see StoreLease::Acquire).
  std::string holder = "verityd";
  absl::Duration lease_ttl = absl::Minutes(2);
  // How often the position is saved (and at the end).
  absl::Duration save_every = absl::Seconds(5);
  ScrubHooks hooks;
  // A blob damaged beyond repair: reported as a read reports it (the log,
  // the corruption counter, the quarantine under --on_corruption). Blocking.
  // Empty: not reported but in the pass's figures.
  std::function<void(const ParsedDigest& digest, const absl::Status& damage)>
      report;
  // Each blob checked, as it is (for metrics). May be empty.
  std::function<void(const BlobScrub& blob)> checked;
  // A blob that could not be read (an I/O error that is not damage): the
  // pass goes on to the next. Must be set.
  std::function<void(absl::string_view)> log;
  // Set: the pass stops before its next blob (CANCELLED), its position saved.
  const std::atomic<bool>* cancel = nullptr;
};

// What one pass (or the part of it this call ran) found. Plain value.
struct ScrubReport {
  uint64_t blobs = 0;  // checked whole
  uint64_t bytes = 0;  // read
  uint64_t bad_blocks = 0;
  uint64_t repaired_blocks = 0;
  uint64_t unrepairable = 0;  // blobs with damage left: reported
  uint64_t unread = 0;        // blobs an I/O error kept from being checked
  bool resumed = false;       // it went on from a saved position
  absl::Time completed;       // when it completed
  absl::Duration took;        // this call's part
};

// What a server's Scrubs::RunNow() answers. Plain value.
struct ScrubStatus {
  // The pass waited for; nullopt without wait.
  std::optional<ScrubReport> report;
  // The store's position after it.
  ScrubPosition position;
  // A pass runs in this server now.
  bool running = false;
};

// "blobs=... bytes=... bad_blocks=..." for the log and the CLI.
std::string FormatScrubReport(const ScrubReport& report);

// Scrubs from the store's saved position (or from the start) to the last
// blob, under the scrub lease, and records the pass as completed.
// ABORTED if another holder's lease has not expired; CANCELLED if stopped;
// a listing's or the position's error (UNAVAILABLE for a store that does
// not answer), with the position saved where it could be; the pace hook's.
absl::StatusOr<ScrubReport> RunScrubPass(Store& store,
                                         const ScrubPassOptions& options);

}  // namespace verity::server

#endif  // VERITYD_SERVER_UPKEEP_SCRUBBER_H_
