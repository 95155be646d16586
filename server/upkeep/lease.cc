// Implements the upkeep leases over the store's shared records.

#include "server/upkeep/lease.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/status_macros.h"

namespace verity::server {
namespace {

absl::Time Seconds(absl::Time time) {
  return absl::FromUnixSeconds(absl::ToUnixSeconds(time));
}

// The value of "<field> <value>" in `line`.
absl::StatusOr<absl::string_view> Field(absl::string_view line,
                                        absl::string_view field) {
  if (!absl::ConsumePrefix(&line, field) || !absl::ConsumePrefix(&line, " ")) {
    return absl::DataLossError(
        absl::StrCat("an upkeep lease lacks its ", field));
  }
  return line;
}

absl::StatusOr<absl::Time> TimeField(absl::string_view line,
                                     absl::string_view field) {
  ASSIGN_OR_RETURN(const absl::string_view text, Field(line, field));
  int64_t seconds = 0;
  if (!absl::SimpleAtoi(text, &seconds)) {
    return absl::DataLossError(
        absl::StrCat("an upkeep lease has a bad ", field));
  }
  return absl::FromUnixSeconds(seconds);
}

absl::Status Busy(LeaseKind kind, const LeaseTerms& terms) {
  return absl::AbortedError(absl::StrCat(
      "a ", kind.work, " by ", terms.holder, " holds the store until ",
      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", terms.expires,
                       absl::UTCTimeZone())));
}

}  // namespace

std::string EncodeLease(const LeaseTerms& terms) {
  return absl::StrCat("holder ", terms.holder, "\nexpires ",
                      absl::ToUnixSeconds(terms.expires), "\ncutoff ",
                      absl::ToUnixSeconds(terms.cutoff), "\n");
}

absl::StatusOr<LeaseTerms> DecodeLease(absl::string_view body) {
  const std::vector<absl::string_view> lines = absl::StrSplit(body, '\n');
  if (lines.size() != 4 || !lines[3].empty()) {
    return absl::DataLossError("an upkeep lease is malformed");
  }
  LeaseTerms terms;
  ASSIGN_OR_RETURN(const absl::string_view holder, Field(lines[0], "holder"));
  terms.holder = std::string(holder);
  ASSIGN_OR_RETURN(terms.expires, TimeField(lines[1], "expires"));
  ASSIGN_OR_RETURN(terms.cutoff, TimeField(lines[2], "cutoff"));
  return terms;
}

absl::StatusOr<StoreLease> StoreLease::Acquire(Store& store, LeaseKind kind,
                                               absl::string_view holder,
                                               absl::Time cutoff,
                                               absl::Time now,
                                               absl::Duration ttl) {
  // A write that loses to another holder's reads again: the winner's lease
  // (busy), or, if the winner already let it go, another try.
  constexpr int kTries = 3;
  for (int i = 0; i < kTries; ++i) {
    ASSIGN_OR_RETURN(const std::optional<SharedRecord> current,
                     store.ReadRecord(kind.key));
    if (current.has_value()) {
      const absl::StatusOr<LeaseTerms> held = DecodeLease(current->body);
      if (held.ok() && held->expires > now && held->holder != holder) {
        return Busy(kind, *held);
      }
    }
    LeaseTerms terms{std::string(holder), Seconds(now + ttl), Seconds(cutoff)};
    absl::StatusOr<SharedRecord> written = store.WriteRecord(
        kind.key, EncodeLease(terms),
        current.has_value() ? std::optional<std::string>(current->version)
                            : std::nullopt);
    if (absl::IsFailedPrecondition(written.status())) continue;
    RETURN_IF_ERROR(written.status());
    return StoreLease(store, kind, std::move(terms),
                      std::move(written->version), ttl);
  }
  return absl::AbortedError(
      absl::StrCat("another ", kind.work, " keeps taking the store's lease"));
}

absl::Status StoreLease::Renew(absl::Time now) {
  LeaseTerms terms = terms_;
  terms.expires = Seconds(now + ttl_);
  absl::StatusOr<SharedRecord> written =
      store_->WriteRecord(kind_.key, EncodeLease(terms), version_);
  if (absl::IsFailedPrecondition(written.status())) {
    return absl::AbortedError(absl::StrCat(
        "the ", kind_.work, "'s lease expired and was taken over"));
  }
  RETURN_IF_ERROR(written.status());
  terms_ = std::move(terms);
  version_ = std::move(written->version);
  return absl::OkStatus();
}

absl::Status StoreLease::RenewIfDue(absl::Time now) {
  if (terms_.expires - now > ttl_ / 2) return absl::OkStatus();
  return Renew(now);
}

void StoreLease::Release() {
  LeaseTerms terms = terms_;
  terms.expires = absl::FromUnixSeconds(0);
  store_->WriteRecord(kind_.key, EncodeLease(terms), version_).IgnoreError();
}

absl::StatusOr<std::optional<LeaseTerms>> ActiveLease(const Store& store,
                                                      LeaseKind kind,
                                                      absl::Time now) {
  ASSIGN_OR_RETURN(const std::optional<SharedRecord> current,
                   store.ReadRecord(kind.key));
  if (!current.has_value()) return std::nullopt;
  // One that does not parse is taken over by the next holder; until
  // then it holds nothing back.
  const absl::StatusOr<LeaseTerms> terms = DecodeLease(current->body);
  if (!terms.ok() || terms->expires <= now) return std::nullopt;
  return *terms;
}

}  // namespace verity::server
