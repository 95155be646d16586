// Implements the name history format.

#include "server/store/name_history.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/status_macros.h"

namespace verity::server {
namespace {

constexpr absl::string_view kMagic = "verity-name-history 1\n";
// The written time of a version from before histories were kept.
constexpr absl::string_view kUnknownTime = "-";

absl::Status Malformed(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("name history ", what));
}

std::string TimeText(absl::Time written) {
  if (written == absl::InfinitePast()) return std::string(kUnknownTime);
  return absl::StrCat(absl::ToUnixSeconds(written));
}

absl::StatusOr<absl::Time> ParseTime(absl::string_view text) {
  if (text == kUnknownTime) return absl::InfinitePast();
  int64_t seconds = 0;
  if (!absl::SimpleAtoi(text, &seconds)) {
    return Malformed(absl::StrCat("has a bad time \"", text, "\""));
  }
  return absl::FromUnixSeconds(seconds);
}

// One "<time> <n>\n<n bytes>" version off the front of `rest`.
absl::StatusOr<std::pair<NameRecord, absl::Time>> TakeVersion(
    absl::string_view& rest) {
  const size_t newline = rest.find('\n');
  if (newline == absl::string_view::npos || newline > 48) {
    return Malformed("has a version without its header line");
  }
  const std::pair<absl::string_view, absl::string_view> header =
      absl::StrSplit(rest.substr(0, newline), absl::MaxSplits(' ', 1));
  ASSIGN_OR_RETURN(const absl::Time written, ParseTime(header.first));
  size_t size = 0;
  if (!absl::SimpleAtoi(header.second, &size) ||
      size > rest.size() - newline - 1) {
    return Malformed(absl::StrCat("has a bad size \"", header.second, "\""));
  }
  ASSIGN_OR_RETURN(NameRecord record,
                   DecodeNameFile(rest.substr(newline + 1, size)));
  rest.remove_prefix(newline + 1 + size);
  return std::make_pair(std::move(record), written);
}

}  // namespace

absl::Status ValidateNameHistory(int keep) {
  if (keep >= 1 && keep <= kMaxNameHistory) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "a name keeps 1 to ", kMaxNameHistory, " versions, not ", keep));
}

std::string EncodeNameHistory(const NameHistory& history) {
  std::string out(kMagic);
  for (const NameVersion& version : history.versions) {
    const std::string record =
        EncodeNameFile(version.digest.ToString(), history.name,
                       version.statement, version.log_index);
    absl::StrAppend(&out, TimeText(version.written), " ", record.size(), "\n",
                    record);
  }
  return out;
}

absl::StatusOr<NameHistory> DecodeNameHistory(absl::string_view contents) {
  NameHistory history;
  if (!absl::ConsumePrefix(&contents, kMagic)) {
    ASSIGN_OR_RETURN(NameRecord record, DecodeNameFile(contents));
    history.name = std::move(record.name);
    history.versions.push_back(
        NameVersion{std::move(record.digest), std::move(record.statement),
                    absl::InfinitePast(), record.log_index});
    return history;
  }
  while (!contents.empty()) {
    if (history.versions.size() == kMaxNameHistory) {
      return Malformed(
          absl::StrCat("has more than ", kMaxNameHistory, " versions"));
    }
    ASSIGN_OR_RETURN(auto version, TakeVersion(contents));
    NameRecord& record = version.first;
    if (history.versions.empty()) {
      history.name = record.name;
    } else if (record.name != history.name) {
      return Malformed(absl::StrCat("of \"", history.name,
                                    "\" has a version of another name"));
    }
    history.versions.push_back(NameVersion{std::move(record.digest),
                                           std::move(record.statement),
                                           version.second, record.log_index});
  }
  if (history.versions.empty()) return Malformed("has no version");
  return history;
}

NameHistory NextNameHistory(const NameHistory* before, absl::string_view name,
                            NameVersion next, int keep) {
  NameHistory history;
  history.name = std::string(name);
  if (before != nullptr && !before->versions.empty() &&
      before->versions[0].digest == next.digest &&
      before->versions[0].statement == next.statement) {
    history.versions = before->versions;
  } else {
    history.versions.push_back(std::move(next));
    if (before != nullptr) {
      history.versions.insert(history.versions.end(), before->versions.begin(),
                              before->versions.end());
    }
  }
  history.versions.resize(
      std::min<size_t>(history.versions.size(), std::max(keep, 1)));
  return history;
}

}  // namespace verity::server
