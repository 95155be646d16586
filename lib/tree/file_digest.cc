// Implements the file helpers on top of BuildMerkleTreeParallel.

#include "lib/tree/file_digest.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace verity {
namespace {

absl::Status PreadFully(int fd, uint64_t offset, absl::Span<uint8_t> out) {
  while (!out.empty()) {
    const ssize_t n = pread(fd, out.data(), out.size(), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::ErrnoToStatus(errno, "pread");
    if (n == 0) {
      return absl::AbortedError(
          absl::StrCat("file ended at ", offset, " while being hashed"));
    }
    out.remove_prefix(n);
    offset += n;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MerkleTree> BuildMerkleTreeFromFd(int fd,
                                                 const MerkleParams& params,
                                                 int threads) {
  struct stat st;
  if (fstat(fd, &st) != 0) return absl::ErrnoToStatus(errno, "fstat");
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError("not a regular file");
  }
  const ReadAtFn read_at = [fd](uint64_t offset, absl::Span<uint8_t> out) {
    return PreadFully(fd, offset, out);
  };
  return BuildMerkleTreeParallel(params, static_cast<uint64_t>(st.st_size),
                                 read_at, threads);
}

absl::StatusOr<MerkleTree> BuildMerkleTreeFromFile(absl::string_view path,
                                                   const MerkleParams& params,
                                                   int threads) {
  const std::string path_string(path);
  // O_NONBLOCK keeps open() from hanging on a FIFO, which fstat then
  // rejects; it does not affect reads of regular files.
  const int fd = open(path_string.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("open ", path_string));
  }
  const auto closer = absl::MakeCleanup([fd] { close(fd); });
  return BuildMerkleTreeFromFd(fd, params, threads);
}

}  // namespace verity
