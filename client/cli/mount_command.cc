// Implements `verity mount` on the SDK: the name checked and the manifest
// read (or one blob's size), then client/mount serves it.

#include "client/cli/mount_command.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/cli/command_line.h"
#include "client/cli/exit_codes.h"
#include "client/cli/flag_values.h"
#include "client/mount/followed_fs.h"
#include "client/mount/follower.h"
#include "client/mount/tree_fs.h"
#include "lib/base/printable.h"
#include "lib/base/status_macros.h"
#include "lib/base/stop_signals.h"
#include "lib/manifest/versioned_folder.h"
#include "verity/client.h"

namespace verity::cli {
namespace {

constexpr uint64_t kCacheBytes = uint64_t{1} << 30;      // --cache-bytes
constexpr absl::Duration kInterval = absl::Seconds(60);  // --interval

constexpr char kUsage[] =
    "Usage: verity mount NAME_OR_DIGEST MOUNTPOINT [--read-timeout=DURATION]\n"
    "                    [--threads=N] [--read-ahead=BYTES] [--allow-other]\n"
    "                    [--cache-dir=DIR] [--cache-bytes=BYTES] [--prefetch]\n"
    "                    [--follow [--interval=DURATION]]\n"
    "                    [--debug-fuse]\n"
    "                    [--trusted-keys=FILE] [--trusted-keys-threshold=K]\n"
    "                    [--state-dir=DIR] [--fsverity-cert=PEM]\n"
    "Mounts a tree (as `verity put DIR` stores one) read-only on the folder\n"
    "MOUNTPOINT, or one blob as a single file in it (named as the name's last\n"
    "part, or the digest's hex). The name is checked as `verity get` checks\n"
    "it, before anything is mounted. Files are read when a program reads\n"
    "them, each range verified against the file's digest before the kernel\n"
    "sees a byte: a block that fails gives EIO for the reads that need it\n"
    "(SIGBUS under mmap), logged with the file, the range and the digest;\n"
    "the rest stays readable. The kernel caches what it was given (content\n"
    "never changes). Runs in the foreground until SIGTERM, SIGINT or SIGHUP\n"
    "(which unmount; files still open are served until closed) or\n"
    "`fusermount3 -u MOUNTPOINT`. Needs /dev/fuse and root (CAP_SYS_ADMIN).\n"
    "  --read-timeout: how long one read may take, retries included, before\n"
    "    it fails with EIO (default 30s)\n"
    "  --threads: requests served at once (default 16, 1 to 256)\n"
    "  --read-ahead: how far the kernel reads ahead of a sequential reader,\n"
    "    in requests of up to 1 MiB served at once (default 16777216,\n"
    "    16 MiB)\n"
    "  --cache-dir: keep verified 1 MiB slabs in DIR/slabs (emptied at\n"
    "    start), so that what the page cache let go of is read from the disk,\n"
    "    not fetched again; each slab is checked against the SHA-256 taken\n"
    "    when it was written (kept in memory) before it is used\n"
    "  --cache-bytes: the cache's bound, least recently used out first\n"
    "    (default 1073741824, 1 GiB; at least 1048576)\n"
    "  --prefetch: fetch every file into the cache in the background, in the\n"
    "    tree's order, at IDLE priority, until all are in or the cache would\n"
    "    be full (needs --cache-dir)\n"
    "  --follow: look for a new version of NAME every --interval (default\n"
    "    60s) and show each that passes every check (trust, rollback, the\n"
    "    manifest) to new opens, in `verity sync`'s layout: MOUNTPOINT/..data\n"
    "    -> ..<digest>, the version's folder, replaced at each switch, and\n"
    "    MOUNTPOINT/<name> -> ..data/<name> for each top-level name. A path\n"
    "    opened resolves into one version whole; open files keep theirs; the\n"
    "    version before stays; a version that fails a check is logged and\n"
    "    never shown; with --prefetch each version shown is prefetched (what\n"
    "    the cache holds already is not fetched again)\n"
    "  --allow-other: let users other than the mounting one read it\n"
    "  --debug-fuse: log every FUSE request on stderr\n";

std::vector<CommandFlag> MountFlags(MountOptions* opts) {
  std::vector<CommandFlag> flags = TrustFlags(&opts->trust);
  std::vector<CommandFlag> own = {
      {"read-timeout", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(opts->read_timeout,
                          ParseDurationFlag("--read-timeout", v));
         return absl::OkStatus();
       }},
      {"threads", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(const uint64_t n, ParseUint64Flag("--threads", v));
         if (n < 1 || n > 256) {
           return absl::InvalidArgumentError("--threads must be 1 to 256");
         }
         opts->fuse.max_threads = static_cast<int>(n);
         return absl::OkStatus();
       }},
      {"read-ahead", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(const uint64_t n, ParseUint64Flag("--read-ahead", v));
         if (n < (128 << 10) || n > (256 << 20)) {
           return absl::InvalidArgumentError(
               "--read-ahead must be 131072 (128 KiB) to 268435456 (256 MiB)");
         }
         opts->fuse.read_ahead = static_cast<uint32_t>(n);
         return absl::OkStatus();
       }},
      {"cache-dir", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         if (v.empty()) {
           return absl::InvalidArgumentError("--cache-dir must not be empty");
         }
         opts->cache_dir = std::string(v);
         return absl::OkStatus();
       }},
      {"cache-bytes", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(const uint64_t n,
                          ParseUint64Flag("--cache-bytes", v));
         if (n < mount::VerifiedCache::kSlabBytes) {
           return absl::InvalidArgumentError(
               "--cache-bytes must be at least 1048576 (one slab)");
         }
         opts->cache_bytes = n;
         return absl::OkStatus();
       }},
      {"prefetch", 0, false,
       [opts](absl::string_view) {
         opts->prefetch = true;
         return absl::OkStatus();
       }},
      {"follow", 0, false,
       [opts](absl::string_view) {
         opts->follow = true;
         return absl::OkStatus();
       }},
      {"interval", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(const absl::Duration d,
                          ParseDurationFlag("--interval", v));
         if (d <= absl::ZeroDuration()) {
           return absl::InvalidArgumentError("--interval must be positive");
         }
         opts->interval = d;
         return absl::OkStatus();
       }},
      {"allow-other", 0, false,
       [opts](absl::string_view) {
         opts->fuse.allow_other = true;
         return absl::OkStatus();
       }},
      {"debug-fuse", 0, false,
       [opts](absl::string_view) {
         opts->fuse.debug = true;
         return absl::OkStatus();
       }},
  };
  for (CommandFlag& flag : own) flags.push_back(std::move(flag));
  return flags;
}

// "; the cache: ..." if there is one.
std::string CacheSummary(const mount::VerifiedCache* cache) {
  if (cache == nullptr) return "";
  const mount::VerifiedCacheStats stats = cache->stats();
  return absl::StrCat("; the cache: ", stats.hits, " slabs read from it, ",
                      stats.misses, " fetched, ", stats.changed,
                      " refused as changed on the disk, ", stats.failures,
                      " not written");
}

// Serves `version` until unmounted: alone, or with --follow as the first of
// the versions a Follower shows.
absl::Status Serve(sdk::Client& client, const MountOptions& opts,
                   const mount::TreeFsOptions& fs_options,
                   mount::MountVersion version, std::FILE* err) {
  const mount::LogLine log = [err](absl::string_view line) {
    PrintLine(err, "verity mount", line);
  };
  std::shared_ptr<mount::TreeFs> first = std::move(version.fs);
  if (!opts.follow) {
    std::optional<mount::BackgroundPrefetch> prefetch;
    if (opts.prefetch) prefetch.emplace(first, log);
    return mount::ServeFuse(*first, opts.fuse, err);
  }
  mount::FollowedFs followed(fs_options.mtime, fs_options.uid, fs_options.gid);
  followed.Show(VersionedFolder::IdOf(version.digest.ToString()),
                std::move(first));
  mount::Follower follower(
      std::make_unique<mount::VersionPoller>(client, opts.tree, fs_options,
                                             opts.prefetch, followed, log),
      opts.interval.value_or(kInterval));
  return mount::ServeFuse(followed, opts.fuse, err);
}

}  // namespace

absl::StatusOr<MountOptions> ParseMountOptions(int argc, char** argv) {
  MountOptions opts;
  opts.trust = DefaultTrustOptions();
  ASSIGN_OR_RETURN(CommandLine line,
                   ParseCommandLine(argc, argv, MountFlags(&opts)));
  if (!opts.trust.max_statement_age.has_value()) {
    opts.trust.max_statement_age = kLongLivedMaxStatementAge;
  }
  if (line.operands.size() != 2) {
    return absl::InvalidArgumentError("give NAME_OR_DIGEST and MOUNTPOINT");
  }
  opts.connection = std::move(line.connection);
  ASSIGN_OR_RETURN(opts.tree, client::ParseBlobRef(line.operands[0]));
  opts.fuse.mountpoint = line.operands[1];
  if (opts.fuse.mountpoint.empty()) {
    return absl::InvalidArgumentError("MOUNTPOINT must not be empty");
  }
  if (opts.read_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--read-timeout must be positive");
  }
  if (opts.cache_dir.empty() && opts.cache_bytes.has_value()) {
    return absl::InvalidArgumentError("--cache-bytes needs --cache-dir");
  }
  if (opts.cache_dir.empty() && opts.prefetch) {
    return absl::InvalidArgumentError("--prefetch needs --cache-dir");
  }
  if (opts.follow && opts.tree.name.empty()) {
    return absl::InvalidArgumentError(
        "--follow needs a NAME: a digest never changes");
  }
  if (!opts.follow && opts.interval.has_value()) {
    return absl::InvalidArgumentError("--interval needs --follow");
  }
  opts.fuse.source = absl::StrCat("verity:", opts.tree.ToString());
  return opts;
}

int RunMountCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  const std::string usage = absl::StrCat(kUsage, kTrustUsage);
  if (AsksForHelp(argc, argv)) return PrintHelp(usage, out);
  absl::StatusOr<MountOptions> opts = ParseMountOptions(argc, argv);
  if (!opts.ok()) return UsageError("mount", opts.status(), usage, err);
  // Blocked before any thread starts: every thread inherits the mask, and
  // ServeFuse waits for them itself.
  BlockStopSignals();
  absl::StatusOr<std::unique_ptr<sdk::Client>> client =
      CreateTrustingClient(opts->connection, opts->trust);
  if (!client.ok()) return ReportStatus("mount", client.status(), err);
  WarnIfNameUnauthenticated(opts->trust, opts->tree, "mount", err);
  mount::TreeFsOptions fs_options;
  fs_options.read_timeout = opts->read_timeout;
  fs_options.mtime = absl::Now();
  fs_options.uid = getuid();
  fs_options.gid = getgid();
  fs_options.log = err;
  fs_options.failed_reads = std::make_shared<std::atomic<uint64_t>>(0);
  fs_options.buffers = mount::NewReadBuffers();
  if (!opts->cache_dir.empty()) {
    absl::StatusOr<std::unique_ptr<mount::VerifiedCache>> cache =
        mount::VerifiedCache::Open(opts->cache_dir,
                                   opts->cache_bytes.value_or(kCacheBytes),
                                   fs_options.buffers);
    if (!cache.ok()) return ReportStatus("mount", cache.status(), err);
    fs_options.cache = *std::move(cache);
  }
  absl::StatusOr<mount::MountVersion> version =
      mount::LoadVersion(**client, opts->tree, fs_options);
  if (!version.ok()) return ReportStatus("mount", version.status(), err);
  PrintLine(
      err, "verity mount",
      absl::StrCat(opts->tree.ToString(), " (", version->digest.ToString(),
                   ") on ", opts->fuse.mountpoint, ": ", version->entries,
                   " entries", opts->follow ? ", followed" : ""));
  const absl::Status served =
      Serve(**client, *opts, fs_options, *std::move(version), err);
  PrintLine(err, "verity mount",
            absl::StrCat(opts->fuse.mountpoint, " unmounted; ",
                         fs_options.failed_reads->load(), " reads failed",
                         CacheSummary(fs_options.cache.get())));
  return ReportStatus("mount", served, err);
}

}  // namespace verity::cli
