// Fuzzes the digest's text form (lib's ParseDigest and the SDK's Digest):
// accepted exactly when the text is "sha256:" + 64 or "sha512:" + 128 hex
// digits, and then formatting gives the text back in lower case.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"
#include "lib/hash/hash.h"
#include "lib/tree/descriptor.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/predicates.h"
#include "verity/digest.h"

namespace verity::fuzz {
namespace {

void CheckAlgorithmName(absl::string_view text) {
  const bool known = text == "sha256" || text == "sha512";
  FUZZ_CHECK(ParseHashAlgorithm(text).ok() == known, text);
}

void CheckDigestText(absl::string_view text) {
  const absl::StatusOr<ParsedDigest> parsed = ParseDigest(text);
  FUZZ_CHECK(parsed.ok() == LooksLikeDigest(text), text);
  const absl::StatusOr<sdk::Digest> sdk_digest = sdk::Digest::Parse(text);
  FUZZ_CHECK(sdk_digest.ok() == parsed.ok(), text);
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument,
               parsed.status().message());
    return;
  }
  FUZZ_CHECK(parsed->digest.size() == DigestSize(parsed->algorithm), text);
  const std::string formatted = parsed->ToString();
  FUZZ_CHECK(formatted == absl::AsciiStrToLower(text), formatted);
  const absl::StatusOr<ParsedDigest> again = ParseDigest(formatted);
  FUZZ_CHECK(again.ok() && *again == *parsed, formatted);

  FUZZ_CHECK(sdk_digest->bytes() == parsed->digest, text);
  FUZZ_CHECK(sdk_digest->ToString() == formatted, sdk_digest->ToString());
  const absl::StatusOr<sdk::Digest> from_bytes =
      sdk::Digest::FromBytes(sdk_digest->algorithm(), sdk_digest->bytes());
  FUZZ_CHECK(from_bytes.ok() && *from_bytes == *sdk_digest, text);
}

// Raw bytes as a digest: accepted exactly with the algorithm's size.
void CheckRawBytes(uint8_t algorithm, absl::string_view raw) {
  const absl::StatusOr<sdk::Digest> digest =
      sdk::Digest::FromBytes(static_cast<sdk::DigestAlgorithm>(algorithm), raw);
  const bool valid = (algorithm == 1 && raw.size() == 32) ||
                     (algorithm == 2 && raw.size() == 64);
  FUZZ_CHECK(digest.ok() == valid, raw);
  if (!valid) return;
  const absl::StatusOr<sdk::Digest> parsed =
      sdk::Digest::Parse(digest->ToString());
  FUZZ_CHECK(parsed.ok() && *parsed == *digest, digest->ToString());
}

}  // namespace
}  // namespace verity::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  verity::fuzz::CheckDigestText(text);
  verity::fuzz::CheckAlgorithmName(text.substr(0, text.find(':')));
  if (size > 0) verity::fuzz::CheckRawBytes(data[0], text.substr(1));
  return 0;
}
