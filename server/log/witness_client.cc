// WitnessClient: one blocking libcurl request per try (witness_client.h).

#include "server/log/witness_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/printable.h"
#include "lib/base/status_macros.h"
#include "lib/tlog/witness_protocol.h"

namespace verity::server {
namespace {

// A witness answers a few signature lines, or its size.
constexpr size_t kMaxReply = 64 << 10;

size_t Collect(char* data, size_t size, size_t n, void* out) {
  auto* body = static_cast<std::string*>(out);
  if (body->size() + size * n > kMaxReply) return 0;  // fails the transfer
  body->append(data, size * n);
  return size * n;
}

struct CurlFree {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

}  // namespace

absl::StatusOr<std::vector<WitnessConfig>> ParseWitnesses(
    absl::string_view text) {
  std::vector<WitnessConfig> witnesses;
  absl::flat_hash_set<std::string> keys;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    const std::vector<absl::string_view> fields =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    const auto bad = [number](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat("witnesses, line ", number, ": ", why));
    };
    if (fields.size() != 2) return bad("not \"<verifier key> <URL>\"");
    absl::StatusOr<tlog::NoteKey> key = tlog::NoteKey::Parse(fields[0]);
    if (!key.ok()) return bad(key.status().message());
    if (key->type() != tlog::NoteKeyType::kCosignatureV1) {
      return bad(
          "not a witness's key (cosignature/v1, `verity keygen "
          "--witness-name`)");
    }
    if (!absl::StartsWith(fields[1], "http://") &&
        !absl::StartsWith(fields[1], "https://")) {
      return bad(absl::StrCat("\"", Printable(fields[1]),
                              "\" is not an http:// or https:// URL"));
    }
    if (!keys.insert(key->ToString()).second) return bad("listed twice");
    witnesses.push_back(
        {*std::move(key), std::string(absl::StripSuffix(fields[1], "/"))});
  }
  return witnesses;
}

absl::StatusOr<WitnessClient::Reply> WitnessClient::Post(
    const std::string& body) const {
  std::unique_ptr<CURL, CurlFree> curl(curl_easy_init());
  if (curl == nullptr) return absl::InternalError("curl_easy_init failed");
  std::unique_ptr<curl_slist, CurlFree> headers(
      curl_slist_append(nullptr, "Content-Type: text/plain; charset=utf-8"));
  const std::string url = absl::StrCat(config_.url, tlog::kAddCheckpointPath);
  Reply reply;
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &Collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &reply.body);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(timeout_)));
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  const CURLcode code = curl_easy_perform(c);
  if (code != CURLE_OK) {
    return absl::UnavailableError(
        absl::StrCat("witness ", config_.url, ": ", curl_easy_strerror(code)));
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &reply.status);
  return reply;
}

absl::StatusOr<std::vector<tlog::NoteSignature>> WitnessClient::Cosign(
    const tlog::SignedCheckpoint& checkpoint, const tlog::LogProver& prover) {
  absl::StatusOr<std::vector<tlog::NoteSignature>> cosignatures =
      Ask(checkpoint, prover);
  if (cosignatures.ok()) {
    failures_ = 0;
    retry_at_ = absl::InfinitePast();
  } else {
    failures_ = std::min(failures_ + 1, 7);
    retry_at_ = absl::Now() +
                std::min(absl::Seconds(1 << (failures_ - 1)), absl::Minutes(1));
  }
  return cosignatures;
}

absl::StatusOr<std::vector<tlog::NoteSignature>> WitnessClient::Ask(
    const tlog::SignedCheckpoint& checkpoint, const tlog::LogProver& prover) {
  const uint64_t size = checkpoint.checkpoint.size;
  // Twice at most: the second time from the size a 409 said.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (size_ > size) {
      return absl::UnavailableError(
          absl::StrCat("witness ", config_.url, " has cosigned ", size_,
                       " entries, more than this checkpoint's ", size));
    }
    tlog::AddCheckpointRequest request{size_, {}, checkpoint.note};
    if (size_ != 0 && size_ < size) {
      ASSIGN_OR_RETURN(request.proof,
                       prover.Consistency(size_, size, checkpoint.checkpoint));
    }
    ASSIGN_OR_RETURN(const Reply reply,
                     Post(tlog::FormatAddCheckpoint(request)));
    if (reply.status == 409) {
      ASSIGN_OR_RETURN(size_, tlog::ParseWitnessSize(reply.body));
      continue;
    }
    if (reply.status != 200) {
      return absl::UnavailableError(absl::StrCat("witness ", config_.url,
                                                 " answered ", reply.status,
                                                 ": ", Printable(reply.body)));
    }
    ASSIGN_OR_RETURN(std::vector<tlog::NoteSignature> cosignatures,
                     tlog::OpenCosignatures(checkpoint.checkpoint.ToText(),
                                            reply.body, config_.key));
    size_ = size;
    return cosignatures;
  }
  return absl::UnavailableError(absl::StrCat(
      "witness ", config_.url, " moved on twice during one request"));
}

}  // namespace verity::server
