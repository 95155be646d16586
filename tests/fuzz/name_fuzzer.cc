// Fuzzes blob names: the store's ValidateBlobName against the protocol's rule
// (predicates.h), the name file format (names/ in the file store), the CLI's
// DIGEST_OR_NAME argument as the server then reads it, and NameIndex against
// a plain map.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "client/names/blob_ref.h"
#include "lib/trust/name_statement.h"
#include "proto/verity/v1/verity.pb.h"
#include "server/rpc/request_checks.h"
#include "server/store/name_history.h"
#include "server/store/name_index.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/predicates.h"

namespace verity::fuzz {
namespace {

constexpr absl::string_view kDigest =
    "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

void CheckName(absl::string_view name) {
  const absl::Status valid = server::ValidateBlobName(name);
  FUZZ_CHECK(valid.ok() == LooksLikeName(name), valid.message());
  if (!valid.ok()) {
    FUZZ_CHECK(valid.code() == absl::StatusCode::kInvalidArgument, "");
  }
  const std::string file = server::NameFileName(name);
  FUZZ_CHECK(file.size() == 64 && file.find_first_not_of("0123456789abcdef") ==
                                      std::string::npos,
             file);
  // A valid name survives its name file, with a statement or without; an
  // invalid one never does (one with a NUL reads back as a shorter name with
  // a statement, if at all).
  for (const absl::string_view statement : {"", "a statement"}) {
    const absl::StatusOr<server::NameRecord> record = server::DecodeNameFile(
        server::EncodeNameFile(kDigest, name, statement));
    const bool survives = record.ok() && record->name == name;
    FUZZ_CHECK(survives == valid.ok(), record.status().message());
    if (survives) {
      FUZZ_CHECK(record->digest.ToString() == kDigest &&
                     record->statement == statement,
                 record->name);
    }
  }
}

// The same bytes as a name history (name_history.h): a name file from before
// histories is one version of itself; any history that decodes encodes back
// to bytes that decode the same; what fails is DATA_LOSS.
void CheckNameHistory(absl::string_view contents,
                      const absl::StatusOr<server::NameRecord>& record) {
  const absl::StatusOr<server::NameHistory> history =
      server::DecodeNameHistory(contents);
  if (!absl::StartsWith(contents, "verity-name-history 1\n")) {
    FUZZ_CHECK(history.ok() == record.ok(), history.status().message());
    if (history.ok()) {
      FUZZ_CHECK(history->versions.size() == 1 &&
                     history->name == record->name &&
                     history->versions[0].digest == record->digest &&
                     history->versions[0].statement == record->statement,
                 "");
    }
  }
  if (!history.ok()) {
    FUZZ_CHECK(history.status().code() == absl::StatusCode::kDataLoss, "");
    return;
  }
  const absl::StatusOr<server::NameHistory> again =
      server::DecodeNameHistory(server::EncodeNameHistory(*history));
  FUZZ_CHECK(again.ok() && again->name == history->name &&
                 again->versions == history->versions,
             again.status().message());
}

// Any file found under names/: "<digest>\n<name>", then optionally NUL and
// a statement of 1 to kMaxNameStatementSize bytes, nothing else (or a
// history of such versions).
void CheckNameFile(absl::string_view contents) {
  const absl::StatusOr<server::NameRecord> record =
      server::DecodeNameFile(contents);
  CheckNameHistory(contents, record);
  const size_t newline = contents.find('\n');
  bool valid = newline != absl::string_view::npos &&
               LooksLikeDigest(contents.substr(0, newline));
  if (valid) {
    const absl::string_view rest = contents.substr(newline + 1);
    const size_t nul = rest.find('\0');
    valid = LooksLikeName(rest.substr(0, nul));
    if (nul != absl::string_view::npos) {
      const size_t statement = rest.size() - nul - 1;
      valid = valid && statement >= 1 && statement <= kMaxNameStatementSize;
    }
  }
  FUZZ_CHECK(record.ok() == valid, record.status().message());
  if (!record.ok()) {
    FUZZ_CHECK(record.status().code() == absl::StatusCode::kDataLoss, "");
    return;
  }
  FUZZ_CHECK(
      server::EncodeNameFile(record->digest.ToString(), record->name,
                             record->statement) ==
          absl::StrCat(absl::AsciiStrToLower(contents.substr(0, newline)),
                       contents.substr(newline)),
      "");
}

// What `verity get ARG` sends is what the server reads: the same digest, or
// the same name, refused by the server exactly when the name is invalid.
void CheckCliArgument(absl::string_view text) {
  const absl::StatusOr<client::BlobRef> ref = client::ParseBlobRef(text);
  FUZZ_CHECK(ref.ok() == !text.empty(), ref.status().message());
  if (!ref.ok()) return;
  FUZZ_CHECK(ref->digest.has_value() == LooksLikeDigest(text), "");
  v1::ReadRequest request;
  ref->SetIn(&request);
  const absl::StatusOr<server::BlobSelector> blob =
      server::CheckBlobSelector(request.digest(), request.name(),
                                request.blob_case() == v1::ReadRequest::kName);
  if (ref->digest) {
    FUZZ_CHECK(blob.ok() && !blob->by_name && blob->digest == *ref->digest,
               blob.status().message());
  } else {
    FUZZ_CHECK(blob.ok() == LooksLikeName(text), blob.status().message());
    if (blob.ok()) FUZZ_CHECK(blob->by_name && blob->name == text, "");
  }
}

// NameIndex against two maps: name -> digest and digest -> names.
void CheckIndex(FuzzInput& in) {
  const std::vector<std::string> names = {"a", "b", "a/b", "c.txt", "d/e/f"};
  const std::vector<std::string> digests = {"d1", "d2", "d3"};
  server::NameIndex index;
  std::map<std::string, std::string> model;
  for (int step = 0; step < 64 && !in.empty(); ++step) {
    const std::string& name = names[in.Below(names.size())];
    const std::string& digest = digests[in.Below(digests.size())];
    switch (in.Below(3)) {
      case 0:
        index.Set(name, digest);
        model[name] = digest;
        break;
      case 1:
        FUZZ_CHECK(index.Remove(name) == (model.erase(name) == 1), name);
        break;
      default: {
        std::vector<std::string> removed;
        for (auto it = model.begin(); it != model.end();) {
          if (it->second == digest) {
            removed.push_back(it->first);
            it = model.erase(it);
          } else {
            ++it;
          }
        }
        FUZZ_CHECK(index.RemoveAllOf(digest) == removed, digest);
      }
    }
    for (const std::string& n : names) {
      const std::string* found = index.Find(n);
      const auto it = model.find(n);
      FUZZ_CHECK((found == nullptr) == (it == model.end()), n);
      if (found != nullptr) FUZZ_CHECK(*found == it->second, n);
    }
    for (const std::string& d : digests) {
      std::vector<std::string> expected;
      for (const auto& [n, of] : model) {
        if (of == d) expected.push_back(n);
      }
      FUZZ_CHECK(index.NamesOf(d) == expected, d);
    }
  }
}

// The first byte picks the check; the rest is its text.
void Run(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const absl::string_view text(reinterpret_cast<const char*>(data) + 1,
                               size - 1);
  switch (data[0] % 4) {
    case 0:
      CheckName(text);
      break;
    case 1:
      CheckNameFile(text);
      break;
    case 2:
      CheckCliArgument(text);
      break;
    default: {
      FuzzInput in(data + 1, size - 1);
      CheckIndex(in);
    }
  }
}

}  // namespace
}  // namespace verity::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  verity::fuzz::Run(data, size);
  return 0;
}
