// Implements UploadFile: header first, then the content in chunks read with
// pread, stopping at the first broken write to collect the server's status.

#include "client/sdk/file_upload.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "client/sdk/blob_info_check.h"
#include "client/sdk/grpc_status.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"
#include "lib/tree/file_digest.h"
#include "proto/convert.h"

namespace verity::client {
namespace {

using PutWriter = grpc::ClientWriterInterface<verity::v1::PutRequest>;

absl::Status PreadFully(int fd, uint64_t offset, absl::Span<uint8_t> out) {
  while (!out.empty()) {
    const ssize_t n = pread(fd, out.data(), out.size(), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::ErrnoToStatus(errno, "read");
    if (n == 0) {
      return absl::AbortedError(absl::StrCat("the file shrank to ", offset,
                                             " bytes while uploading"));
    }
    out.remove_prefix(n);
    offset += n;
  }
  return absl::OkStatus();
}

// Sends the header and `size` bytes of `fd`. False if the stream broke, in
// which case the server's status says why.
absl::StatusOr<bool> SendFile(PutWriter& writer,
                              const verity::v1::PutHeader& header, int fd,
                              uint64_t size, size_t chunk_size) {
  verity::v1::PutRequest request;
  *request.mutable_header() = header;
  if (!writer.Write(request)) return false;
  for (uint64_t offset = 0; offset < size;) {
    const size_t n = std::min<uint64_t>(chunk_size, size - offset);
    std::string* data = request.mutable_data();
    data->resize(n);
    RETURN_IF_ERROR(PreadFully(fd, offset, AsMutableBytes(data)));
    if (!writer.Write(request)) return false;
    offset += n;
  }
  return true;
}

}  // namespace

verity::v1::PutHeader PutHeaderOf(const PutSettings& settings) {
  verity::v1::PutHeader header;
  *header.mutable_params() = TreeParamsToProto(settings.params);
  header.set_name(settings.name);
  header.set_name_statement(settings.name_statement);
  header.set_fsverity_signature(settings.fsverity_signature);
  if (settings.expected.has_value()) {
    header.set_expected_digest(settings.expected->ToString());
  }
  header.set_tree_manifest(settings.tree_manifest);
  return header;
}

absl::StatusOr<verity::v1::PutResponse> RunPut(
    verity::v1::Verity::StubInterface& stub, grpc::ClientContext* context,
    const PutSender& send) {
  verity::v1::PutResponse response;
  std::unique_ptr<PutWriter> writer = stub.Put(context, &response);
  absl::StatusOr<bool> sent = send(*writer);
  if (!sent.ok()) {
    context->TryCancel();
    writer->Finish().IgnoreError();
    return sent.status();
  }
  if (*sent) writer->WritesDone();
  RETURN_IF_ERROR(FromGrpcStatus(writer->Finish()));
  return response;
}

absl::StatusOr<UploadResult> UploadFile(verity::v1::Verity::StubInterface& stub,
                                        grpc::ClientContext* context,
                                        absl::string_view path,
                                        const UploadOptions& options) {
  const std::string path_string(path);
  // O_NONBLOCK keeps open() from hanging on a FIFO, which hashing rejects.
  const int fd = open(path_string.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return absl::ErrnoToStatus(errno, "open");
  const auto closer = absl::MakeCleanup([fd] { close(fd); });
  ASSIGN_OR_RETURN(
      const MerkleTree tree,
      BuildMerkleTreeFromFd(fd, options.params, options.hash_threads));
  UploadResult result;
  result.digest = {options.params.hash_algorithm, tree.digest};
  if (options.expected.has_value() &&
      (options.expected->algorithm != result.digest.algorithm ||
       options.expected->digest != result.digest.digest)) {
    return absl::DataLossError(
        absl::StrCat(path, " has digest ", result.digest.ToString(),
                     ", not the expected ", options.expected->ToString()));
  }

  verity::v1::PutHeader header = PutHeaderOf(options);
  header.set_expected_digest(result.digest.ToString());
  const uint64_t size = tree.descriptor.data_size;
  // What was hashed is what is sent (the expected digest): the server may
  // encode its FEC parity as the content arrives.
  header.set_content_size(size);
  ASSIGN_OR_RETURN(const verity::v1::PutResponse response,
                   RunPut(stub, context, [&](PutWriter& writer) {
                     return SendFile(writer, header, fd, size,
                                     options.chunk_size);
                   }));
  RETURN_IF_ERROR(CheckBlobInfo(response.info(), &result.digest).status());
  result.already_present = response.already_present();
  result.info = response.info();
  return result;
}

}  // namespace verity::client
