// Implements name validation, the name file format and NameIndex.

#include "server/store/name_index.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"

namespace verity::server {
namespace {

constexpr absl::string_view kLogIndexPrefix = "log-index ";

// Takes "log-index <N>\n" off the front of a name file's statement part, if
// it is there.
absl::StatusOr<std::optional<uint64_t>> TakeLogIndex(
    absl::string_view& statement) {
  if (!absl::ConsumePrefix(&statement, kLogIndexPrefix)) return std::nullopt;
  const size_t newline = statement.find('\n');
  uint64_t index = 0;
  if (newline == absl::string_view::npos || newline > 20 ||
      !absl::SimpleAtoi(statement.substr(0, newline), &index)) {
    return absl::DataLossError("name file has a bad log index");
  }
  statement.remove_prefix(newline + 1);
  return index;
}

}  // namespace

absl::Status ValidateBlobName(absl::string_view name) {
  if (name.empty() || name.size() > kMaxBlobNameSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a blob name must be 1 to ", kMaxBlobNameSize, " bytes long"));
  }
  if (name.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError("a blob name must not contain NUL");
  }
  if (name.front() == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("blob name \"", name, "\" must be a relative path"));
  }
  for (const absl::string_view part : absl::StrSplit(name, '/')) {
    if (part.empty() || part == "." || part == "..") {
      return absl::InvalidArgumentError(absl::StrCat(
          "blob name \"", name, "\" has an empty, \".\" or \"..\" component"));
    }
  }
  return absl::OkStatus();
}

std::string NameFileName(absl::string_view name) { return Sha256Hex(name); }

std::string EncodeNameFile(absl::string_view digest_text,
                           absl::string_view name, absl::string_view statement,
                           std::optional<uint64_t> log_index) {
  if (statement.empty()) return absl::StrCat(digest_text, "\n", name);
  std::string file =
      absl::StrCat(digest_text, "\n", name, absl::string_view("\0", 1));
  if (log_index.has_value()) {
    absl::StrAppend(&file, kLogIndexPrefix, *log_index, "\n");
  }
  absl::StrAppend(&file, statement);
  return file;
}

absl::StatusOr<NameRecord> DecodeNameFile(absl::string_view contents) {
  const size_t newline = contents.find('\n');
  if (newline == absl::string_view::npos) {
    return absl::DataLossError("name file lacks a newline");
  }
  absl::StatusOr<ParsedDigest> digest =
      ParseDigest(contents.substr(0, newline));
  if (!digest.ok()) {
    return absl::DataLossError(absl::StrCat("name file has a bad digest: ",
                                            digest.status().message()));
  }
  NameRecord record;
  record.digest = *std::move(digest);
  const absl::string_view rest = contents.substr(newline + 1);
  const size_t nul = rest.find('\0');
  record.name = std::string(rest.substr(0, nul));
  if (nul != absl::string_view::npos) {
    absl::string_view statement = rest.substr(nul + 1);
    ASSIGN_OR_RETURN(record.log_index, TakeLogIndex(statement));
    record.statement = std::string(statement);
    if (record.statement.empty() ||
        record.statement.size() > kMaxNameStatementSize) {
      return absl::DataLossError(absl::StrCat(
          "name file has a statement of ", record.statement.size(), " bytes"));
    }
  }
  const absl::Status valid = ValidateBlobName(record.name);
  if (!valid.ok()) {
    return absl::DataLossError(
        absl::StrCat("name file has a bad name: ", valid.message()));
  }
  return record;
}

void NameIndex::Set(const std::string& name, const std::string& digest_text,
                    std::string statement, std::optional<uint64_t> log_index) {
  Remove(name);
  target_of_[name] = Target{digest_text, std::move(statement), log_index};
  names_of_[digest_text].insert(name);
}

bool NameIndex::Remove(const std::string& name) {
  const auto it = target_of_.find(name);
  if (it == target_of_.end()) return false;
  const auto names = names_of_.find(it->second.digest_text);
  names->second.erase(name);
  if (names->second.empty()) names_of_.erase(names);
  target_of_.erase(it);
  return true;
}

const std::string* NameIndex::Find(const std::string& name) const {
  const auto it = target_of_.find(name);
  return it == target_of_.end() ? nullptr : &it->second.digest_text;
}

const std::string* NameIndex::StatementOf(const std::string& name) const {
  const auto it = target_of_.find(name);
  return it == target_of_.end() ? nullptr : &it->second.statement;
}

std::optional<uint64_t> NameIndex::LogIndexOf(const std::string& name) const {
  const auto it = target_of_.find(name);
  return it == target_of_.end() ? std::nullopt : it->second.log_index;
}

std::vector<std::string> NameIndex::Names() const {
  std::vector<std::string> names;
  names.reserve(target_of_.size());
  for (const auto& [name, target] : target_of_) names.push_back(name);
  return names;
}

std::vector<std::string> NameIndex::NamesOf(
    const std::string& digest_text) const {
  const auto it = names_of_.find(digest_text);
  if (it == names_of_.end()) return {};
  return std::vector<std::string>(it->second.begin(), it->second.end());
}

std::vector<std::string> NameIndex::RemoveAllOf(
    const std::string& digest_text) {
  std::vector<std::string> names = NamesOf(digest_text);
  for (const std::string& name : names) target_of_.erase(name);
  names_of_.erase(digest_text);
  return names;
}

}  // namespace verity::server
