#include "client/mount/fuse_connection.h"

#include <fcntl.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/bytes.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"

namespace verity::mount {
namespace {

absl::Status WriteSysfs(const std::string& path, absl::string_view value) {
  ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, O_WRONLY | O_CLOEXEC));
  RETURN_IF_ERROR(WriteAll(fd.get(), AsBytes(absl::StrCat(value, "\n")), path));
  return fd.Close(path);
}

// A mountinfo field with its octal escapes (\040 for a space, \011, \012,
// \134) undone; the field unchanged if it cannot be.
std::string Unescape(absl::string_view field) {
  std::string out;
  return absl::CUnescape(field, &out) ? out : std::string(field);
}

}  // namespace

absl::StatusOr<std::string> FuseDeviceOf(const std::string& mountpoint) {
  char resolved[PATH_MAX];
  if (realpath(mountpoint.c_str(), resolved) == nullptr) {
    return ErrnoStatus(errno, "realpath", mountpoint);
  }
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::string line, device;
  while (std::getline(mountinfo, line)) {
    // ID PARENT MAJOR:MINOR ROOT MOUNTPOINT ...; the last mount wins.
    const std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
    if (fields.size() > 4 && Unescape(fields[4]) == resolved) {
      device = std::string(fields[2]);
    }
  }
  if (device.empty()) {
    return absl::NotFoundError(
        absl::StrCat("nothing is mounted on ", resolved));
  }
  return device;
}

absl::Status SetReadAhead(absl::string_view device, uint32_t bytes) {
  return WriteSysfs(absl::StrCat("/sys/class/bdi/", device, "/read_ahead_kb"),
                    absl::StrCat(bytes / 1024));
}

absl::Status AbortConnection(absl::string_view device) {
  const size_t colon = device.find(':');
  return WriteSysfs(absl::StrCat("/sys/fs/fuse/connections/",
                                 device.substr(colon + 1), "/abort"),
                    "1");
}

}  // namespace verity::mount
