// Implements ReadBlobPart.

#include "server/store/testing/blob_reads.h"

#include <optional>
#include <utility>

#include "absl/synchronization/notification.h"
#include "lib/hash.h"

namespace verity::server {

absl::StatusOr<std::string> ReadBlobPart(const Blob& blob, BlobPart part,
                                         uint64_t offset, uint64_t length) {
  if (absl::Status range = CheckReadRange(blob, part, offset, length);
      !range.ok()) {
    return range;
  }
  std::string bytes(length, '\0');
  std::optional<absl::Status> now =
      blob.TryReadNow(part, offset, AsMutableBytes(&bytes));
  if (now.has_value()) {
    if (!now->ok()) return *now;
    return bytes;
  }
  absl::Notification done;
  absl::StatusOr<std::string> result;
  blob.ReadAsync(part, offset, length,
                 [&](absl::StatusOr<std::string> read) {
                   result = std::move(read);
                   done.Notify();
                 });
  done.WaitForNotification();
  return result;
}

}  // namespace verity::server
