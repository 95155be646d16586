// Implements signed name statements. The layout (docs/protocol.md, "Signed
// names"), integers little-endian as in fs-verity's own structures:
//
//   body       = magic "verityd name statement v2\n"
//                u64 version, u64 issued, u64 expires (Unix seconds)
//                u8 kind (1 a file, 2 a tree)
//                u8 hash algorithm (fs-verity's numbers), digest bytes
//                u16 name size, name bytes
//                u8 signer count, that many 32-byte key ids
//   statement  = body, then one 64-byte Ed25519 signature of body per signer
//
// Version 1 ("verityd name statement v1\n") is the same without the kind:
// it is read as a file.

#include "lib/trust/name_statement.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "lib/base/little_endian.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"

namespace verity {
namespace {

// Far beyond any real date; keeps the times' arithmetic exact.
constexpr uint64_t kMaxSeconds = uint64_t{1} << 40;

absl::Status Malformed(absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("malformed name statement: ", why));
}

absl::Status CheckClaim(const NameClaim& claim) {
  if (claim.name.empty() || claim.name.size() > kMaxStatementNameSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("a name statement's name must have 1 to ",
                     kMaxStatementNameSize, " bytes"));
  }
  if (claim.digest.digest.size() != DigestSize(claim.digest.algorithm)) {
    return absl::InvalidArgumentError("a name statement needs a whole digest");
  }
  if (claim.kind != NameKind::kFile && claim.kind != NameKind::kTree) {
    return absl::InvalidArgumentError(
        "a name statement means a file or a tree");
  }
  if (claim.issued < absl::UnixEpoch() || claim.expires <= claim.issued ||
      claim.expires > absl::FromUnixSeconds(kMaxSeconds)) {
    return absl::InvalidArgumentError(
        "a name statement must expire after it is issued, both between 1970 "
        "and the year 36812");
  }
  return absl::OkStatus();
}

std::string EncodeBody(const NameClaim& claim,
                       absl::Span<const Ed25519PrivateKey* const> keys) {
  std::string body(kNameStatementMagic);
  AppendLittleEndian(claim.version, 8, &body);
  AppendLittleEndian(absl::ToUnixSeconds(claim.issued), 8, &body);
  AppendLittleEndian(absl::ToUnixSeconds(claim.expires), 8, &body);
  AppendLittleEndian(static_cast<uint8_t>(claim.kind), 1, &body);
  AppendLittleEndian(static_cast<uint8_t>(claim.digest.algorithm), 1, &body);
  body += claim.digest.digest;
  AppendLittleEndian(claim.name.size(), 2, &body);
  body += claim.name;
  AppendLittleEndian(keys.size(), 1, &body);
  for (const Ed25519PrivateKey* key : keys) {
    const KeyId& id = key->public_key().id();
    body.append(reinterpret_cast<const char*>(id.data()), id.size());
  }
  return body;
}

// Parses the claim that follows the magic: with a kind (version 2), or
// without (version 1, a file).
absl::Status ReadClaim(LittleEndianReader& in, bool has_kind,
                       NameClaim* claim) {
  uint64_t issued = 0, expires = 0, kind = 1, algorithm = 0, name_size = 0;
  absl::string_view digest, name;
  if (!in.Integer(8, &claim->version) || !in.Integer(8, &issued) ||
      !in.Integer(8, &expires) || (has_kind && !in.Integer(1, &kind)) ||
      !in.Integer(1, &algorithm)) {
    return Malformed("truncated");
  }
  if (kind != static_cast<uint8_t>(NameKind::kFile) &&
      kind != static_cast<uint8_t>(NameKind::kTree)) {
    return Malformed(absl::StrCat("unknown kind ", kind));
  }
  claim->kind = static_cast<NameKind>(kind);
  if (!IsValidHashAlgorithm(static_cast<uint8_t>(algorithm))) {
    return Malformed(absl::StrCat("unknown hash algorithm ", algorithm));
  }
  claim->digest.algorithm = static_cast<HashAlgorithm>(algorithm);
  if (!in.Bytes(DigestSize(claim->digest.algorithm), &digest) ||
      !in.Integer(2, &name_size) || !in.Bytes(name_size, &name)) {
    return Malformed("truncated");
  }
  if (issued > kMaxSeconds || expires > kMaxSeconds) {
    return Malformed("a time is out of range");
  }
  claim->digest.digest = std::string(digest);
  claim->name = std::string(name);
  claim->issued = absl::FromUnixSeconds(static_cast<int64_t>(issued));
  claim->expires = absl::FromUnixSeconds(static_cast<int64_t>(expires));
  absl::Status valid = CheckClaim(*claim);
  return valid.ok() ? valid : Malformed(valid.message());
}

absl::Status ReadSigners(LittleEndianReader& in, NameStatement* statement) {
  uint64_t count = 0;
  if (!in.Integer(1, &count)) return Malformed("truncated");
  if (count == 0 || count > kMaxStatementSigners) {
    return Malformed(
        absl::StrCat("it must list 1 to ", kMaxStatementSigners, " signers"));
  }
  for (uint64_t i = 0; i < count; ++i) {
    absl::string_view id;
    if (!in.Bytes(sizeof(KeyId), &id)) return Malformed("truncated");
    KeyId key_id;
    std::memcpy(key_id.data(), id.data(), key_id.size());
    if (std::find(statement->signers.begin(), statement->signers.end(),
                  key_id) != statement->signers.end()) {
      return Malformed("a signer is listed twice");
    }
    statement->signers.push_back(key_id);
  }
  return absl::OkStatus();
}

std::string Describe(const NameStatement& statement) {
  return absl::StrCat("the name statement for \"", statement.claim.name,
                      "\" (version ", statement.claim.version, ")");
}

}  // namespace

absl::string_view NameKindText(NameKind kind) {
  return kind == NameKind::kTree ? "tree" : "file";
}

absl::StatusOr<std::string> SignNameStatement(
    const NameClaim& claim, absl::Span<const Ed25519PrivateKey* const> keys) {
  RETURN_IF_ERROR(CheckClaim(claim));
  if (keys.empty() || keys.size() > kMaxStatementSigners) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a name statement needs 1 to ", kMaxStatementSigners, " keys"));
  }
  absl::flat_hash_set<std::string> ids;
  for (const Ed25519PrivateKey* key : keys) {
    if (!ids.insert(KeyIdToHex(key->public_key().id())).second) {
      return absl::InvalidArgumentError("the same key signs twice");
    }
  }
  std::string statement = EncodeBody(claim, keys);
  const std::string body = statement;
  for (const Ed25519PrivateKey* key : keys) statement += key->Sign(body);
  return statement;
}

absl::StatusOr<NameStatement> ParseNameStatement(absl::string_view encoded) {
  if (encoded.size() > kMaxNameStatementSize) return Malformed("too large");
  LittleEndianReader in(encoded);
  absl::string_view magic;
  static_assert(kNameStatementMagic.size() == kNameStatementMagicV1.size());
  if (!in.Bytes(kNameStatementMagic.size(), &magic) ||
      (magic != kNameStatementMagic && magic != kNameStatementMagicV1)) {
    return Malformed("not a verityd name statement, version 1 or 2");
  }
  NameStatement statement;
  RETURN_IF_ERROR(
      ReadClaim(in, magic == kNameStatementMagic, &statement.claim));
  RETURN_IF_ERROR(ReadSigners(in, &statement));
  statement.body = std::string(encoded.substr(0, in.position()));
  for (size_t i = 0; i < statement.signers.size(); ++i) {
    absl::string_view signature;
    if (!in.Bytes(kEd25519SignatureSize, &signature)) {
      return Malformed("truncated");
    }
    statement.signatures.emplace_back(signature);
  }
  if (!in.done()) return Malformed("bytes follow the last signature");
  statement.encoded = std::string(encoded);
  return statement;
}

TrustedKeys::TrustedKeys(std::vector<Ed25519PublicKey> keys, int threshold)
    : keys_(std::move(keys)), threshold_(threshold) {}

absl::StatusOr<TrustedKeys> TrustedKeys::Create(
    std::vector<Ed25519PublicKey> keys, int threshold) {
  if (keys.empty()) return absl::InvalidArgumentError("no trusted key");
  absl::flat_hash_set<std::string> ids;
  for (const Ed25519PublicKey& key : keys) {
    if (!ids.insert(KeyIdToHex(key.id())).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "trusted key ", KeyIdToHex(key.id()), " is listed twice"));
    }
  }
  if (threshold < 1 || static_cast<size_t>(threshold) > keys.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the signature threshold must be from 1 to the ",
                     keys.size(), " trusted keys, not ", threshold));
  }
  return TrustedKeys(std::move(keys), threshold);
}

absl::StatusOr<TrustedKeys> TrustedKeys::FromPem(absl::string_view pem,
                                                 int threshold) {
  ASSIGN_OR_RETURN(std::vector<Ed25519PublicKey> keys,
                   Ed25519PublicKey::ParsePem(pem));
  return Create(std::move(keys), threshold);
}

const Ed25519PublicKey* TrustedKeys::Find(const KeyId& id) const {
  for (const Ed25519PublicKey& key : keys_) {
    if (key.id() == id) return &key;
  }
  return nullptr;
}

std::vector<KeyId> TrustedSigners(const NameStatement& statement,
                                  const TrustedKeys& keys) {
  std::vector<KeyId> signers;
  for (size_t i = 0; i < statement.signers.size(); ++i) {
    const Ed25519PublicKey* key = keys.Find(statement.signers[i]);
    if (key != nullptr &&
        key->Verify(statement.body, statement.signatures[i])) {
      signers.push_back(statement.signers[i]);
    }
  }
  return signers;
}

absl::Status CheckNameStatementSigned(const NameStatement& statement,
                                      const TrustedKeys& keys,
                                      absl::string_view name) {
  const size_t valid = TrustedSigners(statement, keys).size();
  if (valid < static_cast<size_t>(keys.threshold())) {
    size_t trusted = 0;
    for (const KeyId& id : statement.signers) {
      if (keys.Find(id) != nullptr) ++trusted;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        Describe(statement), " has ", valid,
        " valid signatures by trusted keys, ", keys.threshold(), " needed (",
        trusted - valid, " by trusted keys do not verify, ",
        statement.signers.size() - trusted, " by keys not trusted)"));
  }
  if (statement.claim.name != name) {
    return absl::InvalidArgumentError(
        absl::StrCat("a name statement for \"", statement.claim.name,
                     "\" was given for \"", name, "\""));
  }
  return absl::OkStatus();
}

absl::Status CheckNameStatement(const NameStatement& statement,
                                const TrustedKeys& keys, absl::string_view name,
                                absl::Time now) {
  RETURN_IF_ERROR(CheckNameStatementSigned(statement, keys, name));
  if (now + kNameStatementClockSkew < statement.claim.issued) {
    return absl::InvalidArgumentError(
        absl::StrCat(Describe(statement), " is issued in the future, at ",
                     absl::FormatTime(statement.claim.issued)));
  }
  if (now - kNameStatementClockSkew >= statement.claim.expires) {
    return absl::InvalidArgumentError(
        absl::StrCat(Describe(statement), " expired at ",
                     absl::FormatTime(statement.claim.expires)));
  }
  return absl::OkStatus();
}

SeenName SeenNameOf(const NameStatement& statement) {
  return {statement.claim.version, Sha256Hex(statement.body)};
}

absl::Status CheckNotRolledBack(const SeenName& seen,
                                const NameStatement& next) {
  if (next.claim.version < seen.version) {
    return absl::FailedPreconditionError(
        absl::StrCat(Describe(next), " is older than version ", seen.version,
                     " this client has already accepted: a rollback"));
  }
  if (next.claim.version == seen.version &&
      Sha256Hex(next.body) != seen.body_sha256) {
    return absl::FailedPreconditionError(absl::StrCat(
        Describe(next),
        " differs from the statement of the same version this client has "
        "already accepted"));
  }
  return absl::OkStatus();
}

absl::Status CheckSupersedes(const NameStatement& current,
                             const NameStatement& next) {
  if (next.claim.version > current.claim.version) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(Describe(next), " is not newer than the stored version ",
                   current.claim.version));
}

absl::StatusOr<uint64_t> NextNameVersion(std::optional<uint64_t> requested,
                                         uint64_t known, absl::Time now) {
  if (requested.has_value()) {
    if (*requested > known) return *requested;
    return absl::FailedPreconditionError(
        absl::StrCat("version ", *requested, " is not above version ", known,
                     " that this key already signed for the name"));
  }
  if (known == UINT64_MAX) {
    return absl::FailedPreconditionError(
        "this key signed the highest version there is for the name");
  }
  const int64_t millis = absl::ToUnixMillis(now);
  return std::max(known + 1,
                  static_cast<uint64_t>(std::max<int64_t>(millis, 0)));
}

}  // namespace verity
