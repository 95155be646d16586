// Implements S3Store::PutSink: parts go up on the S3 client's thread while the
// next one fills; Stage and Publish order the objects so that a crash at any
// point leaves the blob either complete or invisible.

#include "server/store/s3/s3_put_sink.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/random_id.h"
#include "lib/base/status_macros.h"
#include "server/store/s3/s3_xml.h"

namespace verity::server {
namespace {

// Two parts in flight keep the network busy while the next part fills.
constexpr int kPartsInFlight = 2;

}  // namespace

S3Store::PutSink::PutSink(const S3Store& store, PartBudget& budget,
                          const std::optional<ParsedDigest>& expected,
                          std::optional<FecStreamEncoder> fec_stream,
                          bool record)
    : store_(store),
      budget_(budget),
      record_(record),
      data_key_(expected.has_value()
                    ? store.layout_.BlobKey(*expected, BlobObject::kData)
                    : store.layout_.UploadKey(RandomId())),
      fec_stream_(std::move(fec_stream)) {}

void S3Store::PutSink::Discard() {
  // Parts in flight reference this object.
  WaitForParts().IgnoreError();
  AbortUpload();
  ReleaseSlot();
  std::string().swap(buffer_);
}

void S3Store::PutSink::ReleaseSlot() {
  if (!holds_slot_) return;
  budget_.Release();
  holds_slot_ = false;
}

absl::Status S3Store::PutSink::Append(absl::Span<const uint8_t> data) {
  if (record_) {
    if (buffer_.size() + data.size() > store_.options_.record_max_bytes) {
      return absl::InvalidArgumentError(
          "the Put sent more content than the size it gave");
    }
    buffer_.append(reinterpret_cast<const char*>(data.data()), data.size());
    if (fec_stream_.has_value()) RETURN_IF_ERROR(fec_stream_->Update(data));
    return absl::OkStatus();
  }
  const size_t part_bytes = store_.options_.part_bytes;
  while (!data.empty()) {
    if (!holds_slot_) {
      budget_.Acquire();
      holds_slot_ = true;
    }
    const size_t n = std::min(data.size(), part_bytes - buffer_.size());
    buffer_.append(reinterpret_cast<const char*>(data.data()), n);
    if (fec_stream_.has_value()) {
      RETURN_IF_ERROR(fec_stream_->Update(data.first(n)));
    }
    data.remove_prefix(n);
    if (buffer_.size() == part_bytes) RETURN_IF_ERROR(StartPart());
  }
  return absl::OkStatus();
}

absl::Status S3Store::PutSink::CreateUpload() {
  S3Request request;
  request.op = "CreateMultipartUpload";
  request.method = "POST";
  request.key = data_key_;
  request.query = {{"uploads", ""}};
  // A retry could start a second upload; the first would be abandoned.
  request.idempotent = false;
  S3Response response = store_.client_->Call(std::move(request));
  RETURN_IF_ERROR(response.status);
  ASSIGN_OR_RETURN(upload_id_, ParseUploadId(response.body));
  return absl::OkStatus();
}

absl::Status S3Store::PutSink::StartPart() {
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
  store_.client_->Start(
      std::move(request), [this, number](S3Response response) {
        budget_.Release();
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

absl::Status S3Store::PutSink::WaitForParts() {
  absl::MutexLock lock(&mu_);
  while (in_flight_ > 0) part_done_.Wait(&mu_);
  return part_error_;
}

void S3Store::PutSink::AbortUpload() {
  if (upload_id_.empty()) return;
  S3Request request;
  request.op = "AbortMultipartUpload";
  request.method = "DELETE";
  request.key = data_key_;
  request.query = {{"uploadId", upload_id_}};
  S3Response response = store_.client_->Call(std::move(request));
  // What is left is aborted at the next start (abandoned_upload_age).
  if (!response.status.ok() && !absl::IsNotFound(response.status)) {
    store_.Log(absl::StrCat("could not abort the upload of ", data_key_, ": ",
                            response.status.message()));
  }
  upload_id_.clear();
}

absl::Status S3Store::PutSink::PutData(const ParsedDigest& digest) {
  if (upload_id_.empty()) {
    // Smaller than one part: a single PUT of what the buffer holds.
    RETURN_IF_ERROR(store_.PutObject(data_key_, std::move(buffer_)));
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
    RETURN_IF_ERROR(store_.client_->Call(std::move(complete)).status);
    upload_id_.clear();
  }
  ReleaseSlot();
  const std::string final_key =
      store_.layout_.BlobKey(digest, BlobObject::kData);
  if (data_key_ == final_key) return absl::OkStatus();
  return MoveIntoPlace(final_key);
}

absl::Status S3Store::PutSink::MoveIntoPlace(const std::string& final_key) {
  // Staged: the digest is known only now. S3 copies it server-side.
  RETURN_IF_ERROR(store_.PutObject(
      final_key, "",
      {absl::StrCat("x-amz-copy-source: /",
                    S3Escape(store_.client_->options().bucket, false), "/",
                    S3Escape(data_key_, true))}));
  S3Request remove;
  remove.op = "DeleteObject";
  remove.method = "DELETE";
  remove.key = data_key_;
  store_.client_->Call(std::move(remove)).status.IgnoreError();
  return absl::OkStatus();
}

absl::Status S3Store::PutSink::Stage(const SealedBlob& blob) {
  const absl::Status exists = store_.Exists(blob.digest);
  if (!exists.ok() && !absl::IsNotFound(exists)) return exists;
  stored_ = exists.ok();
  // Absent, a quarantine mark is one a delete cut short left, which the
  // listing of quarantine/ (at most a second old) has; one it missed keeps
  // the blob refused until the next Put replaces it.
  ASSIGN_OR_RETURN(quarantined_, stored_
                                     ? store_.IsQuarantined(blob.digest)
                                     : store_.IsQuarantinedListed(blob.digest));
  if (stored_) {
    ASSIGN_OR_RETURN(damaged_, store_.IsMarkedDamaged(blob.digest));
  }
  // Stored and served: keep what is there, and nothing of this Put but its
  // signature. Stored but quarantined, or with blocks FEC had to repair: its
  // objects are replaced by these, which hash right.
  if (stored_ && !quarantined_ && !damaged_) {
    Discard();
    return store_.Amend(blob.digest, blob.fsverity_signature, false);
  }
  // Claimed first, so that no sweep deletes what this Put writes. Data,
  // then tree, FEC area and signature, then (Publish) the descriptor, only
  // if absent: a reader that finds the blob finds all of them. A record is
  // all of them in the one object Publish puts, and new content's needs no
  // claim.
  if (record_ && !stored_) {
    RETURN_IF_ERROR(store_.ClaimUsedForRecord(blob.digest));
    return StageRecord(blob);
  }
  RETURN_IF_ERROR(store_.ClaimUsed(blob.digest));
  if (record_) return StageRecord(blob);
  RETURN_IF_ERROR(PutData(blob.digest));
  RETURN_IF_ERROR(store_.PutObject(
      store_.layout_.BlobKey(blob.digest, BlobObject::kTree), blob.tree.tree));
  RETURN_IF_ERROR(PutFec(blob));
  return PutSignature(blob);
}

absl::Status S3Store::PutSink::PutFec(const SealedBlob& blob) {
  if (store_.options_.fec_roots == 0 || blob.tree.descriptor.data_size == 0) {
    return absl::OkStatus();
  }
  std::optional<std::string> fec;
  if (fec_stream_.has_value()) {
    ASSIGN_OR_RETURN(fec, FinishFecArea(*fec_stream_, blob.tree.tree));
  } else {
    ASSIGN_OR_RETURN(fec, ReadBackFec(blob));
  }
  if (!fec.has_value()) return absl::OkStatus();
  return store_.PutObject(store_.layout_.BlobKey(blob.digest, BlobObject::kFec),
                          *std::move(fec));
}

absl::StatusOr<std::optional<std::string>> S3Store::PutSink::ReadBackFec(
    const SealedBlob& blob) {
  const uint64_t size = blob.tree.descriptor.data_size;
  ASSIGN_OR_RETURN(const MerkleParams params, ParamsOf(blob.tree.descriptor));
  ASSIGN_OR_RETURN(std::optional<FecStreamEncoder> stream,
                   FecStreamFor(params, size, store_.options_.fec_roots));
  if (!stream.has_value()) {
    store_.Log(absl::StrCat("stored ", blob.digest_text,
                            " without an FEC area: it would be over ",
                            kMaxStreamedFecBytes, " bytes"));
    return std::nullopt;
  }
  // What S3 gives back is as untrusted as any read of it: parity over wrong
  // bytes rebuilds blocks that fail their check, never a block served.
  const std::string key =
      store_.layout_.BlobKey(blob.digest, BlobObject::kData);
  budget_.Acquire();
  holds_slot_ = true;
  buffer_.resize(std::min<uint64_t>(size, store_.options_.part_bytes));
  for (uint64_t at = 0; at < size;) {
    const uint64_t n = std::min<uint64_t>(buffer_.size(), size - at);
    S3Request request;
    request.op = "ReadBackData";
    request.key = key;
    request.headers.push_back(
        absl::StrCat("Range: bytes=", at, "-", at + n - 1));
    const absl::Span<uint8_t> bytes = AsMutableBytes(&buffer_).first(n);
    request.into = bytes;
    const S3Response response = store_.client_->Call(std::move(request));
    RETURN_IF_ERROR(response.status);
    if (response.bytes != n) {
      return absl::UnavailableError(
          absl::StrCat("S3 gave ", response.bytes, " bytes of ", key,
                       " at offset ", at, " for ", n, " just written"));
    }
    RETURN_IF_ERROR(stream->Update(bytes));
    at += n;
  }
  std::string().swap(buffer_);
  ReleaseSlot();
  return FinishFecArea(*stream, blob.tree.tree);
}

absl::Status S3Store::PutSink::PutSignature(const SealedBlob& blob) {
  if (blob.fsverity_signature.empty()) return absl::OkStatus();
  return store_.PutObject(
      store_.layout_.BlobKey(blob.digest, BlobObject::kSignature),
      blob.fsverity_signature);
}

absl::Status S3Store::PutSink::StageRecord(const SealedBlob& blob) {
  std::string fec;
  if (store_.options_.fec_roots != 0 && fec_stream_.has_value() &&
      blob.tree.descriptor.data_size > 0) {
    ASSIGN_OR_RETURN(fec, FinishFecArea(*fec_stream_, blob.tree.tree));
  }
  ASSIGN_OR_RETURN(const std::string descriptor,
                   blob.tree.descriptor.Serialize());
  record_bytes_ = std::move(buffer_);
  buffer_.clear();
  record_bytes_ +=
      RecordTail(record_bytes_.size(), blob.tree.tree, fec, descriptor,
                 blob.fsverity_signature, blob.tree_manifest);
  return absl::OkStatus();
}

absl::StatusOr<bool> S3Store::PutSink::Commit(const SealedBlob& blob) {
  std::string body;
  if (record_) {
    body = std::move(record_bytes_);
  } else {
    ASSIGN_OR_RETURN(body, blob.tree.descriptor.Serialize());
  }
  // A concurrent Put of the same content wrote the same bytes; whichever
  // lands first wins. One that replaces a quarantined or damaged blob
  // writes over its descriptor object (a record there is all of the old
  // blob; a descriptor, the same as the one it replaces).
  std::vector<std::string> headers;
  if (!stored_) headers.push_back(S3PutCondition(std::nullopt));
  const absl::Status committed = store_.PutObject(
      store_.layout_.BlobKey(blob.digest, BlobObject::kDescriptor),
      std::move(body), std::move(headers));
  if (absl::IsFailedPrecondition(committed)) return false;
  RETURN_IF_ERROR(committed);
  return true;
}

BlobInfo S3Store::PutSink::NewBlobInfo(const SealedBlob& blob) const {
  // Absent until this Put: no name but its own points here.
  std::vector<std::string> names;
  if (!blob.name.name.empty()) names.push_back(blob.name.name);
  return BlobInfo{blob.digest_text,        blob.tree.descriptor,
                  blob.tree.tree.size(),   std::move(names),
                  blob.fsverity_signature, "",
                  blob.tree_manifest};
}

absl::StatusOr<PutResult> S3Store::PutSink::Publish(const SealedBlob& blob) {
  PutResult result;
  result.already_present = stored_ && !quarantined_ && !damaged_;
  bool landed = false;
  if (!result.already_present) {
    ASSIGN_OR_RETURN(landed, Commit(blob));
    if (!landed) result.already_present = !quarantined_ && !damaged_;
    if (quarantined_) RETURN_IF_ERROR(store_.Unquarantine(blob.digest));
    if (damaged_) RETURN_IF_ERROR(store_.ClearDamaged(blob.digest));
  }
  // After the descriptor: a Put that fails before it leaves the blob
  // unmarked, and the client's retry finds it stored and marks it. A record
  // this Put wrote holds the mark already.
  if (blob.tree_manifest && !(record_ && landed)) {
    RETURN_IF_ERROR(store_.Amend(blob.digest, "", true));
  }
  if (!blob.name.name.empty()) {
    RETURN_IF_ERROR(store_.WriteName(blob.name, blob.digest));
  }
  if (landed && !stored_) {
    result.info = NewBlobInfo(blob);
  } else {
    ASSIGN_OR_RETURN(result.info, store_.Stat(blob.digest));
  }
  result.info.name_statement = blob.name.statement;
  return result;
}

}  // namespace verity::server
