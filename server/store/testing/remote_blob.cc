// Implements RemoteBlob.

#include "server/store/testing/remote_blob.h"

#include <utility>

namespace verity::server {

RemoteBlob::RemoteBlob(std::shared_ptr<const Blob> local)
    : Blob(*local), local_(std::move(local)) {}

void RemoteBlob::ReadAsync(BlobPart part, uint64_t offset, Buffer into,
                           ReadDone done) const {
  ++reads_[static_cast<int>(part)];
  local_->ReadAsync(part, offset, std::move(into), std::move(done));
}

}  // namespace verity::server
