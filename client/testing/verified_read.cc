// Implements ReadVerified. On a local error the call is cancelled and the
// stream drained, so that Finish() does not wait on a server still sending.

#include "client/testing/verified_read.h"

#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "client/sdk/grpc_status.h"
#include "lib/base/status_macros.h"

namespace verity::client {
namespace {

using ::verity::v1::ReadResponse;

verity::v1::ReadRequest MakeRequest(const BlobRef& blob,
                                    const ReadOptions& options) {
  verity::v1::ReadRequest request;
  blob.SetIn(&request);
  request.set_offset(options.offset);
  request.set_length(options.length);
  request.set_priority_class(options.priority);
  return request;
}

// The digest to verify against: the caller's, or for a name the one the
// stream names (see the header for what that does and does not prove).
absl::StatusOr<ParsedDigest> TrustedDigest(const BlobRef& blob,
                                           const ReadResponse& first) {
  if (blob.digest.has_value()) return *blob.digest;
  absl::StatusOr<ParsedDigest> named = ParseDigest(first.digest());
  if (!named.ok()) {
    return absl::DataLossError(
        absl::StrCat("the server named digest '", first.digest(), "' for '",
                     blob.name, "': ", named.status().message()));
  }
  return named;
}

// Feeds the stream to a verifier made at the first message.
class StreamConsumer {
 public:
  StreamConsumer(const BlobRef& blob, const ReadOptions& options)
      : blob_(blob), options_(options) {}

  absl::Status OnResponse(const ReadResponse& msg, const ByteSink& sink) {
    if (!verifier_.has_value()) {
      ASSIGN_OR_RETURN(trusted_, TrustedDigest(blob_, msg));
      std::optional<uint64_t> length;
      if (options_.length != 0) length = options_.length;
      verifier_.emplace(trusted_, options_.offset, length, options_.verifier);
    }
    return verifier_->OnResponse(msg, sink);
  }

  absl::StatusOr<ParsedDigest> Finish() const {
    if (!verifier_.has_value()) {
      return absl::DataLossError("the server sent an empty Read stream");
    }
    RETURN_IF_ERROR(verifier_->Finish());
    return trusted_;
  }

 private:
  const BlobRef& blob_;
  const ReadOptions& options_;
  ParsedDigest trusted_;
  std::optional<ReadStreamVerifier> verifier_;
};

}  // namespace

absl::StatusOr<ParsedDigest> ReadVerified(
    verity::v1::Verity::StubInterface& stub, grpc::ClientContext* context,
    const BlobRef& blob, const ReadOptions& options, const ByteSink& sink) {
  std::unique_ptr<grpc::ClientReaderInterface<ReadResponse>> reader =
      stub.Read(context, MakeRequest(blob, options));
  StreamConsumer consumer(blob, options);
  ReadResponse msg;
  absl::Status status;
  while (status.ok() && reader->Read(&msg)) {
    status = consumer.OnResponse(msg, sink);
  }
  if (!status.ok()) {
    context->TryCancel();
    while (reader->Read(&msg)) {
    }
    reader->Finish().IgnoreError();
    return status;
  }
  RETURN_IF_ERROR(FromGrpcStatus(reader->Finish()));
  return consumer.Finish();
}

}  // namespace verity::client
