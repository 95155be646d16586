// One `verity sync` attempt, and what it keeps between attempts: the name
// resolved and checked; a new version fetched into a staging folder (files
// unchanged since the version in place hard-linked, not fetched) and
// switched to only when every file is verified; the app told; what the
// switch replaced pruned; the status file written. A failed attempt leaves
// the folder as it was. The loop around it is sync_loop.h.

#ifndef VERITYD_CLIENT_SYNC_SYNCER_H_
#define VERITYD_CLIENT_SYNC_SYNCER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/names/blob_ref.h"
#include "client/sync/sync_metrics.h"
#include "client/sync/sync_status.h"
#include "lib/manifest/versioned_folder.h"
#include "verity/client.h"
#include "verity/tree.h"

namespace verity::sync {

// What a Syncer does besides the folder. Plain value.
struct SyncerOptions {
  std::string name;  // the tree's name
  int parallel = 8;  // files fetched at a time
  // Where the status is written; empty: kStatusFile in the folder.
  std::string status_file;
  // Called after each switch with the new digest, before what the switch
  // replaced is pruned (--exec-on-update); an error is logged. May be empty.
  std::function<absl::Status(const std::string& digest)> on_switch;
  // Each line of the log (what failed, what was switched to). May be empty.
  std::function<void(absl::string_view line)> log;
  SyncMetrics* metrics = nullptr;  // may be null
  std::function<absl::Time()> now = [] { return absl::Now(); };
};

// Thread-compatible: one attempt at a time.
class Syncer {
 public:
  // `client` checks what it returns as the command line's trust options say
  // (signatures, expiry, rollback); it must outlive the Syncer.
  Syncer(sdk::Client& client, SyncerOptions options, VersionedFolder folder);

  // One attempt: OK once the newest version is in place (switched to now or
  // before); the status file and the metrics say how it went.
  absl::Status Attempt();

  const SyncState& state() const { return state_; }

 private:
  void Log(absl::string_view line) const;
  absl::Status WriteStatus();
  bool Known(const std::string& id) const;
  absl::StatusOr<bool> Update();
  bool KeptInPlace(const std::string& id,
                   const std::vector<sdk::TreeEntry>& entries);
  void Switched(const sdk::FetchTreeResult& result);
  void Prune();
  sdk::FetchTreeOptions WriteOptions() const;
  absl::Status CheckInPlace(const std::string& id,
                            const std::vector<sdk::TreeEntry>& entries);
  absl::StatusOr<sdk::FetchTreeResult> Write(
      const std::string& id, const std::vector<sdk::TreeEntry>& entries);

  sdk::Client& client_;
  const SyncerOptions options_;
  const client::BlobRef ref_;
  VersionedFolder folder_;
  SyncState state_;
  // The entries of the version in place, if this process wrote or checked
  // it; and the version it checked (not written by it).
  std::vector<sdk::TreeEntry> current_entries_;
  std::string checked_;
};

}  // namespace verity::sync

#endif  // VERITYD_CLIENT_SYNC_SYNCER_H_
