// C2SP tlog-witness requests and answers (witness_protocol.h).

#include "lib/tlog/witness_protocol.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/printable.h"
#include "lib/base/status_macros.h"

namespace verity::tlog {
namespace {

absl::Status Malformed(absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("not a tlog-witness add-checkpoint request: ", why));
}

// A decimal size with no sign, no leading zero and no trailing text.
absl::StatusOr<uint64_t> ParseSize(absl::string_view text) {
  uint64_t size = 0;
  if (text.empty() || (text.size() > 1 && text[0] == '0') ||
      !absl::SimpleAtoi(text, &size) || text[0] == '+') {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", Printable(text), "\" is not a tree size"));
  }
  return size;
}

}  // namespace

std::string FormatAddCheckpoint(const AddCheckpointRequest& request) {
  std::string body = absl::StrCat("old ", request.old_size, "\n");
  for (const LogHash& hash : request.proof) {
    absl::StrAppend(&body, LogHashToBase64(hash), "\n");
  }
  absl::StrAppend(&body, "\n", request.checkpoint);
  return body;
}

absl::StatusOr<AddCheckpointRequest> ParseAddCheckpoint(
    absl::string_view body) {
  if (body.size() > kMaxAddCheckpointSize) {
    return Malformed(
        absl::StrCat("more than ", kMaxAddCheckpointSize, " bytes"));
  }
  const size_t blank = body.find("\n\n");
  if (blank == absl::string_view::npos) return Malformed("no empty line");
  AddCheckpointRequest request;
  request.checkpoint = std::string(body.substr(blank + 2));
  std::vector<absl::string_view> lines =
      absl::StrSplit(body.substr(0, blank), '\n');
  absl::string_view old = lines[0];
  if (!absl::ConsumePrefix(&old, "old ")) {
    return Malformed("the first line is not \"old <size>\"");
  }
  absl::StatusOr<uint64_t> old_size = ParseSize(old);
  if (!old_size.ok()) return Malformed(old_size.status().message());
  request.old_size = *old_size;
  if (lines.size() - 1 > kMaxConsistencyHashes) {
    return Malformed(absl::StrCat("a proof of more than ",
                                  kMaxConsistencyHashes, " hashes"));
  }
  if (request.old_size == 0 && lines.size() > 1) {
    return Malformed("a proof from an empty tree");
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    absl::StatusOr<LogHash> hash = LogHashFromBase64(lines[i]);
    if (!hash.ok()) return Malformed(hash.status().message());
    request.proof.push_back(*hash);
  }
  return request;
}

std::string FormatWitnessSize(uint64_t size) {
  return absl::StrCat(size, "\n");
}

absl::StatusOr<uint64_t> ParseWitnessSize(absl::string_view body) {
  if (!absl::ConsumeSuffix(&body, "\n")) {
    return absl::InvalidArgumentError(
        "a witness's size is a decimal number and a newline");
  }
  return ParseSize(body);
}

absl::StatusOr<std::vector<NoteSignature>> OpenCosignatures(
    absl::string_view checkpoint_text, absl::string_view body,
    const NoteKey& witness) {
  absl::StatusOr<SignedNote> note =
      ParseNote(absl::StrCat(checkpoint_text, "\n", body));
  if (!note.ok()) {
    return absl::DataLossError(
        absl::StrCat("witness ", witness.name(),
                     " answered no cosignature: ", note.status().message()));
  }
  ASSIGN_OR_RETURN(const std::vector<VerifiedSignature> verified,
                   VerifyNote(*note, {witness}));
  if (verified.empty()) {
    return absl::DataLossError(absl::StrCat(
        "witness ", witness.name(), " answered no cosignature by its key"));
  }
  std::vector<NoteSignature> mine;
  for (NoteSignature& signature : note->signatures) {
    if (signature.name == witness.name() && signature.id == witness.id()) {
      mine.push_back(std::move(signature));
    }
  }
  return mine;
}

}  // namespace verity::tlog
