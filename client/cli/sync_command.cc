// Implements `verity sync`: attempts (resolve the name, checked; fetch a new
// version into a staging folder, reusing unchanged files; switch), a status
// file and metrics after each, and a loop woken by its interval or a signal.

#include "client/cli/sync_command.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client/cli/command_line.h"
#include "client/cli/exit_codes.h"
#include "client/cli/flag_values.h"
#include "client/cli/sync_metrics.h"
#include "client/cli/tree_transfer.h"
#include "client/sdk/backoff.h"
#include "lib/base/file_util.h"
#include "lib/base/metrics_exposer.h"
#include "lib/base/printable.h"
#include "lib/base/status_macros.h"
#include "lib/base/stop_signals.h"
#include "lib/manifest/versioned_folder.h"
#include "verity/client.h"
#include "verity/tree.h"

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

// What the status file says. Plain value.
struct SyncState {
  std::string digest;  // in place; empty before the first switch
  uint64_t version = 0;
  absl::Time last_success = absl::InfinitePast();
  absl::Time last_attempt = absl::InfinitePast();
  std::string last_error;  // of the last attempt; empty if it succeeded
  uint64_t switches = 0;
};

std::string TimeText(absl::Time time) {
  if (time == absl::InfinitePast()) return "never";
  return Rfc3339(time);
}

// The status file's lines. The error, which may quote a server or a
// manifest, is escaped: one line, nothing a terminal acts on.
std::string StatusText(const SyncState& state) {
  const char* word = !state.last_error.empty() ? "failing"
                     : state.digest.empty()    ? "starting"
                                               : "ok";
  return absl::StrCat("state: ", word, "\ndigest: ", state.digest,
                      "\nversion: ", state.version,
                      "\nlast_success: ", TimeText(state.last_success),
                      "\nlast_attempt: ", TimeText(state.last_attempt),
                      "\nlast_error: ", Printable(state.last_error),
                      "\nswitches: ", state.switches, "\n");
}

std::vector<std::string> TopLevelNames(
    const std::vector<sdk::TreeEntry>& entries) {
  std::vector<std::string> names;
  for (const sdk::TreeEntry& entry : entries) {
    if (entry.path.find('/') == std::string::npos) names.push_back(entry.path);
  }
  return names;
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

// In DIR unless --status-file says elsewhere.
constexpr char kStatusFile[] = "..verity-sync.status";

std::string StatusPath(const SyncOptions& opts) {
  return opts.status_file.empty() ? JoinPath(opts.dir, kStatusFile)
                                  : opts.status_file;
}

// --probe: OK if the status file shows a version in place, and a success
// within --max-age.
absl::Status Probe(const SyncOptions& opts) {
  ASSIGN_OR_RETURN(const std::string text,
                   ReadSmallFile(StatusPath(opts), 1 << 16));
  std::string digest, last_success;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, "digest: ")) digest = std::string(line);
    if (absl::ConsumePrefix(&line, "last_success: ")) {
      last_success = std::string(line);
    }
  }
  if (digest.empty()) {
    return absl::UnavailableError("no version in place yet");
  }
  if (opts.max_age == absl::InfiniteDuration()) return absl::OkStatus();
  absl::Time when;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_sec, last_success, &when, &error) ||
      absl::Now() - when > opts.max_age) {
    return absl::UnavailableError(absl::StrCat(
        "no successful attempt within ", absl::FormatDuration(opts.max_age),
        " (last: ", last_success, ")"));
  }
  return absl::OkStatus();
}

class Syncer {
 public:
  Syncer(sdk::Client& client, const SyncOptions& opts, VersionedFolder folder,
         SyncMetrics* metrics, std::FILE* err)
      : client_(client),
        opts_(opts),
        ref_{std::nullopt, opts.name},
        folder_(std::move(folder)),
        metrics_(metrics),
        err_(err) {}

  // One attempt; the status file and the metrics say how it went.
  absl::Status Attempt() {
    state_.last_attempt = absl::Now();
    absl::StatusOr<bool> switched = Update();
    state_.last_error =
        switched.ok() ? "" : std::string(switched.status().message());
    if (switched.ok()) {
      state_.last_success = state_.last_attempt;
      if (metrics_ != nullptr) metrics_->Succeeded(state_.last_success);
    } else {
      Log(absl::StrCat("failed, keeping ",
                       state_.digest.empty() ? "nothing" : state_.digest, ": ",
                       switched.status().ToString()));
      if (metrics_ != nullptr) metrics_->Failed(switched.status());
    }
    const absl::Status written = WriteStatus();
    if (!written.ok()) Log(absl::StrCat("status: ", written.ToString()));
    return switched.status();
  }

 private:
  void Log(absl::string_view line) {
    PrintLine(err_, absl::StrCat("verity sync: ", Printable(opts_.name)), line);
  }

  absl::Status WriteStatus() {
    const std::string text = StatusText(state_);
    if (!opts_.status_file.empty()) {
      return ReplaceFileDurably(opts_.status_file + ".tmp", opts_.status_file,
                                text);
    }
    return folder_.WriteFile(kStatusFile, text);
  }

  // True if what DIR holds of the version `id` is known to be its tree:
  // written by this process, or checked by it.
  bool Known(const std::string& id) const {
    return folder_.Wrote(id) || checked_ == id;
  }

  // True once the newest version is in place (switched to now or before).
  absl::StatusOr<bool> Update() {
    // ..data read again, and a switch a crash or an error left half done
    // finished.
    RETURN_IF_ERROR(folder_.Repair());
    ASSIGN_OR_RETURN(const ResolvedBlob blob, ResolveBlob(client_, ref_));
    RETURN_IF_ERROR(CheckTree(blob, ref_, /*insist=*/true));
    const std::string digest = blob.digest().ToString();
    const std::string id = VersionedFolder::IdOf(digest);
    if (blob.info.name_statement.has_value()) {
      state_.version = blob.info.name_statement->version;
    }
    if (id == folder_.current() && Known(id)) {
      state_.digest = digest;
      Prune();
      return true;
    }
    ASSIGN_OR_RETURN(
        std::vector<sdk::TreeEntry> entries,
        sdk::ReadTree(client_, blob.digest(), sdk::FetchOptions()));
    // Before anything is staged: a name the layout cannot show.
    RETURN_IF_ERROR(VersionedFolder::CheckTopNames(TopLevelNames(entries)));
    if (id == folder_.current() && KeptInPlace(id, entries)) {
      current_entries_ = std::move(entries);
      state_.digest = digest;
      Prune();
      return true;
    }
    ASSIGN_OR_RETURN(const sdk::FetchTreeResult result, Write(id, entries));
    RETURN_IF_ERROR(folder_.Switch(id));
    current_entries_ = std::move(entries);
    state_.digest = digest;
    Switched(result);
    return true;
  }

  // The version in place, not written by this process, checked whole: true
  // if it is its tree (and so known from now on), else logged.
  bool KeptInPlace(const std::string& id,
                   const std::vector<sdk::TreeEntry>& entries) {
    const absl::Status held = CheckInPlace(id, entries);
    if (held.ok()) {
      checked_ = id;
      return true;
    }
    Log(absl::StrCat(
        "the version in place is not its tree, fetching it again: ",
        held.message()));
    return false;
  }

  // After a switch: counted, logged, the app told, then what it replaced
  // pruned.
  void Switched(const sdk::FetchTreeResult& result) {
    state_.switches++;
    if (metrics_ != nullptr) metrics_->Switched(result);
    Log(absl::StrCat("switched to ", state_.digest, " (version ",
                     state_.version, "): ", result.files, " files, ",
                     result.files_fetched, " fetched (", result.bytes_fetched,
                     " bytes), ", result.files_reused, " reused, ",
                     result.files_copied, " copied"));
    if (!opts_.exec_on_update.empty()) {
      const absl::Status hook = RunHook(opts_, state_.digest);
      if (!hook.ok()) Log(hook.ToString());
    }
    // Only now, the app told: the versions before the one just replaced.
    Prune();
  }

  // What failed attempts, a crash or versions before the last one left.
  void Prune() {
    const absl::Status pruned = folder_.Prune();
    if (!pruned.ok()) Log(absl::StrCat("pruning: ", pruned.ToString()));
  }

  sdk::FetchTreeOptions WriteOptions() const {
    sdk::FetchTreeOptions options;
    options.parallel = opts_.parallel;
    options.read_only = true;
    return options;
  }

  absl::Status CheckInPlace(const std::string& id,
                            const std::vector<sdk::TreeEntry>& entries) {
    ASSIGN_OR_RETURN(const UniqueFd version, folder_.OpenVersion(id));
    return sdk::VerifyFolder(version.get(), folder_.PathOf(id), entries,
                             WriteOptions());
  }

  absl::StatusOr<sdk::FetchTreeResult> Write(
      const std::string& id, const std::vector<sdk::TreeEntry>& entries) {
    ASSIGN_OR_RETURN(const UniqueFd staged, folder_.Stage(id));
    sdk::FetchTreeOptions options = WriteOptions();
    UniqueFd reuse;
    const std::string& current = folder_.current();
    if (!current.empty()) {
      reuse = folder_.OpenVersion(current).value_or(UniqueFd());
      // What this process wrote or checked there is not hashed again; any
      // other version's files are.
      if (Known(current)) options.reuse_entries = current_entries_;
    }
    absl::StatusOr<sdk::FetchTreeResult> result =
        sdk::WriteTreeAt(client_, entries, staged.get(),
                         folder_.PathOf("staging-" + id), reuse.get(), options);
    if (!result.ok()) folder_.Discard(id).IgnoreError();
    return result;
  }

  sdk::Client& client_;
  const SyncOptions& opts_;
  const client::BlobRef ref_;
  VersionedFolder folder_;
  SyncMetrics* const metrics_;
  std::FILE* const err_;
  SyncState state_;
  // The entries of the version in place, if this process wrote or checked
  // it; and the version it checked (not written by it).
  std::vector<sdk::TreeEntry> current_entries_;
  std::string checked_;
};

enum class Wake { kTimeout, kSyncNow, kStop };

// The waits after failed attempts: a server that is not listening yet (a
// sidecar starts with it) or restarting is tried again within seconds, a
// lasting failure no more often than every `interval`.
sdk::RetryPolicy FailureBackoff(absl::Duration interval) {
  sdk::RetryPolicy policy;
  policy.initial_backoff = std::min(absl::Seconds(1), interval);
  policy.max_backoff = interval;
  return policy;
}

// Waits for a signal of `signals` (blocked in this thread and every thread
// started after) or `timeout`.
Wake WaitForSignal(const sigset_t& signals, absl::Duration timeout) {
  const absl::Time until = absl::Now() + timeout;
  while (true) {
    const timespec left =
        absl::ToTimespec(std::max(until - absl::Now(), absl::ZeroDuration()));
    const int signal = sigtimedwait(&signals, nullptr, &left);
    if (signal == SIGHUP) return Wake::kSyncNow;
    if (signal == SIGTERM || signal == SIGINT) return Wake::kStop;
    if (signal < 0 && errno == EAGAIN) return Wake::kTimeout;
  }
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
  std::unique_ptr<SyncMetrics> metrics;
  std::unique_ptr<prometheus::Exposer> exposer;
  if (!opts->metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<prometheus::Exposer>> started =
        StartMetricsExposer(opts->metrics_listen, "--metrics-listen");
    if (!started.ok()) return ReportStatus("sync", started.status(), err);
    exposer = *std::move(started);
    metrics = std::make_unique<SyncMetrics>();
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
  Syncer syncer(**client, *opts, *std::move(folder), metrics.get(), err);
  if (opts->once) return ReportStatus("sync", syncer.Attempt(), err);
  absl::BitGen gen;
  client::Backoff backoff(FailureBackoff(opts->interval), gen);
  while (true) {
    absl::Duration wait = opts->interval;
    if (syncer.Attempt().ok()) {
      backoff.Reset();
    } else {
      wait = std::min(wait, backoff.Next());
    }
    if (WaitForSignal(signals, wait) == Wake::kStop) return kExitOk;
  }
}

}  // namespace verity::cli
