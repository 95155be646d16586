// Test support: a blob's bytes, however the blob answers (now, or later on
// its backend's thread), waited for; and verified as the server verifies them.

#ifndef VERITYD_SERVER_STORE_TESTING_BLOB_READS_H_
#define VERITYD_SERVER_STORE_TESTING_BLOB_READS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/buffer_pool.h"
#include "server/store/store.h"
#include "server/store/verified_blob.h"

namespace verity::server {

// A one-off Buffer holding `bytes`, and a Buffer's bytes as a string.
Buffer BufferOf(absl::string_view bytes);
std::string StringOf(const Buffer& buffer);

// Bytes [offset, offset + length) of `part`: Blob::TryReadNow() if they are
// here, else Blob::ReadAsync(), waited for. Not on a backend's thread.
absl::StatusOr<std::string> ReadBlobPart(const Blob& blob, BlobPart part,
                                         uint64_t offset, uint64_t length);

// Reads data blocks [first_block, end_block) of `blob` verified, in one go,
// the tree blocks they need first, with ReadBlobPart(); `out` is empty after
// a failure.
absl::Status ReadVerified(VerifiedBlob& blob, uint64_t first_block,
                          uint64_t end_block, std::string* out);

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_TESTING_BLOB_READS_H_
