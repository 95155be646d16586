// Implements `verity sync` on client/sync/: its flags, the hook it runs
// after a switch (--exec-on-update), --probe, the metrics endpoint and the
// signals its loop waits for.

#include "client/cli/sync_command.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "client/cli/command_line.h"
#include "client/cli/exit_codes.h"
#include "client/cli/flag_values.h"
#include "client/sync/sync_loop.h"
#include "client/sync/sync_metrics.h"
#include "client/sync/sync_status.h"
#include "client/sync/syncer.h"
#include "lib/base/file_util.h"
#include "lib/base/metrics_exposer.h"
#include "lib/base/printable.h"
#include "lib/base/status_macros.h"
#include "lib/base/stop_signals.h"
#include "verity/client.h"

extern char** environ;

namespace verity::cli {
namespace {

constexpr char kUsage[] =
    "Usage: verity sync NAME DIR [--interval=DURATION] [--once]\n"
    "                   [--exec-on-update=COMMAND] [--status-file=FILE]\n"
    "                   [--metrics-listen=HOST:PORT] [--parallel=N]\n"
    "                   [--trusted-keys=FILE] [--trusted-keys-threshold=K]\n"
    "                   [--state-dir=DIR]\n"
    "Keeps DIR holding the newest verified version of the tree NAME (as\n"
    "`verity put DIR --name=NAME` stores one), in the kubelet's layout: each\n"
    "version in its own folder DIR/..<digest>, DIR/..data a symlink to the\n"
    "current one, renamed to switch, and DIR/<name> -> ..data/<name> for each\n"
    "top-level name. A reader of DIR/<name>/... sees one version whole, never\n"
    "a mix; the version before stays for readers inside it. A new version is\n"
    "fetched into DIR/..staging-<digest> (files unchanged since the current\n"
    "one hard-linked, not fetched) and switched to only when every file is\n"
    "verified; a version that fails any check (with --trusted-keys: "
    "signature,\n"
    "expiry, rollback; a bad block) is never switched to.\n"
    "  --interval: how often to look for a new version (default 60s; 720h,\n"
    "    90m, 30s...); after a failed attempt, sooner: 1s, 2s, 4s... up to\n"
    "    the interval; SIGHUP looks at once; SIGTERM or SIGINT stop\n"
    "  --once: one attempt, then exit with its code (an init container)\n"
    "  --exec-on-update: run `sh -c COMMAND` in DIR after each switch, with\n"
    "    VERITY_SYNC_NAME, VERITY_SYNC_DIGEST and VERITY_SYNC_DIR set\n"
    "  --status-file: written after each attempt (default\n"
    "    DIR/..verity-sync.status): lines \"state: ok|failing|starting\",\n"
    "    \"digest: ...\", \"version: N\", \"last_success: TIME\",\n"
    "    \"last_attempt: TIME\", \"last_error: ...\", \"switches: N\"\n"
    "  --metrics-listen: serve Prometheus metrics on HOST:PORT/metrics\n"
    "  --parallel: files fetched at a time (default 8, 1 to 64)\n"
    "  --probe [--max-age=DURATION]: for a readiness or liveness probe (the\n"
    "    image has no shell): exit 0 if the status file shows a version in\n"
    "    place and, with --max-age, a successful attempt within DURATION;\n"
    "    else 1. Reads only the status file: talks to no server\n";

std::vector<CommandFlag> SyncFlags(SyncOptions* opts) {
  std::vector<CommandFlag> flags = TrustFlags(&opts->trust);
  std::vector<CommandFlag> own = {
      {"interval", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(opts->interval, ParseDurationFlag("--interval", v));
         return absl::OkStatus();
       }},
      {"once", 0, false,
       [opts](absl::string_view) {
         opts->once = true;
         return absl::OkStatus();
       }},
      {"exec-on-update", 0, true,
       [opts](absl::string_view v) {
         opts->exec_on_update = std::string(v);
         return absl::OkStatus();
       }},
      {"status-file", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         if (v.empty())
           return absl::InvalidArgumentError("--status-file is empty");
         opts->status_file = std::string(v);
         return absl::OkStatus();
       }},
      {"metrics-listen", 0, true,
       [opts](absl::string_view v) {
         opts->metrics_listen = std::string(v);
         return absl::OkStatus();
       }},
      {"parallel", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(opts->parallel, ParseParallelFlag(v));
         return absl::OkStatus();
       }},
      {"probe", 0, false,
       [opts](absl::string_view) {
         opts->probe = true;
         return absl::OkStatus();
       }},
      {"max-age", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(opts->max_age, ParseDurationFlag("--max-age", v));
         return absl::OkStatus();
       }},
  };
  flags.insert(flags.end(), own.begin(), own.end());
  return flags;
}

// Runs `sh -c command` in `dir` with the signals this process blocks
// unblocked, and waits for it.
absl::Status RunHook(const SyncOptions& opts, const std::string& digest) {
  std::vector<std::string> env_strings = {"VERITY_SYNC_NAME=" + opts.name,
                                          "VERITY_SYNC_DIGEST=" + digest,
                                          "VERITY_SYNC_DIR=" + opts.dir};
  std::vector<char*> env;
  for (std::string& s : env_strings) env.push_back(s.data());
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  env.push_back(nullptr);
  const std::string script =
      absl::StrCat("cd \"$VERITY_SYNC_DIR\" && ", opts.exec_on_update);
  const char* argv[] = {"/bin/sh", "-c", script.c_str(), nullptr};
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  pid_t pid;
  const int error = posix_spawn(&pid, "/bin/sh", nullptr, &attr,
                                const_cast<char**>(argv), env.data());
  posix_spawnattr_destroy(&attr);
  if (error != 0) return ErrnoStatus(error, "spawn", "/bin/sh");
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("--exec-on-update exited with status ",
                   WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1));
}

std::string StatusPath(const SyncOptions& opts) {
  return opts.status_file.empty() ? JoinPath(opts.dir, sync::kStatusFile)
                                  : opts.status_file;
}

// --probe: OK if the status file shows a version in place, and a success
// within --max-age.
absl::Status Probe(const SyncOptions& opts) {
  ASSIGN_OR_RETURN(const std::string text,
                   ReadSmallFile(StatusPath(opts), 1 << 16));
  return sync::CheckReady(text, opts.max_age, absl::Now());
}

}  // namespace

absl::StatusOr<SyncOptions> ParseSyncOptions(int argc, char** argv) {
  SyncOptions opts;
  opts.trust = DefaultTrustOptions();
  ASSIGN_OR_RETURN(CommandLine line,
                   ParseCommandLine(argc, argv, SyncFlags(&opts)));
  if (!opts.trust.max_statement_age.has_value()) {
    opts.trust.max_statement_age = kLongLivedMaxStatementAge;
  }
  if (line.operands.size() != 2) {
    return absl::InvalidArgumentError("give NAME and DIR");
  }
  opts.connection = std::move(line.connection);
  opts.name = line.operands[0];
  opts.dir = line.operands[1];
  if (opts.name.empty() || opts.dir.empty()) {
    return absl::InvalidArgumentError("NAME and DIR must not be empty");
  }
  if (opts.interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--interval must be positive");
  }
  return opts;
}

int RunSyncCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  const std::string usage = absl::StrCat(kUsage, kTrustUsage);
  if (AsksForHelp(argc, argv)) return PrintHelp(usage, out);
  absl::StatusOr<SyncOptions> opts = ParseSyncOptions(argc, argv);
  if (!opts.ok()) return UsageError("sync", opts.status(), usage, err);
  if (opts->probe) {
    const absl::Status status = Probe(*opts);
    if (status.ok()) return kExitOk;
    PrintLine(err, "verity sync",
              absl::StrCat("not ready: ", status.message()));
    return 1;
  }
  // Blocked before any thread starts, so that every thread inherits the
  // mask and only sigtimedwait receives them.
  const sigset_t signals = BlockStopSignals();
  absl::StatusOr<VersionedFolder> folder = VersionedFolder::Open(opts->dir);
  if (!folder.ok()) return ReportStatus("sync", folder.status(), err);
  std::unique_ptr<sync::SyncMetrics> metrics;
  std::unique_ptr<prometheus::Exposer> exposer;
  if (!opts->metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<prometheus::Exposer>> started =
        StartMetricsExposer(opts->metrics_listen, "--metrics-listen");
    if (!started.ok()) return ReportStatus("sync", started.status(), err);
    exposer = *std::move(started);
    metrics = std::make_unique<sync::SyncMetrics>();
    exposer->RegisterCollectable(metrics->registry());
    std::fprintf(
        err, "verity sync: metrics on http://%s:%d/metrics\n",
        opts->metrics_listen.substr(0, opts->metrics_listen.rfind(':')).c_str(),
        ExposerPort(*exposer));
  }
  absl::StatusOr<std::unique_ptr<sdk::Client>> client =
      CreateTrustingClient(opts->connection, opts->trust);
  if (!client.ok()) return ReportStatus("sync", client.status(), err);
  WarnIfNameUnauthenticated(
      opts->trust, client::BlobRef{std::nullopt, opts->name}, "sync", err);
  sync::SyncerOptions syncer_options;
  syncer_options.name = opts->name;
  syncer_options.parallel = opts->parallel;
  syncer_options.status_file = opts->status_file;
  if (!opts->exec_on_update.empty()) {
    syncer_options.on_switch = [&opts](const std::string& digest) {
      return RunHook(*opts, digest);
    };
  }
  syncer_options.log = [&opts, err](absl::string_view line) {
    PrintLine(err, absl::StrCat("verity sync: ", Printable(opts->name)), line);
  };
  syncer_options.metrics = metrics.get();
  sync::Syncer syncer(**client, std::move(syncer_options), *std::move(folder));
  if (opts->once) return ReportStatus("sync", syncer.Attempt(), err);
  absl::BitGen gen;
  sync::RunSyncLoop([&syncer] { return syncer.Attempt(); }, opts->interval,
                    [&signals](absl::Duration timeout) {
                      return sync::WaitForSignal(signals, timeout);
                    },
                    gen);
  return kExitOk;
}

}  // namespace verity::cli
