// Implements what garbage collection needs of an S3 store: the used/ objects
// that time a blob's last use by verityd's clocks (the bucket's own times are
// neither comparable across vendors nor settable), and the upkeep/ records
// written by compare-and-set.

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "lib/base/status_macros.h"
#include "server/store/s3/s3_store.h"

namespace verity::server {

namespace {

constexpr absl::string_view kDoomed = "doomed ";
constexpr absl::string_view kLeftover = " leftover";
// A sweep deletes a batch it marked within its lease's term (two minutes,
// renewed before each batch): a mark older than this is one a sweep cut
// short left, and a use or a Put takes it over (a sweep that finds it
// marks it again first).
constexpr absl::Duration kStaleMark = absl::Minutes(10);

std::string UsedBody(absl::Time time) {
  return absl::StrCat(absl::ToUnixSeconds(time));
}

// A blob marked doomed: for a use while its descriptor is there (retried,
// it is NOT_FOUND once the descriptor is gone), and for a Put that would
// write its objects (retried once the sweep has deleted its used/).
absl::Status BeingDeleted(const ParsedDigest& digest) {
  return absl::UnavailableError(
      absl::StrCat("blob ", digest.ToString(),
                   " is being deleted by garbage collection; retry"));
}

}  // namespace

bool S3Store::LiveMark(const UsedRecord& used) {
  return used.doomed && used.time.has_value() &&
         *used.time >= absl::Now() - kStaleMark;
}

std::string S3Store::DoomedMark(absl::Time now, bool leftover) {
  return absl::StrCat(kDoomed, absl::ToUnixSeconds(now),
                      leftover ? kLeftover : "");
}

S3Store::UsedRecord S3Store::ParseUsed(const S3Response& response, UsedOf of) {
  UsedRecord used;
  if (!response.status.ok()) return used;
  used.version = response.etag;
  absl::string_view body = response.body;
  used.doomed = absl::ConsumePrefix(&body, kDoomed);
  used.leftover = used.doomed && absl::ConsumeSuffix(&body, kLeftover);
  if (used.leftover && of == UsedOf::kStoredBlob) {
    return UsedRecord{std::nullopt, false, false, std::move(used.version)};
  }
  int64_t seconds = 0;
  // A damaged time reads as none: the blob's grace starts again, which only
  // keeps it longer.
  if (absl::SimpleAtoi(body, &seconds)) {
    used.time = absl::FromUnixSeconds(seconds);
  }
  return used;
}

absl::StatusOr<S3Store::UsedRecord> S3Store::ReadUsed(
    const ParsedDigest& digest, UsedOf of) const {
  S3Request get;
  get.op = "GetUsed";
  get.key = layout_.UsedKey(digest);
  const S3Response response = client_->Call(std::move(get));
  if (!response.status.ok() && !absl::IsNotFound(response.status)) {
    return response.status;
  }
  return ParseUsed(response, of);
}

absl::Status S3Store::SwapUsed(
    const ParsedDigest& digest, absl::Time time,
    const std::optional<std::string>& expected) const {
  return SwapObject(layout_.UsedKey(digest), UsedBody(time), expected,
                    "SwapUsed", "the used/ time of " + digest.ToString())
      .status();
}

absl::Status S3Store::ClaimUsed(const ParsedDigest& digest) const {
  const absl::Time now =
      absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now()));
  // New content has none: one PUT.
  std::optional<std::string> expected;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const absl::Status written = SwapUsed(digest, now, expected);
    if (!absl::IsFailedPrecondition(written)) return written;
    ASSIGN_OR_RETURN(const UsedRecord used, ReadUsed(digest, UsedOf::kAnyBlob));
    if (LiveMark(used)) return BeingDeleted(digest);
    // Another Put's claim (many Puts of one content race here): a time at
    // least as new as ours keeps a sweep off the blob as ours would.
    if (!used.doomed && used.time.has_value() && *used.time >= now) {
      return absl::OkStatus();
    }
    expected = used.version;
  }
  return absl::UnavailableError(absl::StrCat(
      "the used/ time of ", digest.ToString(), " keeps changing; retry"));
}

absl::Status S3Store::ClaimUsedForRecord(const ParsedDigest& digest) const {
  ASSIGN_OR_RETURN(const UsedRecord used, ReadUsed(digest, UsedOf::kAnyBlob));
  if (!used.version.has_value() || used.leftover) return absl::OkStatus();
  return ClaimUsed(digest);
}

absl::StatusOr<absl::Time> S3Store::LastUsed(const ParsedDigest& digest) const {
  const absl::Status exists = Exists(digest);
  if (absl::IsNotFound(exists)) {
    ASSIGN_OR_RETURN(const bool quarantined, IsQuarantined(digest));
    if (quarantined) return absl::InfinitePast();
  }
  RETURN_IF_ERROR(exists);
  ASSIGN_OR_RETURN(UsedRecord used, ReadUsed(digest, UsedOf::kStoredBlob));
  for (int attempt = 0;; ++attempt) {
    // Doomed by a sweep that did not finish: the next one finishes it.
    if (used.doomed) return absl::InfinitePast();
    if (used.time.has_value()) return *used.time;
    const absl::Time now =
        absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now()));
    const absl::Status written = SwapUsed(digest, now, used.version);
    if (!absl::IsFailedPrecondition(written) || attempt > 0) {
      RETURN_IF_ERROR(written);
      return now;
    }
    // Another replica wrote first: its time (or mark) holds.
    ASSIGN_OR_RETURN(used, ReadUsed(digest, UsedOf::kStoredBlob));
  }
}

absl::StatusOr<absl::Time> S3Store::MarkUsed(
    const ParsedDigest& digest, absl::Time now,
    absl::Duration refresh_after) const {
  // used/ before the descriptor: a blob whose used/ a sweep deleted (last)
  // has lost its descriptor before.
  ASSIGN_OR_RETURN(const UsedRecord used,
                   ReadUsed(digest, UsedOf::kStoredBlob));
  RETURN_IF_ERROR(Exists(digest));
  return MarkRead(digest, used, now, refresh_after);
}

absl::StatusOr<Store::SizedUse> S3Store::MarkUsedSized(
    const ParsedDigest& digest, absl::Time now,
    absl::Duration refresh_after) const {
  ASSIGN_OR_RETURN(const UsedRecord used,
                   ReadUsed(digest, UsedOf::kStoredBlob));
  ASSIGN_OR_RETURN(const uint64_t size, DataSize(digest));
  ASSIGN_OR_RETURN(const absl::Time before,
                   MarkRead(digest, used, now, refresh_after));
  return SizedUse{size, before};
}

absl::StatusOr<absl::Time> S3Store::MarkRead(
    const ParsedDigest& digest, const UsedRecord& used, absl::Time now,
    absl::Duration refresh_after) const {
  if (LiveMark(used)) return BeingDeleted(digest);
  // None: a collection would only start the blob's grace, later than now.
  if (!used.version.has_value()) return absl::InfiniteFuture();
  if (!used.doomed && used.time.has_value() &&
      *used.time >= now - refresh_after) {
    return *used.time;
  }
  // An old time, or a stale mark (judged unused long ago): now.
  const absl::Time before = used.doomed
                                ? absl::InfinitePast()
                                : used.time.value_or(absl::InfiniteFuture());
  // Conditional: a sweep's mark since (it read the time this replaces)
  // makes it fail, and the blob is going.
  const absl::Status written = SwapUsed(digest, now, used.version);
  if (absl::IsFailedPrecondition(written)) {
    ASSIGN_OR_RETURN(const UsedRecord since,
                     ReadUsed(digest, UsedOf::kStoredBlob));
    if (LiveMark(since)) return BeingDeleted(digest);
    return before;  // another use wrote it: kept as well
  }
  RETURN_IF_ERROR(written);
  return before;
}

absl::StatusOr<std::string> S3Store::SwapObject(
    const std::string& key, std::string body,
    const std::optional<std::string>& expected, absl::string_view op,
    absl::string_view what) const {
  S3Request put;
  put.op = std::string(op);
  put.method = "PUT";
  put.key = key;
  put.body = body;
  put.headers = {S3PutCondition(expected)};
  // Not retried blindly: a retry of a write that landed would be refused.
  put.idempotent = false;
  S3Response response = client_->Call(std::move(put));
  const absl::Status replaced = absl::FailedPreconditionError(
      absl::StrCat(what, " was replaced meanwhile"));
  if (absl::IsFailedPrecondition(response.status)) return replaced;
  if (!response.status.ok()) {
    // radosgw answers two conditional PUTs racing on one key with a 500
    // (UnknownError) at times, whether or not this one landed: what the
    // object holds now says which.
    S3Request get;
    get.op = std::string(op);
    get.key = key;
    const S3Response now = client_->Call(std::move(get));
    if (!now.status.ok()) return response.status;
    if (now.body != body) return replaced;
    return now.etag;
  }
  return std::move(response.etag);
}

absl::StatusOr<std::optional<SharedRecord>> S3Store::ReadRecord(
    absl::string_view key) const {
  RETURN_IF_ERROR(CheckSharedRecord(key, ""));
  S3Request get;
  get.op = "GetRecord";
  get.key = layout_.RecordKey(key);
  S3Response response = client_->Call(std::move(get));
  if (absl::IsNotFound(response.status)) return std::nullopt;
  RETURN_IF_ERROR(response.status);
  if (response.etag.empty()) {
    return absl::UnavailableError(
        absl::StrCat("S3 gave the record ", key, " no ETag"));
  }
  return SharedRecord{std::move(response.body), std::move(response.etag)};
}

absl::StatusOr<SharedRecord> S3Store::WriteRecord(
    absl::string_view key, absl::string_view body,
    const std::optional<std::string>& expected) {
  RETURN_IF_ERROR(CheckSharedRecord(key, body));
  ASSIGN_OR_RETURN(
      std::string version,
      SwapObject(layout_.RecordKey(key), std::string(body), expected,
                 "PutRecord", absl::StrCat("the shared record ", key)));
  return SharedRecord{std::string(body), std::move(version)};
}

absl::StatusOr<std::string> S3Store::ReadLogObject(
    absl::string_view path) const {
  RETURN_IF_ERROR(CheckLogObject(path, ""));
  return GetObject(layout_.LogKey(path), "GetLogObject");
}

absl::Status S3Store::WriteLogObject(absl::string_view path,
                                     absl::string_view bytes) {
  RETURN_IF_ERROR(CheckLogObject(path, bytes));
  return PutObject(layout_.LogKey(path), std::string(bytes), {});
}

absl::Status S3Store::DeleteLogObject(absl::string_view path) {
  RETURN_IF_ERROR(CheckLogObject(path, ""));
  return DeleteObject(layout_.LogKey(path));
}

absl::StatusOr<tlog::LogObjectPage> S3Store::ListLogObjects(
    absl::string_view folder, absl::string_view after) const {
  RETURN_IF_ERROR(CheckLogFolder(folder));
  const std::string root = layout_.LogKey("");
  ASSIGN_OR_RETURN(const S3Listing listing,
                   ListPage(layout_.LogKey(folder),
                            after.empty() ? "" : layout_.LogKey(after), ""));
  tlog::LogObjectPage page;
  for (const S3Listing::Object& object : listing.objects) {
    // The listing's keys are under the log's: each a log path there.
    page.objects.push_back(
        {object.key.substr(root.size()), object.size, object.last_modified});
  }
  if (listing.truncated && !page.objects.empty()) {
    page.next = page.objects.back().path;
  }
  return page;
}

}  // namespace verity::server
