// C2SP signed notes: text, a blank line, and "— <key name> <base64(key ID ||
// signature)>" lines. Ed25519 signatures (type 0x01) and the timestamped
// Ed25519 cosignatures of witnesses (type 0x04, C2SP tlog-cosignature), and
// verifier keys written "<name>+<hex key ID>+<base64(type || public key)>".
//
// Values and stateless functions; thread-compatible.

#ifndef VERITYD_LIB_TLOG_SIGNED_NOTE_H_
#define VERITYD_LIB_TLOG_SIGNED_NOTE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "lib/trust/ed25519_key.h"

namespace verity::tlog {

// A note holds at most this many signatures (C2SP: at least 16 accepted).
inline constexpr size_t kMaxNoteSignatures = 64;
// And this many bytes in all.
inline constexpr size_t kMaxNoteSize = 64 * 1024;

enum class NoteKeyType : uint8_t {
  kEd25519 = 0x01,
  kCosignatureV1 = 0x04,
};

// A public key that verifies a note's signatures.
class NoteKey {
 public:
  // id = SHA-256(name || "\n" || type || key)[:4], big-endian.
  // INVALID_ARGUMENT for a name that is empty or has a space or '+'.
  static absl::StatusOr<NoteKey> Make(absl::string_view name, NoteKeyType type,
                                      const Ed25519PublicKey& key);
  // The "<name>+<hex id>+<base64(type || key)>" form; INVALID_ARGUMENT for
  // another form, an unknown type, or an id that is not the key's.
  static absl::StatusOr<NoteKey> Parse(absl::string_view text);

  const std::string& name() const { return name_; }
  uint32_t id() const { return id_; }
  NoteKeyType type() const { return type_; }
  const Ed25519PublicKey& key() const { return key_; }
  std::string ToString() const;

 private:
  NoteKey(std::string name, NoteKeyType type, const Ed25519PublicKey& key,
          uint32_t id)
      : name_(std::move(name)), type_(type), key_(key), id_(id) {}

  std::string name_;
  NoteKeyType type_;
  Ed25519PublicKey key_;
  uint32_t id_;
};

// One signature line: the signature bytes follow the key ID.
struct NoteSignature {
  std::string name;
  uint32_t id = 0;
  std::string signature;
};

struct SignedNote {
  std::string text;  // ends with "\n"; the signatures cover all of it
  std::vector<NoteSignature> signatures;
};

// Parses a note as C2SP writes it; INVALID_ARGUMENT for anything else
// (control characters, bad UTF-8, a line that is not a signature, too many
// signatures or bytes).
absl::StatusOr<SignedNote> ParseNote(absl::string_view note);
std::string FormatNote(const SignedNote& note);

// `text` signed by `key` under `name` (type 0x01).
absl::StatusOr<NoteSignature> SignNote(absl::string_view text,
                                       absl::string_view name,
                                       const Ed25519PrivateKey& key);
// `checkpoint` (a checkpoint's text) cosigned by a witness's `key` under
// `name` at `timestamp` (Unix seconds; type 0x04).
absl::StatusOr<NoteSignature> Cosign(absl::string_view checkpoint,
                                     uint64_t timestamp, absl::string_view name,
                                     const Ed25519PrivateKey& key);

struct VerifiedSignature {
  const NoteKey* key = nullptr;
  uint64_t timestamp = 0;  // a cosignature's; 0 for type 0x01
};

// The signatures of `note` by `keys`, each verified. A signature whose name
// and ID are a known key's but that does not verify is DATA_LOSS (the whole
// note is refused); signatures by other keys are ignored. The result may be
// empty: the caller decides how many it needs.
absl::StatusOr<std::vector<VerifiedSignature>> VerifyNote(
    const SignedNote& note, absl::Span<const NoteKey> keys);

}  // namespace verity::tlog

#endif  // VERITYD_LIB_TLOG_SIGNED_NOTE_H_
