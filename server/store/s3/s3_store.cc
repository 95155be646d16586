// Implements S3Store on S3Client's blocking Call(): every method here runs on
// the RPC layer's I/O executor, never on a gRPC thread (see Store::IsLocal).
// Reads of blob bytes are S3Blob's, asynchronous.

#include "server/store/s3/s3_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "lib/base/parallel_for.h"
#include "lib/base/status_macros.h"
#include "server/store/name_index.h"
#include "server/store/put_pipeline.h"
#include "server/store/s3/s3_blob.h"
#include "server/store/s3/s3_put_sink.h"
#include "server/store/s3/s3_xml.h"

namespace verity::server {

// How old the listing of quarantine/ that Has() and DataSize() go by may
// be.
constexpr absl::Duration kQuarantineListAge = absl::Seconds(1);
namespace {

constexpr int kListPageKeys = 1000;
// The Puts of one PutBatch in flight together: each waits on S3 for most of
// its time.
constexpr int kBatchPutsInFlight = 16;
// Conditional writes of one object (a name, a record) that may lose a race
// before one gives up.
constexpr int kNameWriteAttempts = 8;

// What a listing continues from: the next page's query.
void AddListQuery(S3Request* request, const std::string& prefix,
                  const std::string& start_after, const std::string& token,
                  size_t max_keys = kListPageKeys) {
  request->query = {{"list-type", "2"},
                    {"prefix", prefix},
                    {"max-keys", absl::StrCat(max_keys)}};
  if (!token.empty()) {
    request->query.push_back({"continuation-token", token});
  } else if (!start_after.empty()) {
    request->query.push_back({"start-after", start_after});
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<S3Store>> S3Store::Open(
    const S3StoreOptions& options) {
  if (options.part_bytes < (size_t{5} << 20)) {
    return absl::InvalidArgumentError(
        "S3 multipart parts must be at least 5 MiB");
  }
  RETURN_IF_ERROR(ValidateNameHistory(options.name_history));
  if (options.record_max_bytes > kMaxRecordDataBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "records hold at most ", kMaxRecordDataBytes, " bytes of data"));
  }
  if (options.fec_roots != 0)
    RETURN_IF_ERROR(ValidateFecRoots(options.fec_roots));
  ASSIGN_OR_RETURN(std::unique_ptr<S3Client> client,
                   options.make_client ? options.make_client(options.client)
                                       : S3Client::Create(options.client));
  std::unique_ptr<S3Store> store(new S3Store(options, std::move(client)));
  RETURN_IF_ERROR(store->CheckBucket());
  store->AbortAbandonedUploads();
  return store;
}

S3Store::S3Store(const S3StoreOptions& options,
                 std::unique_ptr<S3Client> client)
    : options_(options),
      layout_(options.prefix),
      client_(std::move(client)),
      part_budget_(std::max(1, options.part_slots)) {}

void S3Store::Log(absl::string_view message) const {
  if (options_.log) {
    options_.log(message);
    return;
  }
  LogToStderr(message);
}

absl::Status S3Store::CheckBucket() const {
  S3Request request;
  request.op = "ListObjectsV2";
  request.query = {
      {"list-type", "2"}, {"prefix", layout_.prefix()}, {"max-keys", "1"}};
  const S3Response response = client_->Call(std::move(request));
  if (response.status.ok()) return absl::OkStatus();
  const S3ClientOptions& c = options_.client;
  if (response.error_code == "NoSuchBucket") {
    return absl::NotFoundError(
        absl::StrCat("the S3 bucket '", c.bucket,
                     "' does not exist at --s3_endpoint=", c.endpoint));
  }
  if (absl::IsPermissionDenied(response.status)) {
    return absl::PermissionDeniedError(absl::StrCat(
        "the S3 endpoint refused the credentials of access key '",
        c.credentials.access_key_id, "' (AWS_ACCESS_KEY_ID) for bucket '",
        c.bucket, "': ", response.status.message()));
  }
  if (absl::IsUnavailable(response.status)) {
    return absl::UnavailableError(
        absl::StrCat("cannot reach the S3 endpoint --s3_endpoint=", c.endpoint,
                     ": ", response.status.message()));
  }
  return response.status;
}

void S3Store::AbortAbandonedUploads() const {
  const absl::Time cutoff = absl::Now() - options_.abandoned_upload_age;
  std::string key_marker, id_marker;
  int aborted = 0;
  while (true) {
    S3Request request;
    request.op = "ListMultipartUploads";
    request.query = {{"uploads", ""}, {"prefix", layout_.prefix()}};
    if (!key_marker.empty()) {
      request.query.push_back({"key-marker", key_marker});
      request.query.push_back({"upload-id-marker", id_marker});
    }
    const S3Response response = client_->Call(std::move(request));
    absl::StatusOr<S3Uploads> uploads =
        response.status.ok() ? ParseListUploads(response.body)
                             : absl::StatusOr<S3Uploads>(response.status);
    if (!uploads.ok()) {
      Log(absl::StrCat("could not list abandoned uploads: ",
                       uploads.status().message()));
      return;
    }
    for (const S3Uploads::Upload& upload : uploads->uploads) {
      absl::Time initiated;
      std::string error;
      if (!absl::ParseTime(absl::RFC3339_full, upload.initiated, &initiated,
                           &error) ||
          initiated > cutoff) {
        continue;
      }
      S3Request abort;
      abort.op = "AbortMultipartUpload";
      abort.method = "DELETE";
      abort.key = upload.key;
      abort.query = {{"uploadId", upload.upload_id}};
      if (client_->Call(std::move(abort)).status.ok()) ++aborted;
    }
    if (!uploads->truncated) break;
    key_marker = uploads->next_key_marker;
    id_marker = uploads->next_upload_id_marker;
  }
  if (aborted > 0) {
    Log(absl::StrCat("aborted ", aborted, " abandoned multipart uploads"));
  }
}

absl::StatusOr<std::string> S3Store::GetObject(const std::string& key,
                                               absl::string_view op) const {
  S3Request request;
  request.op = std::string(op);
  request.key = key;
  S3Response response = client_->Call(std::move(request));
  RETURN_IF_ERROR(response.status);
  return std::move(response.body);
}

absl::Status S3Store::PutObject(const std::string& key, std::string body,
                                std::vector<std::string> headers) const {
  S3Request request;
  request.op = "PutObject";
  request.method = "PUT";
  request.key = key;
  request.body = std::move(body);
  request.headers = std::move(headers);
  return client_->Call(std::move(request)).status;
}

absl::Status S3Store::DeleteObject(const std::string& key) const {
  S3Request request;
  request.op = "DeleteObject";
  request.method = "DELETE";
  request.key = key;
  absl::Status status = client_->Call(std::move(request)).status;
  return absl::IsNotFound(status) ? absl::OkStatus() : status;
}

absl::Status S3Store::Exists(const ParsedDigest& digest) const {
  S3Request request;
  request.op = "HeadDescriptor";
  request.method = "HEAD";
  request.key = layout_.BlobKey(digest, BlobObject::kDescriptor);
  absl::Status status = client_->Call(std::move(request)).status;
  if (absl::IsNotFound(status)) {
    return absl::NotFoundError(absl::StrCat("no blob ", digest.ToString()));
  }
  return status;
}

absl::StatusOr<bool> S3Store::HasObject(const std::string& key,
                                        absl::string_view op) const {
  S3Request request;
  request.op = std::string(op);
  request.method = "HEAD";
  request.key = key;
  const absl::Status status = client_->Call(std::move(request)).status;
  if (absl::IsNotFound(status)) return false;
  RETURN_IF_ERROR(status);
  return true;
}

absl::StatusOr<bool> S3Store::IsQuarantined(const ParsedDigest& digest) const {
  return HasObject(layout_.QuarantineKey(digest), "HeadQuarantine");
}

absl::Status S3Store::Unquarantine(const ParsedDigest& digest) const {
  {
    absl::MutexLock lock(&quarantine_mu_);
    quarantine_keys_.erase(layout_.QuarantineKey(digest));
  }
  return DeleteObject(layout_.QuarantineKey(digest));
}

absl::StatusOr<bool> S3Store::IsMarkedDamaged(
    const ParsedDigest& digest) const {
  return HasObject(layout_.DamagedKey(digest), "HeadDamaged");
}

absl::Status S3Store::ClearDamaged(const ParsedDigest& digest) const {
  return DeleteObject(layout_.DamagedKey(digest));
}

absl::StatusOr<int> S3Store::FecRoots(const ParsedDigest& digest,
                                      const TreeGeometry& geometry) const {
  const std::string key = layout_.BlobKey(digest, BlobObject::kFec);
  S3Request request;
  request.op = "ListFec";
  // No other object of the blob's starts with "fec".
  request.query = {{"list-type", "2"}, {"prefix", key}, {"max-keys", "1"}};
  S3Response response = client_->Call(std::move(request));
  RETURN_IF_ERROR(response.status);
  ASSIGN_OR_RETURN(const S3Listing listing, ParseListObjects(response.body));
  for (const S3Listing::Object& object : listing.objects) {
    if (object.key == key) return FecRootsOfSize(geometry, object.size);
  }
  return 0;
}

absl::StatusOr<S3Store::Commit> S3Store::ReadCommit(
    const ParsedDigest& digest) const {
  S3Request request;
  request.op = "GetDescriptor";
  request.key = layout_.BlobKey(digest, BlobObject::kDescriptor);
  // A byte past the largest record, so that a larger object (a bucket's
  // writer) is refused without holding it.
  request.headers.push_back(absl::StrCat("Range: bytes=0-", kMaxRecordSize));
  S3Response response = client_->Call(std::move(request));
  if (absl::IsNotFound(response.status)) {
    return absl::NotFoundError(absl::StrCat("no blob ", digest.ToString()));
  }
  // An empty object has no byte 0: as a descriptor, it is damaged.
  if (absl::IsOutOfRange(response.status)) response = S3Response{};
  RETURN_IF_ERROR(response.status);
  if (response.body.size() > kMaxRecordSize) {
    return DamagedBlob(digest.ToString(),
                       absl::StrCat("its descriptor object is over ",
                                    kMaxRecordSize, " bytes"));
  }
  // A record is larger than any descriptor, or as small as one with its
  // magic (a damaged one without it fails as a descriptor).
  if (response.body.size() <= kMaxDescriptorSize &&
      !HasRecordMagic(response.body)) {
    ASSIGN_OR_RETURN(CheckedDescriptor checked,
                     CheckStoredDescriptor(response.body, digest));
    return Commit{std::move(checked),      nullptr, {}, "", 0,
                  std::move(response.etag)};
  }
  ASSIGN_OR_RETURN(const RecordFooter footer,
                   DecodeRecord(response.body, digest.ToString()));
  ASSIGN_OR_RETURN(RecordHead head,
                   CheckRecordHead(footer,
                                   absl::string_view(response.body)
                                       .substr(footer.descriptor_offset(),
                                               footer.descriptor_size +
                                                   footer.signature_size),
                                   digest));
  return Commit{std::move(head.checked),
                std::make_shared<const std::string>(std::move(response.body)),
                footer,
                std::move(head.signature),
                head.fec_roots,
                std::move(response.etag)};
}

absl::StatusOr<CheckedDescriptor> S3Store::ReadDescriptor(
    const ParsedDigest& digest) const {
  ASSIGN_OR_RETURN(Commit commit, ReadCommit(digest));
  return std::move(commit.checked);
}

absl::Status S3Store::Amend(const ParsedDigest& digest,
                            absl::string_view signature,
                            bool tree_manifest) const {
  if (signature.empty() && !tree_manifest) return absl::OkStatus();
  const std::string key = layout_.BlobKey(digest, BlobObject::kDescriptor);
  for (int attempt = 0; attempt < kNameWriteAttempts; ++attempt) {
    ASSIGN_OR_RETURN(const Commit commit, ReadCommit(digest));
    if (commit.record == nullptr) {
      if (!signature.empty()) {
        RETURN_IF_ERROR(
            PutObject(layout_.BlobKey(digest, BlobObject::kSignature),
                      std::string(signature)));
      }
      if (!tree_manifest) return absl::OkStatus();
      return PutObject(layout_.BlobKey(digest, BlobObject::kTreeManifestMark),
                       "");
    }
    const absl::string_view now_signed =
        signature.empty() ? absl::string_view(commit.signature) : signature;
    const bool marked = tree_manifest || commit.footer.tree_manifest;
    if (now_signed == commit.signature &&
        marked == commit.footer.tree_manifest) {
      return absl::OkStatus();
    }
    const absl::StatusOr<std::string> written = SwapObject(
        key, RecordWith(*commit.record, commit.footer, now_signed, marked),
        commit.etag, "AmendRecord", "the record of " + digest.ToString());
    if (!absl::IsFailedPrecondition(written.status())) {
      return written.status();
    }
  }
  return absl::AbortedError(absl::StrCat("the record of ", digest.ToString(),
                                         " kept changing (", kNameWriteAttempts,
                                         " tries); retry"));
}

absl::StatusOr<std::unique_ptr<PutWriter>> S3Store::StartPut(
    const MerkleParams& params, const std::optional<ParsedDigest>& expected,
    std::optional<uint64_t> size) {
  RETURN_IF_ERROR(ValidatePutParams(params));
  RETURN_IF_ERROR(CheckPutSize(size, options_.max_blob_bytes));
  // The data goes to the expected blob's object as it arrives.
  if (expected.has_value() && expected->algorithm != params.hash_algorithm) {
    return absl::InvalidArgumentError(
        "the expected digest uses another hash algorithm than params");
  }
  ASSIGN_OR_RETURN(std::optional<FecStreamEncoder> fec_stream,
                   FecStreamFor(params, size, options_.fec_roots));
  const bool record = options_.record_max_bytes > 0 && size.has_value() &&
                      *size <= options_.record_max_bytes;
  return std::make_unique<PutPipeline>(
      params,
      PutPipelineOptions{options_.max_blob_bytes, expected,
                         options_.put_executor, size},
      std::make_unique<PutSink>(*this, part_budget_, expected,
                                std::move(fec_stream), record));
}

std::vector<absl::StatusOr<PutResult>> S3Store::PutBatch(
    absl::Span<const BatchPut> blobs) {
  std::vector<absl::StatusOr<PutResult>> results(
      blobs.size(), absl::UnknownError("not stored"));
  // Each ends alone: a failure stops no other.
  ParallelFor(blobs.size(), kBatchPutsInFlight, [&](size_t i) {
    results[i] = PutWhole(blobs[i]);
    return absl::OkStatus();
  }).IgnoreError();
  return results;
}

absl::StatusOr<std::shared_ptr<const Blob>> S3Store::OpenBlob(
    const ParsedDigest& digest) const {
  ASSIGN_OR_RETURN(Commit commit, ReadCommit(digest));
  // A record is one of many small files read together: one listing of
  // quarantine/ a second serves all of their opens.
  const bool record = commit.record != nullptr;
  ASSIGN_OR_RETURN(const bool quarantined, record ? IsQuarantinedListed(digest)
                                                  : IsQuarantined(digest));
  if (quarantined) {
    return DamagedBlob(digest.ToString(), "quarantined (found corrupt)");
  }
  if (!record) {
    ASSIGN_OR_RETURN(commit.signature, ReadSignature(digest));
    ASSIGN_OR_RETURN(commit.fec_roots,
                     FecRoots(digest, commit.checked.geometry));
  }
  // The blob may outlive the store: it logs through a copy of the sink.
  return std::make_shared<S3Blob>(
      commit.checked, digest, std::move(commit.signature), commit.fec_roots,
      layout_, client_,
      options_.log ? options_.log
                   : [](absl::string_view line) { LogToStderr(line); },
      S3Blob::Record{std::move(commit.record), commit.footer});
}

absl::StatusOr<std::string> S3Store::ReadSignature(
    const ParsedDigest& digest) const {
  absl::StatusOr<std::string> signature = GetObject(
      layout_.BlobKey(digest, BlobObject::kSignature), "GetSignature");
  if (absl::IsNotFound(signature.status())) return std::string();
  RETURN_IF_ERROR(signature.status());
  if (signature->size() > kMaxFsveritySignatureSize) {
    return DamagedBlob(digest.ToString(),
                       absl::StrCat("its fs-verity signature object is ",
                                    signature->size(), " bytes"));
  }
  return signature;
}

namespace {

// The history in a name object read back for `name`.
absl::StatusOr<NameHistory> DecodeNameObject(absl::string_view name,
                                             absl::string_view body) {
  ASSIGN_OR_RETURN(NameHistory decoded, DecodeNameHistory(body));
  if (decoded.name != name) {
    return absl::DataLossError(
        absl::StrCat("the name object of ", name, " holds another name"));
  }
  return decoded;
}

}  // namespace

absl::StatusOr<NamedBlob> S3Store::LookupName(absl::string_view name) const {
  ASSIGN_OR_RETURN(NameHistory history, History(name));
  NameVersion& current = history.versions[0];
  return NamedBlob{std::move(current.digest), std::move(current.statement),
                   current.log_index};
}

absl::StatusOr<NameHistory> S3Store::History(absl::string_view name) const {
  RETURN_IF_ERROR(ValidateBlobName(name));
  absl::StatusOr<std::string> record =
      GetObject(layout_.NameKey(name), "GetName");
  if (absl::IsNotFound(record.status())) {
    return absl::NotFoundError(absl::StrCat("no blob is named ", name));
  }
  RETURN_IF_ERROR(record.status());
  return DecodeNameObject(name, *record);
}

absl::StatusOr<NamePage> S3Store::ListNames(absl::string_view after,
                                            size_t limit) const {
  S3Request request;
  request.op = "ListObjectsV2";
  AddListQuery(&request, layout_.names_prefix(),
               after.empty() ? "" : layout_.names_prefix() + std::string(after),
               "", std::clamp<size_t>(limit, 1, kListPageKeys));
  S3Response response = client_->Call(std::move(request));
  RETURN_IF_ERROR(response.status);
  ASSIGN_OR_RETURN(const S3Listing listing, ParseListObjects(response.body));
  NamePage page;
  for (const S3Listing::Object& object : listing.objects) {
    absl::StatusOr<std::string> body = GetObject(object.key, "GetName");
    if (absl::IsNotFound(body.status())) continue;  // deleted meanwhile
    RETURN_IF_ERROR(body.status());
    ASSIGN_OR_RETURN(NameHistory history, DecodeNameHistory(*body));
    if (layout_.NameKey(history.name) != object.key) {
      return absl::DataLossError(
          absl::StrCat("the name object ", object.key, " holds another name"));
    }
    page.names.push_back(std::move(history));
  }
  if (listing.truncated && !listing.objects.empty()) {
    page.next = std::string(
        absl::StripPrefix(listing.objects.back().key, layout_.names_prefix()));
  }
  return page;
}

absl::StatusOr<BlobInfo> S3Store::SetName(const ParsedDigest& digest,
                                          const NameWrite& write) {
  RETURN_IF_ERROR(CheckNameWrite(write));
  const absl::Status exists = Exists(digest);
  ASSIGN_OR_RETURN(const bool quarantined, IsQuarantined(digest));
  if (exists.ok() && quarantined) {
    return absl::NotFoundError(
        absl::StrCat("cannot name ", digest.ToString(), ": it is quarantined"));
  }
  RETURN_IF_ERROR(exists);
  RETURN_IF_ERROR(WriteName(write, digest));
  ASSIGN_OR_RETURN(BlobInfo info, Stat(digest));
  info.name_statement = write.statement;
  return info;
}

absl::Status S3Store::WriteName(const NameWrite& write,
                                const ParsedDigest& digest) const {
  std::optional<ParsedDigest> old;
  bool written = false;
  for (int attempt = 0; attempt < kNameWriteAttempts && !written; ++attempt) {
    ASSIGN_OR_RETURN(written, TryWriteName(write, digest, attempt > 0, &old));
  }
  if (!written) {
    return absl::AbortedError(absl::StrCat(
        "the name \"", write.name, "\" kept changing while it was written (",
        kNameWriteAttempts, " tries); retry"));
  }
  RETURN_IF_ERROR(PutObject(layout_.NameHintKey(digest, write.name),
                            std::string(write.name)));
  // The hint under the blob the name pointed at goes; a stale one left by a
  // race is ignored by NamesOf, which checks each hint against the name.
  if (old.has_value() && *old != digest) {
    DeleteObject(layout_.NameHintKey(*old, write.name)).IgnoreError();
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> S3Store::TryWriteName(
    const NameWrite& write, const ParsedDigest& digest, bool retrying,
    std::optional<ParsedDigest>* old) const {
  const std::string key = layout_.NameKey(write.name);
  S3Request get;
  get.op = "GetName";
  get.key = key;
  const S3Response current = client_->Call(std::move(get));
  if (!current.status.ok() && !absl::IsNotFound(current.status)) {
    return current.status;
  }
  const bool absent = absl::IsNotFound(current.status);
  // A damaged name object is replaced like one without a statement (and its
  // history starts anew): the bucket is untrusted, and clients check what
  // they are given.
  const absl::StatusOr<NameHistory> before =
      absent ? absl::NotFoundError("")
             : DecodeNameObject(write.name, current.body);
  if (before.ok()) {
    const NameVersion& now = before->versions[0];
    // An earlier attempt of this write that did land.
    if (retrying && now.digest == digest && now.statement == write.statement) {
      return true;
    }
    *old = now.digest;
  }
  RETURN_IF_ERROR(RunNameCheck(
      write, digest, before.ok() ? before->versions[0].statement : ""));
  const std::string body = EncodeNameHistory(NextNameHistory(
      before.ok() ? &*before : nullptr, write.name,
      NameVersion{digest, write.statement, absl::Now(), write.log_index},
      options_.name_history));
  if (!absent && current.etag.empty()) {
    return absl::UnavailableError(
        absl::StrCat("S3 gave the name object ", key, " no ETag"));
  }
  const absl::Status put = PutObject(
      key, body,
      {S3PutCondition(absent ? std::nullopt : std::optional(current.etag))});
  if (absl::IsFailedPrecondition(put)) return false;  // lost a race
  RETURN_IF_ERROR(put);
  return true;
}

absl::StatusOr<S3Listing> S3Store::ListPage(const std::string& prefix,
                                            const std::string& start_after,
                                            const std::string& token) const {
  S3Request request;
  request.op = "ListObjectsV2";
  AddListQuery(&request, prefix, start_after, token);
  S3Response response = client_->Call(std::move(request));
  RETURN_IF_ERROR(response.status);
  return ParseListObjects(response.body);
}

absl::StatusOr<std::vector<std::string>> S3Store::ListKeys(
    const std::string& prefix) const {
  std::vector<std::string> keys;
  std::string token;
  do {
    ASSIGN_OR_RETURN(S3Listing listing, ListPage(prefix, "", token));
    for (S3Listing::Object& object : listing.objects) {
      keys.push_back(std::move(object.key));
    }
    token = listing.truncated ? listing.next_continuation_token : "";
  } while (!token.empty());
  return keys;
}

absl::StatusOr<std::vector<std::string>> S3Store::NamesOf(
    const ParsedDigest& digest) const {
  ASSIGN_OR_RETURN(const std::vector<std::string> hints,
                   ListKeys(layout_.NameHintPrefix(digest)));
  std::vector<std::string> names;
  for (const std::string& key : hints) {
    absl::StatusOr<std::string> name = GetObject(key, "GetNameHint");
    if (absl::IsNotFound(name.status())) continue;  // deleted meanwhile
    RETURN_IF_ERROR(name.status());
    absl::StatusOr<ParsedDigest> points_at = ResolveName(*name);
    // A name that could not be read may still point here: DeleteBlob would
    // leave it behind, pointing at nothing. (One found damaged does not.)
    if (!points_at.ok() && !absl::IsNotFound(points_at.status()) &&
        !absl::IsDataLoss(points_at.status())) {
      return points_at.status();
    }
    if (points_at.ok() && *points_at == digest) names.push_back(*name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<BlobInfo> S3Store::Stat(const ParsedDigest& digest) const {
  ASSIGN_OR_RETURN(Commit commit, ReadCommit(digest));
  ASSIGN_OR_RETURN(const bool quarantined, IsQuarantined(digest));
  if (quarantined) {
    return DamagedBlob(digest.ToString(), "quarantined (found corrupt)");
  }
  ASSIGN_OR_RETURN(std::vector<std::string> names, NamesOf(digest));
  bool tree_manifest = commit.footer.tree_manifest;
  if (commit.record == nullptr) {
    ASSIGN_OR_RETURN(commit.signature, ReadSignature(digest));
    ASSIGN_OR_RETURN(
        tree_manifest,
        HasObject(layout_.BlobKey(digest, BlobObject::kTreeManifestMark),
                  "HeadTreeManifestMark"));
  }
  const CheckedDescriptor& checked = commit.checked;
  return BlobInfo{digest.ToString(),
                  checked.descriptor,
                  checked.geometry.tree_size(),
                  std::move(names),
                  std::move(commit.signature),
                  "",
                  tree_manifest};
}

absl::StatusOr<bool> S3Store::Has(const ParsedDigest& digest) const {
  const absl::Status exists = Exists(digest);
  if (absl::IsNotFound(exists)) return false;
  RETURN_IF_ERROR(exists);
  ASSIGN_OR_RETURN(const bool quarantined, IsQuarantinedListed(digest));
  return !quarantined;
}

absl::StatusOr<uint64_t> S3Store::DataSize(const ParsedDigest& digest) const {
  ASSIGN_OR_RETURN(const CheckedDescriptor checked, ReadDescriptor(digest));
  ASSIGN_OR_RETURN(const bool quarantined, IsQuarantinedListed(digest));
  if (quarantined) {
    return DamagedBlob(digest.ToString(), "quarantined (found corrupt)");
  }
  return checked.descriptor.data_size;
}

absl::StatusOr<bool> S3Store::IsQuarantinedListed(
    const ParsedDigest& digest) const {
  absl::MutexLock lock(&quarantine_mu_);
  if (absl::Now() - quarantine_listed_ > kQuarantineListAge) {
    ASSIGN_OR_RETURN(const std::vector<std::string> keys,
                     ListKeys(layout_.QuarantinePrefix()));
    quarantine_keys_ = {keys.begin(), keys.end()};
    quarantine_listed_ = absl::Now();
  }
  return quarantine_keys_.contains(layout_.QuarantineKey(digest));
}

absl::StatusOr<std::vector<BlobInfo>> S3Store::List(absl::string_view after,
                                                    size_t limit) const {
  std::vector<BlobInfo> infos;
  std::string token;
  const std::string start_after = layout_.ListStartAfter(after);
  while (infos.size() < limit) {
    ASSIGN_OR_RETURN(const S3Listing listing,
                     ListPage(layout_.blobs_prefix(), start_after, token));
    for (const S3Listing::Object& object : listing.objects) {
      if (infos.size() == limit) break;
      const std::optional<ParsedDigest> digest =
          layout_.ParseDescriptorKey(object.key);
      if (!digest.has_value()) continue;
      absl::StatusOr<BlobInfo> info = Stat(*digest);
      // Quarantined, or deleted since the listing: not served.
      if (absl::IsDataLoss(info.status()) || absl::IsNotFound(info.status())) {
        continue;
      }
      RETURN_IF_ERROR(info.status());
      infos.push_back(*std::move(info));
    }
    if (!listing.truncated) break;
    token = listing.next_continuation_token;
  }
  return infos;
}

absl::Status S3Store::DeleteBlob(const ParsedDigest& digest) {
  const absl::Status exists = Exists(digest);
  if (!exists.ok() && !absl::IsNotFound(exists)) return exists;
  ASSIGN_OR_RETURN(const bool quarantined, IsQuarantined(digest));
  if (absl::IsNotFound(exists) && !quarantined) return exists;
  // The names first, while the descriptor still finds the blob: a delete
  // cut short leaves the blob (a retry finishes it), never a name pointing
  // at nothing. Then the descriptor: from then on the blob is gone for every
  // replica, whatever of the rest a crash leaves (a later Put replaces it).
  // The tree manifest mark before the descriptor: no mark outlives its blob
  // for a later Put of the same bytes as a file to find.
  ASSIGN_OR_RETURN(const std::vector<std::string> names, NamesOf(digest));
  for (const std::string& name : names) {
    RETURN_IF_ERROR(DeleteObject(layout_.NameKey(name)));
  }
  RETURN_IF_ERROR(
      DeleteObject(layout_.BlobKey(digest, BlobObject::kTreeManifestMark)));
  RETURN_IF_ERROR(
      DeleteObject(layout_.BlobKey(digest, BlobObject::kDescriptor)));
  ASSIGN_OR_RETURN(const std::vector<std::string> rest,
                   ListKeys(layout_.BlobPrefix(digest)));
  for (const std::string& key : rest) RETURN_IF_ERROR(DeleteObject(key));
  RETURN_IF_ERROR(ClearDamaged(digest));
  RETURN_IF_ERROR(DeleteObject(layout_.UsedKey(digest)));
  return Unquarantine(digest);
}

absl::Status S3Store::DeleteName(absl::string_view name) {
  ASSIGN_OR_RETURN(const ParsedDigest digest, ResolveName(name));
  RETURN_IF_ERROR(DeleteObject(layout_.NameKey(name)));
  return DeleteObject(layout_.NameHintKey(digest, name));
}

absl::StatusOr<std::vector<ParsedDigest>> S3Store::ListQuarantined(
    absl::string_view after, size_t limit) const {
  ASSIGN_OR_RETURN(const std::vector<std::string> keys,
                   ListKeys(layout_.QuarantinePrefix()));
  std::vector<ParsedDigest> digests;
  for (const std::string& key : keys) {
    // "<alg>-<hex>" after the prefix: the digest text with a dash.
    std::string text = key.substr(layout_.QuarantinePrefix().size());
    const size_t dash = text.find('-');
    if (dash == std::string::npos) continue;
    text[dash] = ':';
    absl::StatusOr<ParsedDigest> digest = ParseDigest(text);
    if (!digest.ok() || text <= after) continue;  // not ours to sweep
    digests.push_back(*std::move(digest));
  }
  std::sort(digests.begin(), digests.end(),
            [](const ParsedDigest& a, const ParsedDigest& b) {
              return a.ToString() < b.ToString();
            });
  if (digests.size() > limit) digests.resize(limit);
  return digests;
}

absl::Status S3Store::Quarantine(const ParsedDigest& digest,
                                 absl::string_view reason) {
  RETURN_IF_ERROR(Exists(digest));
  // When: garbage collection keeps it a grace from now (LastUsed). Not
  // conditional: over a sweep's mark, the sweep deletes it all the same.
  RETURN_IF_ERROR(PutObject(layout_.UsedKey(digest),
                            absl::StrCat(absl::ToUnixSeconds(absl::Now()))));
  RETURN_IF_ERROR(
      PutObject(layout_.QuarantineKey(digest), std::string(reason)));
  {
    absl::MutexLock lock(&quarantine_mu_);
    quarantine_keys_.insert(layout_.QuarantineKey(digest));
  }
  Log(absl::StrCat("quarantined ", digest.ToString(), ": ", reason));
  return absl::OkStatus();
}

}  // namespace verity::server
