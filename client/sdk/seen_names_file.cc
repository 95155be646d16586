// Implements the seen-names text: one record per line, a checksum last.

#include "client/sdk/seen_names_file.h"

#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"

namespace verity::client {
namespace {

constexpr absl::string_view kHeader = "verity seen names v1";
constexpr absl::string_view kChecksumPrefix = "sha256 ";

bool IsLowerHex(absl::string_view text) {
  return !text.empty() &&
         text.find_first_not_of("0123456789abcdef") == absl::string_view::npos;
}

absl::Status Damaged(size_t line, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("line ", line, ": ", what));
}

// "<version> <body sha256> <name>", accepted only as FormatSeenNames writes
// it, so that a damaged line cannot parse as another valid one.
absl::Status ParseEntry(absl::string_view line, size_t number,
                        std::string* name, SeenName* seen) {
  const std::vector<absl::string_view> fields =
      absl::StrSplit(line, absl::MaxSplits(' ', 2));
  if (fields.size() != 3) return Damaged(number, "not a name record");
  if (!absl::SimpleAtoi(fields[0], &seen->version) ||
      absl::StrCat(seen->version) != fields[0]) {
    return Damaged(number, "bad version");
  }
  if (fields[1].size() != 64 || !IsLowerHex(fields[1])) {
    return Damaged(number, "bad statement hash");
  }
  seen->body_sha256 = std::string(fields[1]);
  if (!absl::CUnescape(fields[2], name) || name->empty() ||
      absl::CEscape(*name) != fields[2]) {
    return Damaged(number, "bad name");
  }
  return absl::OkStatus();
}

// Splits off and checks the last line, the checksum of the text before it.
absl::StatusOr<absl::string_view> CheckedBody(absl::string_view text) {
  if (text.empty() || text.back() != '\n') {
    return absl::DataLossError("truncated: no final newline");
  }
  const size_t start = text.rfind('\n', text.size() - 2);
  const absl::string_view body =
      start == absl::string_view::npos ? "" : text.substr(0, start + 1);
  const absl::string_view last =
      text.substr(body.size(), text.size() - body.size() - 1);
  if (last != absl::StrCat(kChecksumPrefix, Sha256Hex(body))) {
    return absl::DataLossError("the checksum line does not match the content");
  }
  return body;
}

}  // namespace

absl::StatusOr<std::string> FormatSeenNames(const SeenNames& seen) {
  if (seen.names.size() > kMaxSeenNames) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "more than ", kMaxSeenNames, " names under one trusted key"));
  }
  std::string text = absl::StrCat(kHeader, "\nkey ", seen.key_id, "\n");
  for (const auto& [name, entry] : seen.names) {
    absl::StrAppend(&text, entry.version, " ", entry.body_sha256, " ",
                    absl::CEscape(name), "\n");
  }
  absl::StrAppend(&text, kChecksumPrefix, Sha256Hex(text), "\n");
  if (text.size() > kMaxSeenNamesFileBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the seen names would exceed ", kMaxSeenNamesFileBytes, " bytes"));
  }
  return text;
}

absl::StatusOr<SeenNames> ParseSeenNames(absl::string_view text) {
  ASSIGN_OR_RETURN(const absl::string_view body, CheckedBody(text));
  std::vector<absl::string_view> lines = absl::StrSplit(body, '\n');
  lines.pop_back();  // after the final newline
  if (lines.size() < 2 || lines[0] != kHeader) {
    return Damaged(1, "not a verity seen-names file");
  }
  SeenNames seen;
  if (!absl::ConsumePrefix(&lines[1], "key ") || !IsLowerHex(lines[1])) {
    return Damaged(2, "bad key line");
  }
  seen.key_id = std::string(lines[1]);
  for (size_t i = 2; i < lines.size(); ++i) {
    std::string name;
    SeenName entry;
    RETURN_IF_ERROR(ParseEntry(lines[i], i + 1, &name, &entry));
    if (!seen.names.empty() && seen.names.rbegin()->first >= name) {
      return Damaged(i + 1, "names out of order or repeated");
    }
    seen.names.emplace_hint(seen.names.end(), std::move(name),
                            std::move(entry));
  }
  if (seen.names.size() > kMaxSeenNames) {
    return absl::DataLossError(
        absl::StrCat("more than ", kMaxSeenNames, " names"));
  }
  return seen;
}

}  // namespace verity::client
