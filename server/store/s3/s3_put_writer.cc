// Implements S3PutWriter: parts go up on the S3 client's thread while the next
// one fills; Commit orders the objects so that a crash at any point leaves the
// blob either complete or invisible.

#include "server/store/s3/s3_put_writer.h"

#include <utility>

#include "absl/random/random.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/hash.h"
#include "lib/status_macros.h"
#include "server/store/name_index.h"
#include "server/store/s3/s3_store.h"
#include "server/store/s3/s3_xml.h"

namespace verity::server {
namespace {

// Two parts in flight keep the network busy while the next part fills.
constexpr int kPartsInFlight = 2;

// A staging object's name: random, so concurrent Puts never share one.
std::string RandomId() {
  absl::BitGen gen;
  std::string bytes(16, '\0');
  for (char& c : bytes) c = static_cast<char>(absl::Uniform<uint8_t>(gen));
  return absl::BytesToHexString(bytes);
}

}  // namespace

void PartBudget::Acquire() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](int* free) { return *free > 0; }, &free_));
  --free_;
}

void PartBudget::Release() {
  absl::MutexLock lock(&mu_);
  ++free_;
}

S3PutWriter::S3PutWriter(S3Store* store, const MerkleParams& params,
                         std::optional<ParsedDigest> expected)
    : store_(store),
      expected_(std::move(expected)),
      data_key_(expected_.has_value()
                    ? store->layout().BlobKey(*expected_, BlobObject::kData)
                    : store->layout().UploadKey(RandomId())),
      builder_(params) {}

S3PutWriter::~S3PutWriter() {
  // Parts in flight reference this object.
  WaitForParts().IgnoreError();
  if (holds_slot_) store_->part_budget().Release();
  if (!finished_) AbortUpload();
}

absl::Status S3PutWriter::Fail(absl::Status status) {
  if (!finished_) {
    WaitForParts().IgnoreError();
    AbortUpload();
    finished_ = true;
    failure_ = status;
  }
  return status;
}

absl::Status S3PutWriter::Append(absl::Span<const uint8_t> data) {
  if (finished_) {
    return failure_.ok()
               ? absl::FailedPreconditionError("the Put was already committed")
               : failure_;
  }
  const uint64_t max = store_->options().max_blob_bytes;
  if (data.size() > max - size_) {
    return Fail(absl::ResourceExhaustedError(
        absl::StrCat("blob exceeds the store's limit of ", max, " bytes")));
  }
  absl::Status built = builder_.Update(data);
  if (!built.ok()) return Fail(std::move(built));
  size_ += data.size();
  const size_t part_bytes = store_->options().part_bytes;
  while (!data.empty()) {
    if (!holds_slot_) {
      store_->part_budget().Acquire();
      holds_slot_ = true;
    }
    const size_t n = std::min(data.size(), part_bytes - buffer_.size());
    buffer_.append(reinterpret_cast<const char*>(data.data()), n);
    data.remove_prefix(n);
    if (buffer_.size() == part_bytes) {
      absl::Status started = StartPart();
      if (!started.ok()) return Fail(std::move(started));
    }
  }
  return absl::OkStatus();
}

absl::Status S3PutWriter::CreateUpload() {
  S3Request request;
  request.op = "CreateMultipartUpload";
  request.method = "POST";
  request.key = data_key_;
  request.query = {{"uploads", ""}};
  // A retry could start a second upload; the first would be abandoned.
  request.idempotent = false;
  S3Response response = store_->client().Call(std::move(request));
  RETURN_IF_ERROR(response.status);
  ASSIGN_OR_RETURN(upload_id_, ParseUploadId(response.body));
  return absl::OkStatus();
}

absl::Status S3PutWriter::StartPart() {
  if (upload_id_.empty()) RETURN_IF_ERROR(CreateUpload());
  const int number = ++parts_;
  {
    absl::MutexLock lock(&mu_);
    while (in_flight_ >= kPartsInFlight && part_error_.ok()) {
      part_done_.Wait(&mu_);
    }
    RETURN_IF_ERROR(part_error_);
    ++in_flight_;
    etags_.resize(number);
  }
  S3Request request;
  request.op = "UploadPart";
  request.method = "PUT";
  request.key = data_key_;
  request.query = {{"partNumber", absl::StrCat(number)},
                   {"uploadId", upload_id_}};
  request.body = std::move(buffer_);
  buffer_.clear();
  // The slot goes with the part and comes back when it is uploaded.
  holds_slot_ = false;
  store_->client().Start(
      std::move(request), [this, number](S3Response response) {
        store_->part_budget().Release();
        absl::MutexLock lock(&mu_);
        if (response.status.ok() && response.etag.empty()) {
          response.status = absl::InternalError(
              absl::StrCat("S3 gave part ", number, " no ETag"));
        }
        if (response.status.ok()) {
          etags_[number - 1] = response.etag;
        } else if (part_error_.ok()) {
          part_error_ = response.status;
        }
        --in_flight_;
        part_done_.SignalAll();
      });
  return absl::OkStatus();
}

absl::Status S3PutWriter::WaitForParts() {
  absl::MutexLock lock(&mu_);
  while (in_flight_ > 0) part_done_.Wait(&mu_);
  return part_error_;
}

void S3PutWriter::AbortUpload() {
  if (upload_id_.empty()) return;
  S3Request request;
  request.op = "AbortMultipartUpload";
  request.method = "DELETE";
  request.key = data_key_;
  request.query = {{"uploadId", upload_id_}};
  S3Response response = store_->client().Call(std::move(request));
  // What is left is aborted at the next start (abandoned_upload_age).
  if (!response.status.ok() && !absl::IsNotFound(response.status)) {
    store_->Log(absl::StrCat("could not abort the upload of ", data_key_, ": ",
                             response.status.message()));
  }
  upload_id_.clear();
}

absl::Status S3PutWriter::PutData(const ParsedDigest& digest) {
  if (upload_id_.empty()) {
    // Smaller than one part: a single PUT of what the buffer holds.
    RETURN_IF_ERROR(store_->PutObject(data_key_, std::move(buffer_)));
    buffer_.clear();
  } else {
    if (!buffer_.empty()) RETURN_IF_ERROR(StartPart());
    RETURN_IF_ERROR(WaitForParts());
    S3Request complete;
    complete.op = "CompleteMultipartUpload";
    complete.method = "POST";
    complete.key = data_key_;
    complete.query = {{"uploadId", upload_id_}};
    {
      absl::MutexLock lock(&mu_);
      complete.body = CompleteMultipartBody(etags_);
    }
    RETURN_IF_ERROR(store_->client().Call(std::move(complete)).status);
    upload_id_.clear();
  }
  if (holds_slot_) {
    store_->part_budget().Release();
    holds_slot_ = false;
  }
  const std::string final_key =
      store_->layout().BlobKey(digest, BlobObject::kData);
  if (data_key_ == final_key) return absl::OkStatus();
  // Staged: the digest is known only now. S3 copies it server-side.
  RETURN_IF_ERROR(store_->PutObject(
      final_key, "",
      {absl::StrCat("x-amz-copy-source: /",
                    S3Escape(store_->client().options().bucket, false), "/",
                    S3Escape(data_key_, true))}));
  S3Request remove;
  remove.op = "DeleteObject";
  remove.method = "DELETE";
  remove.key = data_key_;
  store_->client().Call(std::move(remove)).status.IgnoreError();
  return absl::OkStatus();
}

absl::StatusOr<PutResult> S3PutWriter::Commit(
    const std::optional<ParsedDigest>& expected, absl::string_view name) {
  if (finished_) {
    return failure_.ok()
               ? absl::FailedPreconditionError("the Put was already committed")
               : failure_;
  }
  if (!name.empty()) {
    absl::Status valid = ValidateBlobName(name);
    if (!valid.ok()) return Fail(std::move(valid));
  }
  absl::StatusOr<MerkleTree> tree = builder_.Finish();
  if (!tree.ok()) return Fail(tree.status());
  const ParsedDigest digest{tree->descriptor.hash_algorithm, tree->digest};
  for (const std::optional<ParsedDigest>& want : {expected, expected_}) {
    if (want.has_value() && *want != digest) {
      return Fail(absl::DataLossError(
          absl::StrCat("content hashes to ", digest.ToString(),
                       ", not the expected ", want->ToString())));
    }
  }
  absl::StatusOr<PutResult> result = Install(digest, *tree, name);
  if (!result.ok()) return Fail(result.status());
  finished_ = true;
  return result;
}

absl::StatusOr<PutResult> S3PutWriter::Install(const ParsedDigest& digest,
                                               const MerkleTree& tree,
                                               absl::string_view name) {
  PutResult result;
  const absl::Status exists = store_->Exists(digest);
  if (!exists.ok() && !absl::IsNotFound(exists)) return exists;
  ASSIGN_OR_RETURN(const bool quarantined, store_->IsQuarantined(digest));
  // Stored and served: keep what is there. Stored but quarantined: its
  // objects are replaced by these, which hash right.
  result.already_present = exists.ok() && !quarantined;
  if (result.already_present) {
    WaitForParts().IgnoreError();
    AbortUpload();
  } else {
    // Data, then tree, then the descriptor, only if absent: the blob appears
    // whole or not at all. A concurrent Put of the same content wrote the
    // same bytes; whichever descriptor lands first wins.
    RETURN_IF_ERROR(PutData(digest));
    RETURN_IF_ERROR(store_->PutObject(
        store_->layout().BlobKey(digest, BlobObject::kTree), tree.tree));
    ASSIGN_OR_RETURN(std::string descriptor, tree.descriptor.Serialize());
    absl::Status committed = store_->PutObject(
        store_->layout().BlobKey(digest, BlobObject::kDescriptor),
        std::move(descriptor), {"If-None-Match: *"});
    if (absl::IsFailedPrecondition(committed)) {
      result.already_present = !quarantined;
    } else {
      RETURN_IF_ERROR(committed);
    }
    if (quarantined) RETURN_IF_ERROR(store_->Unquarantine(digest));
  }
  if (!name.empty()) RETURN_IF_ERROR(store_->SetName(name, digest));
  ASSIGN_OR_RETURN(result.info, store_->Stat(digest));
  return result;
}

}  // namespace verity::server
