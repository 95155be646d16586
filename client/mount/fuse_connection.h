// The kernel's side of a FUSE mount, reached through /proc and sysfs: its
// device, its read-ahead, and aborting its connection.

#ifndef VERITYD_CLIENT_MOUNT_FUSE_CONNECTION_H_
#define VERITYD_CLIENT_MOUNT_FUSE_CONNECTION_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace verity::mount {

// The device ("0:NN") of the mount at `mountpoint` (the last one there),
// from /proc/self/mountinfo: a stat(2) of a FUSE mountpoint would be a
// request to its session. NOT_FOUND if nothing is mounted there.
absl::StatusOr<std::string> FuseDeviceOf(const std::string& mountpoint);

// Sets how far the kernel reads ahead on `device` (its bdi's read_ahead_kb).
// For FUSE it is 128 KiB by default, and INIT's reply may only lower it.
absl::Status SetReadAhead(absl::string_view device, uint32_t bytes);

// Aborts the FUSE connection of `device` (/sys/fs/fuse/connections/NN/abort):
// every pending request fails and the session's reads end.
absl::Status AbortConnection(absl::string_view device);

}  // namespace verity::mount

#endif  // VERITYD_CLIENT_MOUNT_FUSE_CONNECTION_H_
