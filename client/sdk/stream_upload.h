// Uploads content from a ByteSource with Put, hashing it on the way so that
// the digest the server reports can be checked against the bytes sent.

#ifndef VERITYD_CLIENT_SDK_STREAM_UPLOAD_H_
#define VERITYD_CLIENT_SDK_STREAM_UPLOAD_H_

#include <grpcpp/grpcpp.h>

#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "client/sdk/file_upload.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_params.h"
#include "proto/verity/v1/verity.grpc.pb.h"
#include "verity/client.h"

namespace verity::client {

// Plain value.
// A stream is hashed as it is sent, so there are no hashing threads to set.
using StreamUploadOptions = PutSettings;

// Sends the header, then the source's content until it returns 0. An error
// from the source cancels the Put, which then stores nothing. DATA_LOSS if
// the server reports another digest than the one computed here (it has then
// stored what it received, under that digest).
absl::StatusOr<UploadResult> UploadStream(v1::Verity::StubInterface& stub,
                                          grpc::ClientContext* context,
                                          const sdk::ByteSource& source,
                                          const StreamUploadOptions& options);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_STREAM_UPLOAD_H_
