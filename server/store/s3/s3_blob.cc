// Implements S3Blob: one ranged GET per read, into the caller's buffer, with
// the blocks FEC repaired laid over it.

#include "server/store/s3/s3_blob.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"

namespace verity::server {

S3Blob::S3Blob(const CheckedDescriptor& checked, const ParsedDigest& digest,
               std::string fsverity_signature, int fec_roots,
               const S3Layout& layout, std::shared_ptr<S3Client> client,
               std::function<void(absl::string_view)> log, Record record)
    : Blob(digest, checked.descriptor, checked.params, checked.geometry,
           std::move(fsverity_signature), fec_roots),
      client_(std::move(client)),
      data_key_(layout.BlobKey(digest, BlobObject::kData)),
      tree_key_(layout.BlobKey(digest, BlobObject::kTree)),
      fec_key_(layout.BlobKey(digest, BlobObject::kFec)),
      damaged_key_(layout.DamagedKey(digest)),
      log_(std::move(log)),
      record_(std::move(record)) {}

const std::string& S3Blob::KeyOf(BlobPart part) const {
  switch (part) {
    case BlobPart::kData:
      return data_key_;
    case BlobPart::kTree:
      return tree_key_;
    case BlobPart::kFec:
      return fec_key_;
  }
  return data_key_;
}

std::optional<absl::Status> S3Blob::TryReadNow(BlobPart part, uint64_t offset,
                                               absl::Span<uint8_t> out) const {
  if (record_.bytes != nullptr) return ReadRecord(part, offset, out);
  if (absl::Status range = CheckReadRange(*this, part, offset, out.size());
      !range.ok() || out.empty()) {
    return range;
  }
  return std::nullopt;
}

absl::Status S3Blob::ReadRecord(BlobPart part, uint64_t offset,
                                absl::Span<uint8_t> out) const {
  RETURN_IF_ERROR(CheckReadRange(*this, part, offset, out.size()));
  const absl::string_view bytes(*record_.bytes);
  const absl::string_view from =
      bytes.substr(record_.footer.PartOffset(part) + offset, out.size());
  std::copy(from.begin(), from.end(), out.begin());
  LayRepairs(part, offset, out);
  return absl::OkStatus();
}

void S3Blob::ReadAsync(BlobPart part, uint64_t offset, Buffer into,
                       ReadDone done) const {
  const uint64_t length = into.size();
  // A record's bytes, a refused range, or nothing to read: answered as a GET
  // would be, later, on the client's thread.
  std::optional<absl::Status> now;
  if (record_.bytes != nullptr) {
    now = ReadRecord(part, offset, into.span());
  } else if (absl::Status range = CheckReadRange(*this, part, offset, length);
             !range.ok() || length == 0) {
    now = range;
  }
  if (now.has_value()) {
    S3Response answered;
    answered.status = *std::move(now);
    auto bytes = std::make_shared<Buffer>(std::move(into));
    client_->Answer(std::move(answered), [bytes, done = std::move(done)](
                                             S3Response response) mutable {
      if (!response.status.ok()) {
        std::move(done)(response.status);
      } else {
        std::move(done)(std::move(*bytes));
      }
    });
    return;
  }
  // curl writes the body straight into the caller's buffer, which the
  // completion owns until the answer.
  auto bytes = std::make_shared<Buffer>(std::move(into));
  S3Request request;
  request.op = absl::StrCat("Get", part == BlobPart::kData   ? "Data"
                                   : part == BlobPart::kTree ? "Tree"
                                                             : "Fec");
  request.key = KeyOf(part);
  request.headers.push_back(
      absl::StrCat("Range: bytes=", offset, "-", offset + length - 1));
  request.into = bytes->span();
  // The blob and the buffer ride along until the answer.
  client_->Start(
      std::move(request),
      [self = std::static_pointer_cast<const S3Blob>(shared_from_this()), part,
       offset, bytes, done = std::move(done)](S3Response response) mutable {
        absl::Status status =
            self->Check(part, offset, bytes->size(), response);
        if (!status.ok()) {
          std::move(done)(status);
          return;
        }
        self->LayRepairs(part, offset, bytes->span());
        std::move(done)(std::move(*bytes));
      });
}

absl::Status S3Blob::Check(BlobPart part, uint64_t offset, uint64_t length,
                           const S3Response& response) const {
  const uint64_t file_size = PartSize(geometry(), fec_roots(), part);
  const absl::string_view object = PartName(part);
  // The descriptor says the object holds these bytes: if S3 has less, or
  // none, the blob is damaged, whatever the HTTP status.
  if (response.status.ok() && response.bytes < length) {
    return DamagedBlob(
        digest_text(),
        absl::StrCat(object, " object ends at offset ", offset + response.bytes,
                     ", short of its recorded size ", file_size));
  }
  if (absl::IsOutOfRange(response.status) ||
      absl::IsNotFound(response.status)) {
    return DamagedBlob(digest_text(),
                       absl::StrCat(object, " object has no bytes at offset ",
                                    offset, ": ", response.status.message()));
  }
  return response.status;
}

void S3Blob::LayRepairs(BlobPart part, uint64_t offset,
                        absl::Span<uint8_t> bytes) const {
  const uint64_t end = offset + bytes.size();
  absl::MutexLock lock(&mu_);
  if (repaired_.empty()) return;
  // A block that begins before `offset` may reach into the range.
  const uint64_t from =
      offset - std::min<uint64_t>(offset, geometry().block_size() - 1);
  for (auto it = repaired_.lower_bound({part, from});
       it != repaired_.end() && it->first.first == part &&
       it->first.second < end;
       ++it) {
    const uint64_t block = it->first.second;
    const std::string& repaired = it->second;
    const uint64_t first = std::max(block, offset);
    const uint64_t last = std::min<uint64_t>(block + repaired.size(), end);
    if (first >= last) continue;
    std::copy(repaired.begin() + (first - block),
              repaired.begin() + (last - block),
              bytes.begin() + (first - offset));
  }
}

absl::Status S3Blob::Rewrite(BlobPart part, uint64_t offset,
                             absl::Span<const uint8_t> bytes) const {
  bool mark;
  {
    absl::MutexLock lock(&mu_);
    std::string& kept = repaired_[{part, offset}];
    const uint64_t total = repaired_bytes_ - kept.size() + bytes.size();
    if (total > kMaxRepairedBytes) {
      if (kept.empty()) repaired_.erase({part, offset});
      return absl::ResourceExhaustedError(
          absl::StrCat("blob ", digest_text(), " holds ", kMaxRepairedBytes,
                       " bytes of blocks FEC repaired already; put it again"));
    }
    kept.assign(bytes.begin(), bytes.end());
    repaired_bytes_ = total;
    mark = !marked_;
    marked_ = true;
  }
  if (!mark) return absl::OkStatus();
  if (absl::Status marked = Mark(part, offset); !marked.ok()) {
    log_(absl::StrCat("could not mark ", digest_text(),
                      " damaged: ", marked.message()));
    absl::MutexLock lock(&mu_);
    marked_ = false;
  }
  return absl::OkStatus();
}

absl::Status S3Blob::Mark(BlobPart part, uint64_t offset) const {
  S3Request request;
  request.op = "PutDamaged";
  request.method = "PUT";
  request.key = damaged_key_;
  request.body =
      absl::StrCat("FEC repaired the ", PartName(part), " block at offset ",
                   offset, " (and perhaps others): put the blob again\n");
  return client_->Call(std::move(request)).status;
}

}  // namespace verity::server
