// `verity mount NAME_OR_DIGEST MOUNTPOINT`: a signed tree (or one blob, as a
// single file) as a lazy, read-only FUSE file system whose every byte is
// verified before the kernel sees it (client/mount).

#ifndef VERITYD_CLIENT_CLI_MOUNT_COMMAND_H_
#define VERITYD_CLIENT_CLI_MOUNT_COMMAND_H_

#include <cstdio>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/cli/connection.h"
#include "client/cli/trust_options.h"
#include "client/mount/fuse_mount.h"
#include "client/names/blob_ref.h"

namespace verity::cli {

// The parsed command line of `verity mount`. Plain value.
struct MountOptions {
  client::ConnectionOptions connection;
  TrustOptions trust;  // --trusted-keys and the rest
  client::BlobRef tree;
  mount::FuseMountOptions fuse;                     // MOUNTPOINT, --threads...
  absl::Duration read_timeout = absl::Seconds(30);  // --read-timeout
  std::string cache_dir;                            // --cache-dir
  std::optional<uint64_t> cache_bytes;              // --cache-bytes
  bool prefetch = false;                            // --prefetch
  bool follow = false;                              // --follow
  std::optional<absl::Duration> interval;           // --interval
};

// Parses `argv` (argv[0] is "mount"); INVALID_ARGUMENT naming the problem.
absl::StatusOr<MountOptions> ParseMountOptions(int argc, char** argv);

// Resolves and checks the tree as `verity get` does, mounts it and serves it
// until unmounted (SIGTERM, SIGINT, SIGHUP or fusermount3 -u): exit 0. A
// refusal before mounting exits as get does (3 for a failed check).
int RunMountCommand(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_MOUNT_COMMAND_H_
