// Implements `verity mount` on the SDK: the name checked and the manifest
// read (or one blob's size), then client/mount serves it.

#include "client/cli/mount_command.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/cli/command_line.h"
#include "client/cli/exit_codes.h"
#include "client/cli/flag_values.h"
#include "client/cli/tree_transfer.h"
#include "client/mount/tree_fs.h"
#include "lib/base/status_macros.h"
#include "lib/base/stop_signals.h"
#include "verity/client.h"
#include "verity/tree.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] =
    "Usage: verity mount NAME_OR_DIGEST MOUNTPOINT [--read-timeout=DURATION]\n"
    "                    [--threads=N] [--read-ahead=BYTES] [--allow-other]\n"
    "                    [--cache-dir=DIR] [--cache-bytes=BYTES] [--prefetch]\n"
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

// One blob as a tree of one file: named as the name's last part, or by the
// digest's hex.
absl::StatusOr<std::vector<sdk::TreeEntry>> SingleFile(
    sdk::Client& client, const client::BlobRef& ref,
    const sdk::Digest& digest) {
  ASSIGN_OR_RETURN(const sdk::BlobInfo info, client.Stat(digest));
  sdk::TreeEntry file;
  const size_t slash = ref.name.rfind('/');
  file.path = ref.name.empty()
                  ? digest.ToString().substr(digest.ToString().find(':') + 1)
                  : ref.name.substr(slash + 1);
  file.type = sdk::TreeEntryType::kFile;
  file.digest = digest;
  file.size = info.size;
  return std::vector<sdk::TreeEntry>{file};
}

absl::StatusOr<std::vector<sdk::TreeEntry>> EntriesOf(
    sdk::Client& client, const client::BlobRef& ref) {
  ASSIGN_OR_RETURN(const sdk::Digest digest, ResolveBlob(client, ref));
  ASSIGN_OR_RETURN(const bool tree,
                   sdk::IsTree(client, digest, sdk::FetchOptions()));
  if (!tree) return SingleFile(client, ref, digest);
  return sdk::ReadTree(client, digest, sdk::FetchOptions());
}

// "; the cache: ..." if there is one.
std::string CacheSummary(const mount::TreeFs& fs) {
  if (fs.cache() == nullptr) return "";
  const mount::VerifiedCacheStats stats = fs.cache()->stats();
  return absl::StrCat("; the cache: ", stats.hits, " slabs read from it, ",
                      stats.misses, " fetched, ", stats.changed,
                      " refused as changed on the disk, ", stats.failures,
                      " not written");
}

// Runs TreeFs::Prefetch on a thread of its own until it ends or the mount
// does (Stop, then the destructor joins it), and logs what it did.
class BackgroundPrefetch {
 public:
  BackgroundPrefetch(mount::TreeFs& fs, std::FILE* err)
      : thread_([this, &fs, err] { Run(fs, err); }) {}
  ~BackgroundPrefetch() {
    stop_.store(true);
    thread_.join();
  }

 private:
  void Run(mount::TreeFs& fs, std::FILE* err) {
    const absl::Time start = absl::Now();
    const absl::StatusOr<mount::PrefetchStats> stats = fs.Prefetch(stop_);
    if (!stats.ok()) {
      std::fprintf(err, "verity mount: prefetch failed: %s\n",
                   stats.status().ToString().c_str());
    } else {
      std::fprintf(
          err,
          "verity mount: prefetch %s: %llu files in the cache, %llu bytes "
          "fetched, %llu files failed, in %s\n",
          stats->stopped      ? "stopped"
          : stats->cache_full ? "ended as the cache would be full"
                              : "done",
          static_cast<unsigned long long>(stats->files),
          static_cast<unsigned long long>(stats->bytes),
          static_cast<unsigned long long>(stats->failed),
          absl::FormatDuration(absl::Now() - start).c_str());
    }
    std::fflush(err);
  }

  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: started once the rest is built
};

}  // namespace

absl::StatusOr<MountOptions> ParseMountOptions(int argc, char** argv) {
  MountOptions opts;
  opts.trust = DefaultTrustOptions();
  ASSIGN_OR_RETURN(CommandLine line,
                   ParseCommandLine(argc, argv, MountFlags(&opts)));
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
  absl::StatusOr<std::vector<sdk::TreeEntry>> entries =
      EntriesOf(**client, opts->tree);
  if (!entries.ok()) return ReportStatus("mount", entries.status(), err);
  mount::TreeFsOptions fs_options;
  fs_options.read_timeout = opts->read_timeout;
  fs_options.mtime = absl::Now();
  fs_options.uid = getuid();
  fs_options.gid = getgid();
  fs_options.log = err;
  fs_options.cache_dir = opts->cache_dir;
  if (opts->cache_bytes.has_value())
    fs_options.cache_bytes = *opts->cache_bytes;
  absl::StatusOr<std::unique_ptr<mount::TreeFs>> fs =
      mount::TreeFs::Create(**client, *entries, fs_options);
  if (!fs.ok()) return ReportStatus("mount", fs.status(), err);
  std::fprintf(err, "verity mount: %s on %s: %zu entries\n",
               opts->tree.ToString().c_str(), opts->fuse.mountpoint.c_str(),
               entries->size());
  std::fflush(err);
  absl::Status served;
  {
    std::optional<BackgroundPrefetch> prefetch;
    if (opts->prefetch) prefetch.emplace(**fs, err);
    served = mount::ServeFuse(**fs, opts->fuse, err);
  }
  std::fprintf(err, "verity mount: %s unmounted; %llu reads failed%s\n",
               opts->fuse.mountpoint.c_str(),
               static_cast<unsigned long long>((*fs)->failed_reads()),
               CacheSummary(**fs).c_str());
  return ReportStatus("mount", served, err);
}

}  // namespace verity::cli
