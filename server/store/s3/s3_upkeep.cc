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
#include "lib/base/status_macros.h"
#include "server/store/s3/s3_store.h"

namespace verity::server {

absl::StatusOr<std::optional<absl::Time>> S3Store::ReadUsed(
    const ParsedDigest& digest) const {
  absl::StatusOr<std::string> body =
      GetObject(layout_.UsedKey(digest), "GetUsed");
  if (absl::IsNotFound(body.status())) return std::nullopt;
  RETURN_IF_ERROR(body.status());
  int64_t seconds = 0;
  // A damaged time reads as none: the blob's grace starts again, which only
  // keeps it longer.
  if (!absl::SimpleAtoi(*body, &seconds)) return std::nullopt;
  return absl::FromUnixSeconds(seconds);
}

absl::Status S3Store::WriteUsed(const ParsedDigest& digest,
                                absl::Time time) const {
  return PutObject(layout_.UsedKey(digest),
                   absl::StrCat(absl::ToUnixSeconds(time)));
}

absl::StatusOr<absl::Time> S3Store::LastUsed(const ParsedDigest& digest) const {
  const absl::Status exists = Exists(digest);
  if (absl::IsNotFound(exists)) {
    ASSIGN_OR_RETURN(const bool quarantined, IsQuarantined(digest));
    if (quarantined) return absl::InfinitePast();
  }
  RETURN_IF_ERROR(exists);
  ASSIGN_OR_RETURN(const std::optional<absl::Time> used, ReadUsed(digest));
  if (used.has_value()) return *used;
  const absl::Time now =
      absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now()));
  RETURN_IF_ERROR(WriteUsed(digest, now));
  return now;
}

absl::StatusOr<absl::Time> S3Store::MarkUsed(
    const ParsedDigest& digest, absl::Time now,
    absl::Duration refresh_after) const {
  RETURN_IF_ERROR(Exists(digest));
  ASSIGN_OR_RETURN(const std::optional<absl::Time> used, ReadUsed(digest));
  // None: a collection would only start the blob's grace.
  const absl::Time before = used.value_or(absl::InfiniteFuture());
  if (used.has_value() && *used >= now - refresh_after) return before;
  RETURN_IF_ERROR(WriteUsed(digest, now));
  return before;
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
  S3Request put;
  put.op = "PutRecord";
  put.method = "PUT";
  put.key = layout_.RecordKey(key);
  put.body = std::string(body);
  // radosgw compares If-Match with the bare tag (see TryWriteName).
  put.headers = {
      expected.has_value()
          ? absl::StrCat(
                "If-Match: ",
                absl::StripSuffix(absl::StripPrefix(*expected, "\""), "\""))
          : std::string("If-None-Match: *")};
  // Not retried blindly: a retry of a write that landed would be refused.
  put.idempotent = false;
  S3Response response = client_->Call(std::move(put));
  const absl::Status replaced = absl::FailedPreconditionError(
      absl::StrCat("the shared record ", key, " was replaced meanwhile"));
  if (absl::IsFailedPrecondition(response.status)) return replaced;
  if (!response.status.ok()) {
    // radosgw answers two conditional PUTs racing on one key with a 500
    // (UnknownError) at times, whether or not this one landed: what the
    // record holds now says which.
    const absl::StatusOr<std::optional<SharedRecord>> now = ReadRecord(key);
    if (!now.ok() || !now->has_value()) return response.status;
    if ((*now)->body != body) return replaced;
    return **now;
  }
  return SharedRecord{std::string(body), std::move(response.etag)};
}

}  // namespace verity::server
