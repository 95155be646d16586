// Implements UploadStream: each chunk is read into the request message,
// hashed, then written, so the content is held once, a chunk at a time.

#include "client/sdk/stream_upload.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "client/sdk/blob_info_check.h"
#include "client/sdk/file_upload.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"
#include "lib/tree/merkle_builder.h"
#include "proto/convert.h"

namespace verity::client {
namespace {

using PutWriter = grpc::ClientWriterInterface<v1::PutRequest>;

// Sends the header and the content, hashing it into `builder`. False if the
// stream broke, in which case the server's status says why.
absl::StatusOr<bool> SendAll(PutWriter& writer, const sdk::ByteSource& source,
                             const StreamUploadOptions& options,
                             MerkleBuilder& builder) {
  v1::PutRequest request;
  *request.mutable_header() = PutHeaderOf(options);
  if (!writer.Write(request)) return false;
  while (true) {
    std::string* data = request.mutable_data();
    data->resize(options.chunk_size);
    ASSIGN_OR_RETURN(const size_t n, source(AsMutableBytes(data)));
    if (n > options.chunk_size) {
      return absl::InvalidArgumentError(
          absl::StrCat("the source returned ", n, " bytes for a ",
                       options.chunk_size, "-byte buffer"));
    }
    if (n == 0) return true;
    data->resize(n);
    RETURN_IF_ERROR(builder.Update(AsBytes(*data)));
    if (!writer.Write(request)) return false;
  }
}

}  // namespace

absl::StatusOr<UploadResult> UploadStream(v1::Verity::StubInterface& stub,
                                          grpc::ClientContext* context,
                                          const sdk::ByteSource& source,
                                          const StreamUploadOptions& options) {
  if (options.chunk_size == 0) {
    return absl::InvalidArgumentError("the chunk size is 0");
  }
  MerkleBuilder builder(options.params);
  ASSIGN_OR_RETURN(const v1::PutResponse response,
                   RunPut(stub, context, [&](PutWriter& writer) {
                     return SendAll(writer, source, options, builder);
                   }));
  ASSIGN_OR_RETURN(const MerkleTree tree, builder.Finish());
  UploadResult result;
  result.digest = {options.params.hash_algorithm, tree.digest};
  RETURN_IF_ERROR(CheckBlobInfo(response.info(), &result.digest).status());
  result.already_present = response.already_present();
  result.info = response.info();
  return result;
}

}  // namespace verity::client
