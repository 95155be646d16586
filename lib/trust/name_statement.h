// Signed name statements: "NAME means DIGEST, a file (or a tree)", version N,
// valid from ISSUED until EXPIRES, signed with Ed25519 by the keys it lists.
// Encoding and checks
// follow docs/protocol.md ("Signed names"); what is signed is exactly the
// stored body bytes, never a re-serialization.

#ifndef VERITYD_LIB_TRUST_NAME_STATEMENT_H_
#define VERITYD_LIB_TRUST_NAME_STATEMENT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "lib/tree/descriptor.h"
#include "lib/trust/ed25519_key.h"

namespace verity {

// The body starts with this: it separates the domain (no other verityd or
// foreign message begins so) and names the format's version. Version 2 adds
// what the name means (a file or a tree); version 1, which SignNameStatement
// no longer writes, parses as meaning a file.
inline constexpr absl::string_view kNameStatementMagic =
    "verityd name statement v2\n";
inline constexpr absl::string_view kNameStatementMagicV1 =
    "verityd name statement v1\n";
inline constexpr size_t kMaxStatementNameSize = 1024;
inline constexpr size_t kMaxStatementSigners = 16;
// Larger than any valid encoding.
inline constexpr size_t kMaxNameStatementSize = 4096;
// How far the checker's clock may be from the signer's: a statement is taken
// up to this long after it expires and from this long before it is issued.
inline constexpr absl::Duration kNameStatementClockSkew = absl::Minutes(5);

// What a name means: a file (its blob's bytes), or a tree (its blob is a
// tree manifest, lib/manifest/tree_manifest.h, naming the tree's files).
enum class NameKind : uint8_t { kFile = 1, kTree = 2 };

// "file" or "tree", for messages.
absl::string_view NameKindText(NameKind kind);

// What a statement says, before it is signed.
struct NameClaim {
  std::string name;
  ParsedDigest digest;
  uint64_t version = 0;
  absl::Time issued;   // whole seconds since the Unix epoch
  absl::Time expires;  // after `issued`
  NameKind kind = NameKind::kFile;
};

struct NameStatement {
  NameClaim claim;
  std::vector<KeyId> signers;           // distinct, in body order
  std::vector<std::string> signatures;  // 64 bytes each, one per signer
  std::string body;                     // the signed bytes, exactly as encoded
  std::string encoded;  // body || signatures, as stored and sent
};

// Encodes `claim`, listing the signers' key ids, and signs it with each key.
// INVALID_ARGUMENT for an empty or oversized name, expiry not after issue,
// times before the epoch, no key, too many keys or the same key twice.
absl::StatusOr<std::string> SignNameStatement(
    const NameClaim& claim, absl::Span<const Ed25519PrivateKey* const> keys);

// Decodes a statement's structure (no signature is checked).
// INVALID_ARGUMENT, saying what is wrong, for anything but an exact encoding:
// truncated, extended, unknown magic or algorithm, bad sizes, repeated signers.
absl::StatusOr<NameStatement> ParseNameStatement(absl::string_view encoded);

// The public keys trusted to sign names, and how many must sign one.
class TrustedKeys {
 public:
  // INVALID_ARGUMENT for no key, the same key twice, or a threshold outside
  // [1, number of keys].
  static absl::StatusOr<TrustedKeys> Create(std::vector<Ed25519PublicKey> keys,
                                            int threshold = 1);
  // Every PUBLIC KEY block of a PEM file's text.
  static absl::StatusOr<TrustedKeys> FromPem(absl::string_view pem,
                                             int threshold = 1);

  // nullptr if `id` is not trusted.
  const Ed25519PublicKey* Find(const KeyId& id) const;
  int threshold() const { return threshold_; }
  size_t size() const { return keys_.size(); }
  const std::vector<Ed25519PublicKey>& keys() const { return keys_; }

 private:
  TrustedKeys(std::vector<Ed25519PublicKey> keys, int threshold);

  std::vector<Ed25519PublicKey> keys_;
  int threshold_ = 1;
};

// The trusted keys whose signatures of `statement` verify, in body order.
std::vector<KeyId> TrustedSigners(const NameStatement& statement,
                                  const TrustedKeys& keys);

// Checks that at least `keys.threshold()` distinct trusted keys signed
// `statement` and that it names `name` exactly, whatever its times say: what
// a statement must pass to count as a version floor, expired or not.
// INVALID_ARGUMENT as CheckNameStatement's.
absl::Status CheckNameStatementSigned(const NameStatement& statement,
                                      const TrustedKeys& keys,
                                      absl::string_view name);

// CheckNameStatementSigned, and that `now` lies between issue and expiry
// (each widened by kNameStatementClockSkew).
// INVALID_ARGUMENT saying which check failed (the name statement for NAME
// ... "is expired", "names X", "has N valid signatures by trusted keys, M
// needed").
absl::Status CheckNameStatement(const NameStatement& statement,
                                const TrustedKeys& keys, absl::string_view name,
                                absl::Time now);

// What a client remembers of the newest statement it accepted for a name.
struct SeenName {
  uint64_t version = 0;
  std::string body_sha256;  // lowercase hex SHA-256 of the statement's body
};
SeenName SeenNameOf(const NameStatement& statement);

// Rollback, for a client: `next` may follow `seen` only with a higher
// version, or the same version and the same body. FAILED_PRECONDITION
// otherwise, saying which.
absl::Status CheckNotRolledBack(const SeenName& seen,
                                const NameStatement& next);

// For a server replacing a name's statement: `next` must have a higher
// version than `current`. FAILED_PRECONDITION otherwise.
absl::Status CheckSupersedes(const NameStatement& current,
                             const NameStatement& next);

// The version a publisher signs next for a name. `known` is the highest
// version it can vouch for: its own record of what it signed, and the stored
// statement if that verifies with the publisher's own key (never an
// unverified one: a store writer could roll clients back or lock the name).
// `requested` (--version) must lie above it; unset, the version is the time
// in milliseconds since the epoch, or known + 1 if that is higher, so that a
// publisher on a new machine with no record still signs above what it signed
// before. FAILED_PRECONDITION for a requested version not above `known`, or
// when `known` is the highest version there is.
absl::StatusOr<uint64_t> NextNameVersion(std::optional<uint64_t> requested,
                                         uint64_t known, absl::Time now);

}  // namespace verity

#endif  // VERITYD_LIB_TRUST_NAME_STATEMENT_H_
