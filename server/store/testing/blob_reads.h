// Test support: a blob's bytes, however the blob answers (now, or later on
// its backend's thread), waited for.

#ifndef VERITYD_SERVER_STORE_TESTING_BLOB_READS_H_
#define VERITYD_SERVER_STORE_TESTING_BLOB_READS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "server/store/store.h"

namespace verity::server {

// Bytes [offset, offset + length) of `part`: Blob::TryReadNow() if they are
// here, else Blob::ReadAsync(), waited for. Not on a backend's thread.
absl::StatusOr<std::string> ReadBlobPart(const Blob& blob, BlobPart part,
                                         uint64_t offset, uint64_t length);

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_TESTING_BLOB_READS_H_
