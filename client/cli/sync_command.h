// `verity sync NAME DIR`: the sidecar mode. Keeps DIR holding the newest
// verified version of the tree NAME, in the kubelet's atomic-writer layout
// (lib/manifest/versioned_folder.h), polling or on SIGHUP; tells the app
// through --exec-on-update, a status file and Prometheus metrics.

#ifndef VERITYD_CLIENT_CLI_SYNC_COMMAND_H_
#define VERITYD_CLIENT_CLI_SYNC_COMMAND_H_

#include <cstdio>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/cli/connection.h"
#include "client/cli/trust_options.h"

namespace verity::cli {

// The parsed command line of `verity sync`. Plain value.
struct SyncOptions {
  client::ConnectionOptions connection;
  TrustOptions trust;  // --trusted-keys and the rest
  std::string name;
  std::string dir;
  absl::Duration interval = absl::Seconds(60);  // --interval
  bool once = false;                            // --once
  std::string exec_on_update;                   // --exec-on-update
  std::string metrics_listen;                   // --metrics-listen
  std::string status_file;  // --status-file; default DIR/..verity-sync.status
  int parallel = 8;         // --parallel: files fetched at a time
  // --probe: only read the status file: exit 0 if a version is in place and
  // (with --max-age) an attempt found it the newest within that time.
  bool probe = false;
  absl::Duration max_age = absl::InfiniteDuration();  // --max-age
};

// Parses `argv` (argv[0] is "sync"); INVALID_ARGUMENT naming the problem.
absl::StatusOr<SyncOptions> ParseSyncOptions(int argc, char** argv);

// Runs `verity sync`: with --once, one attempt and its exit code; otherwise
// until SIGTERM or SIGINT (exit 0), attempting every --interval and at once
// on SIGHUP. A failed attempt leaves DIR as it was.
int RunSyncCommand(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_SYNC_COMMAND_H_
