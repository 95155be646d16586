// Fuzzes signed name statements (lib/name_statement). The first byte picks
// the mode:
// - even: the rest is a statement as stored. Whatever parses must account for
//   every byte (body, then 64 bytes per signer) and be canonical, and it
//   passes the check against three fixed keys (threshold 1) exactly when it
//   is in effect and one of its signatures is what a fixed key makes of its
//   body (Ed25519 is deterministic), so no forged or altered statement is
//   ever accepted.
// - odd: a claim read from the input is signed by a subset of the fixed keys,
//   then changed once as the input says (a flipped bit, truncation,
//   extension, an overwritten byte). The honest statement round-trips and
//   passes; with all its signers required, every change is refused, by the
//   parser or the check.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "lib/hash/hash.h"
#include "lib/tree/descriptor.h"
#include "lib/trust/ed25519_key.h"
#include "lib/trust/name_statement.h"
#include "tests/fuzz/fuzz_input.h"

namespace verity::fuzz {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

struct Keys {
  std::vector<Ed25519PrivateKey> keys;
  TrustedKeys trusted;                    // threshold 1
  std::vector<TrustedKeys> all_of_first;  // [k - 1]: threshold k
};

const Keys& FixedKeys() {
  static const Keys* keys = [] {
    std::vector<Ed25519PrivateKey> private_keys;
    std::vector<Ed25519PublicKey> public_keys;
    for (char c : {'a', 'b', 'c'}) {
      private_keys.push_back(
          Ed25519PrivateKey::FromSeed(std::string(32, c)).value());
      public_keys.push_back(private_keys.back().public_key());
    }
    TrustedKeys trusted = TrustedKeys::Create(public_keys, 1).value();
    std::vector<TrustedKeys> all_of_first;
    for (int k = 1; k <= 3; ++k) {
      all_of_first.push_back(TrustedKeys::Create(public_keys, k).value());
    }
    return new Keys{std::move(private_keys), std::move(trusted),
                    std::move(all_of_first)};
  }();
  return *keys;
}

const Ed25519PrivateKey* FixedKey(const KeyId& id) {
  for (const Ed25519PrivateKey& key : FixedKeys().keys) {
    if (key.public_key().id() == id) return &key;
  }
  return nullptr;
}

// A statement's body as version 2 encodes it: a version 1 body (which means
// a file) with the kind inserted after the times.
std::string AsVersionTwo(absl::string_view body) {
  if (!absl::StartsWith(body, kNameStatementMagicV1)) return std::string(body);
  const size_t times = kNameStatementMagicV1.size() + 24;
  return absl::StrCat(kNameStatementMagic,
                      body.substr(kNameStatementMagic.size(), 24), "\x01",
                      body.substr(times));
}

// How many of its signatures are exactly what a fixed key makes of its body
// (Ed25519 is deterministic); and, when every signer is a fixed key, checks
// that signing its claim again encodes the same body (the parser accepted a
// canonical encoding only).
int FixedKeySignatures(const NameStatement& statement) {
  int matching = 0;
  std::vector<const Ed25519PrivateKey*> signers;
  for (size_t i = 0; i < statement.signers.size(); ++i) {
    const Ed25519PrivateKey* key = FixedKey(statement.signers[i]);
    if (key == nullptr) continue;
    signers.push_back(key);
    if (key->Sign(statement.body) == statement.signatures[i]) ++matching;
  }
  if (signers.size() == statement.signers.size()) {
    const absl::StatusOr<std::string> again =
        SignNameStatement(statement.claim, signers);
    const std::string body = AsVersionTwo(statement.body);
    FUZZ_CHECK(again.ok() && again->substr(0, body.size()) == body,
               statement.encoded);
  }
  return matching;
}

bool InEffect(const NameClaim& claim) {
  return kNow + kNameStatementClockSkew >= claim.issued &&
         kNow - kNameStatementClockSkew < claim.expires;
}

void CheckStored(absl::string_view encoded) {
  const absl::StatusOr<NameStatement> parsed = ParseNameStatement(encoded);
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument,
               parsed.status().message());
    return;
  }
  FUZZ_CHECK(parsed->encoded == encoded, encoded);
  FUZZ_CHECK(encoded.substr(0, parsed->body.size()) == parsed->body, encoded);
  FUZZ_CHECK(
      parsed->body.size() + kEd25519SignatureSize * parsed->signers.size() ==
          encoded.size(),
      encoded);
  const bool accepted =
      CheckNameStatement(*parsed, FixedKeys().trusted, parsed->claim.name, kNow)
          .ok();
  FUZZ_CHECK(
      accepted == (FixedKeySignatures(*parsed) >= 1 && InEffect(parsed->claim)),
      encoded);
}

NameClaim ClaimFrom(FuzzInput& in) {
  NameClaim claim;
  claim.name = in.String(kMaxStatementNameSize + 8);
  claim.version = in.Integer<uint64_t>();
  claim.digest.algorithm =
      in.Bool() ? HashAlgorithm::kSha512 : HashAlgorithm::kSha256;
  claim.digest.digest =
      ComputeHash(claim.digest.algorithm, AsBytes(in.ShortString()));
  claim.issued = kNow - absl::Seconds(in.Integer<uint32_t>() % 100'000) +
                 absl::Seconds(in.Integer<uint16_t>());
  claim.expires = claim.issued + absl::Seconds(in.Integer<uint32_t>());
  return claim;
}

void CheckSignedThenChanged(FuzzInput& in) {
  const NameClaim claim = ClaimFrom(in);
  std::vector<const Ed25519PrivateKey*> signers;
  const uint8_t mask = in.Byte();
  for (size_t i = 0; i < FixedKeys().keys.size(); ++i) {
    if (mask & (1 << i)) signers.push_back(&FixedKeys().keys[i]);
  }
  const absl::StatusOr<std::string> signed_statement =
      SignNameStatement(claim, signers);
  if (!signed_statement.ok()) return;  // an invalid claim or no key
  const absl::StatusOr<NameStatement> honest =
      ParseNameStatement(*signed_statement);
  FUZZ_CHECK(honest.ok(), honest.status().message());
  FUZZ_CHECK(honest->claim.name == claim.name &&
                 honest->claim.digest == claim.digest &&
                 honest->claim.version == claim.version &&
                 honest->signers.size() == signers.size(),
             *signed_statement);
  FUZZ_CHECK(
      CheckNameStatement(*honest, FixedKeys().trusted, claim.name, kNow).ok() ==
          InEffect(honest->claim),
      *signed_statement);

  std::string changed = *signed_statement;
  const size_t at = in.Integer<uint16_t>() % changed.size();
  switch (in.Below(4)) {
    case 0:
      changed[at] ^= static_cast<char>(1 << in.Below(8));
      break;
    case 1:
      changed.resize(at);
      break;
    case 2:
      changed += in.Bytes(1 + in.Below(64));
      if (changed.size() == signed_statement->size()) changed += 'x';
      break;
    default:
      changed[at] = static_cast<char>(in.Byte());
      if (changed == *signed_statement) return;
  }
  // Every signer must sign: a change anywhere breaks one signature at least.
  const TrustedKeys& all = FixedKeys().all_of_first[signers.size() - 1];
  FUZZ_CHECK(CheckNameStatement(*honest, all, claim.name, kNow).ok() ==
                 InEffect(honest->claim),
             *signed_statement);
  const absl::StatusOr<NameStatement> parsed = ParseNameStatement(changed);
  if (!parsed.ok()) return;
  FUZZ_CHECK(!CheckNameStatement(*parsed, all, claim.name, kNow).ok(), changed);
}

}  // namespace
}  // namespace verity::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  verity::fuzz::FuzzInput in(data, size);
  if (in.Byte() % 2 == 0) {
    verity::fuzz::CheckStored(in.Bytes(in.remaining()));
  } else {
    verity::fuzz::CheckSignedThenChanged(in);
  }
  return 0;
}
