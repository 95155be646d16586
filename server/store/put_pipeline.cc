// Implements PutPipeline: hash, check, then Stage and Publish through the
// backend's sink; any failure Aborts it.

#include "server/store/put_pipeline.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "server/store/name_index.h"

namespace verity::server {
namespace {

// DATA_LOSS unless `want`, if given, is `digest`.
absl::Status CheckExpected(const std::optional<ParsedDigest>& want,
                           const ParsedDigest& digest,
                           absl::string_view digest_text) {
  if (!want.has_value() || *want == digest) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("content hashes to ", digest_text,
                                          ", not the expected ",
                                          want->ToString()));
}

}  // namespace

absl::Status CheckPutSize(std::optional<uint64_t> size, uint64_t max_bytes) {
  if (!size.has_value() || *size <= max_bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat("a blob of ", *size, " bytes exceeds the store's limit of ",
                   max_bytes, " bytes"));
}

absl::Status ValidatePutParams(const MerkleParams& params) {
  RETURN_IF_ERROR(ValidateMerkleParams(params));
  if (params.block_size < kMinServedBlockSize ||
      params.block_size > kMaxServedBlockSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "block size ", params.block_size, " is outside the store's range [",
        kMinServedBlockSize, ", ", kMaxServedBlockSize, "]"));
  }
  return absl::OkStatus();
}

PutPipeline::PutPipeline(const MerkleParams& params, PutPipelineOptions options,
                         std::unique_ptr<BlobSink> sink)
    : options_(std::move(options)), sink_(std::move(sink)), builder_(params) {}

PutPipeline::~PutPipeline() {
  if (!finished_) sink_->Abort();
}

absl::Status PutPipeline::Fail(absl::Status status) {
  if (!finished_) {
    finished_ = true;
    failure_ = status;
    sink_->Abort();
  }
  return status;
}

absl::Status PutPipeline::Ended() const {
  if (!failure_.ok()) return failure_;
  return absl::FailedPreconditionError("the Put was already committed");
}

absl::Status PutPipeline::Append(absl::Span<const uint8_t> data) {
  if (finished_ || staged_.has_value()) return Ended();
  if (data.size() > options_.max_bytes - size_) {
    return Fail(absl::ResourceExhaustedError(absl::StrCat(
        "blob exceeds the store's limit of ", options_.max_bytes, " bytes")));
  }
  if (options_.size.has_value() && data.size() > *options_.size - size_) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("the content is longer than the ", *options_.size,
                     " bytes the Put's content_size says")));
  }
  absl::Status status = builder_.Update(data);
  if (status.ok()) status = sink_->Append(data);
  if (!status.ok()) return Fail(std::move(status));
  size_ += data.size();
  return absl::OkStatus();
}

absl::StatusOr<PutResult> PutPipeline::Commit(const PutCommit& commit) {
  RETURN_IF_ERROR(Stage(commit));
  return Publish();
}

absl::Status PutPipeline::Stage(const PutCommit& commit) {
  if (finished_ || staged_.has_value()) return Ended();
  absl::StatusOr<SealedBlob> sealed = Seal(commit);
  if (!sealed.ok()) return Fail(sealed.status());
  // Durable but invisible first, then visible at once (Publish): a crash
  // between the two leaves no partial blob, only leftovers the store cleans
  // up.
  if (absl::Status staged = sink_->Stage(*sealed); !staged.ok()) {
    return Fail(std::move(staged));
  }
  staged_ = *std::move(sealed);
  return absl::OkStatus();
}

absl::StatusOr<PutResult> PutPipeline::Publish() {
  if (finished_) return Ended();
  if (!staged_.has_value()) {
    return absl::FailedPreconditionError("the Put was not staged");
  }
  absl::StatusOr<PutResult> result = sink_->Publish(*staged_);
  if (!result.ok()) return Fail(result.status());
  finished_ = true;
  return result;
}

absl::StatusOr<SealedBlob> PutPipeline::Seal(const PutCommit& commit) {
  // Before the tree is finished: a bad name costs no hashing.
  if (!commit.name.name.empty()) RETURN_IF_ERROR(CheckNameWrite(commit.name));
  if (commit.fsverity_signature.size() > kMaxFsveritySignatureSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the fs-verity signature is ", commit.fsverity_signature.size(),
        " bytes; at most ", kMaxFsveritySignatureSize, " may be stored"));
  }
  if (options_.size.has_value() && size_ != *options_.size) {
    return absl::InvalidArgumentError(
        absl::StrCat("the content is ", size_, " bytes, not the ",
                     *options_.size, " the Put's content_size says"));
  }
  SealedBlob blob;
  ASSIGN_OR_RETURN(blob.tree, builder_.Finish());
  blob.digest =
      ParsedDigest{blob.tree.descriptor.hash_algorithm, blob.tree.digest};
  blob.digest_text = blob.digest.ToString();
  for (const std::optional<ParsedDigest>* want :
       {&commit.expected, &options_.expected}) {
    RETURN_IF_ERROR(CheckExpected(*want, blob.digest, blob.digest_text));
  }
  blob.name = commit.name;
  blob.fsverity_signature = commit.fsverity_signature;
  blob.tree_manifest = commit.tree_manifest;
  return blob;
}

}  // namespace verity::server
