// Serves a ReadOnlyFs (a TreeFs, or a FollowedFs) to the kernel through
// libfuse3's low-level API: read-only, with the kernel caching what it was
// given (content is immutable: long entry and attribute timeouts, keep_cache,
// cached directories and links), reads of up to 1 MiB, and a thread per request
// in flight.

#ifndef VERITYD_CLIENT_MOUNT_FUSE_MOUNT_H_
#define VERITYD_CLIENT_MOUNT_FUSE_MOUNT_H_

#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "client/mount/read_only_fs.h"

namespace verity::mount {

struct FuseMountOptions {
  std::string mountpoint;  // an existing directory
  // Shown in /proc/mounts as the source ("verity:NAME").
  std::string source = "verity";
  // Requests served at once (threads), and the largest read one asks for.
  int max_threads = 16;
  uint32_t max_read = 1 << 20;
  // How far the kernel reads ahead of a sequential reader; a window of
  // several max_read requests is sent together and served in parallel
  // (docs/tuning.md has the measurements behind 16 MiB).
  uint32_t read_ahead = 16 << 20;
  // How long the kernel keeps names, attributes and negative lookups.
  double cache_seconds = 24 * 3600;
  bool allow_other = false;  // users other than the mounting one may read
  bool debug = false;        // libfuse's own request log, on stderr
};

// Mounts `fs` and serves it until it is unmounted: SIGTERM, SIGINT or SIGHUP
// (which must be blocked in every thread when this is called; it waits for
// them itself), `fusermount3 -u` or umount. Files still open after a signal
// are served until they are closed (the mount is detached at once). An error
// if the mount fails (no /dev/fuse, no privilege, a bad mountpoint).
absl::Status ServeFuse(ReadOnlyFs& fs, const FuseMountOptions& options,
                       std::FILE* err);

}  // namespace verity::mount

#endif  // VERITYD_CLIENT_MOUNT_FUSE_MOUNT_H_
