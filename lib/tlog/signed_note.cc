// Implements C2SP signed notes, their keys and cosignatures.

#include "lib/tlog/signed_note.h"

#include <openssl/sha.h>

#include <algorithm>
#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "lib/base/printable.h"
#include "lib/base/status_macros.h"

namespace verity::tlog {
namespace {

constexpr absl::string_view kSignaturePrefix = "\xe2\x80\x94 ";  // U+2014
constexpr size_t kTimestampSize = 8;

// Unicode's spaces above ASCII (Go's unicode.IsSpace), in UTF-8: in valid
// UTF-8 a code point's bytes are found only where it is.
constexpr absl::string_view kWideSpaces[] = {
    "\xc2\x85",     "\xc2\xa0",     "\xe1\x9a\x80", "\xe2\x80\x80",
    "\xe2\x80\x81", "\xe2\x80\x82", "\xe2\x80\x83", "\xe2\x80\x84",
    "\xe2\x80\x85", "\xe2\x80\x86", "\xe2\x80\x87", "\xe2\x80\x88",
    "\xe2\x80\x89", "\xe2\x80\x8a", "\xe2\x80\xa8", "\xe2\x80\xa9",
    "\xe2\x80\xaf", "\xe2\x81\x9f", "\xe3\x80\x80",
};

// C2SP: not empty, no Unicode space, no '+'.
bool ValidKeyName(absl::string_view name) {
  if (name.empty() || !IsUtf8(name)) return false;
  for (char c : name) {
    if (static_cast<uint8_t>(c) <= 0x20 || c == '+') return false;
  }
  return std::none_of(std::begin(kWideSpaces), std::end(kWideSpaces),
                      [name](absl::string_view space) {
                        return absl::StrContains(name, space);
                      });
}

uint32_t BigEndian32(absl::string_view bytes) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i)
    value = value << 8 | static_cast<uint8_t>(bytes[i]);
  return value;
}

std::string BigEndianBytes(uint64_t value, int size) {
  std::string bytes(size, '\0');
  for (int i = size - 1; i >= 0; --i, value >>= 8) {
    bytes[i] = static_cast<char>(value & 0xff);
  }
  return bytes;
}

absl::string_view RawKey(const Ed25519PublicKey& key) {
  return absl::string_view(reinterpret_cast<const char*>(key.raw().data()),
                           key.raw().size());
}

// Canonical standard base64 only, so that a note has one spelling.
bool DecodeBase64(absl::string_view text, std::string& bytes) {
  return absl::Base64Unescape(text, &bytes) &&
         absl::Base64Escape(bytes) == text;
}

std::string CosignedMessage(absl::string_view checkpoint, uint64_t timestamp) {
  return absl::StrCat("cosignature/v1\ntime ", timestamp, "\n", checkpoint);
}

absl::StatusOr<NoteSignature> ParseSignatureLine(absl::string_view line) {
  if (!absl::ConsumePrefix(&line, kSignaturePrefix)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a note's signature line starts with \"\xe2\x80\x94 \": \"",
        Printable(line), "\""));
  }
  std::vector<absl::string_view> parts = absl::StrSplit(line, ' ');
  std::string bytes;
  if (parts.size() != 2 || !ValidKeyName(parts[0]) ||
      !DecodeBase64(parts[1], bytes) || bytes.size() <= 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a malformed note signature line: \"", Printable(line), "\""));
  }
  return NoteSignature{std::string(parts[0]), BigEndian32(bytes),
                       bytes.substr(4)};
}

}  // namespace

absl::StatusOr<NoteKey> NoteKey::Make(absl::string_view name, NoteKeyType type,
                                      const Ed25519PublicKey& key) {
  if (!ValidKeyName(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("a note key's name is not empty and has no space or "
                     "'+': \"",
                     Printable(name), "\""));
  }
  const std::string hashed = absl::StrCat(
      name, "\n", std::string(1, static_cast<char>(type)), RawKey(key));
  uint8_t digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const uint8_t*>(hashed.data()), hashed.size(),
         digest);
  return NoteKey(
      std::string(name), type, key,
      BigEndian32(absl::string_view(reinterpret_cast<const char*>(digest), 4)));
}

absl::StatusOr<NoteKey> NoteKey::Parse(absl::string_view text) {
  // The name has no '+'; the base64 may.
  const auto malformed = [&text] {
    return absl::InvalidArgumentError(absl::StrCat(
        "not a note verifier key (NAME+ID+BASE64): \"", Printable(text), "\""));
  };
  const size_t first = text.find('+');
  if (first == absl::string_view::npos) return malformed();
  const size_t second = text.find('+', first + 1);
  if (second == absl::string_view::npos) return malformed();
  const absl::string_view name = text.substr(0, first);
  const absl::string_view hex = text.substr(first + 1, second - first - 1);
  uint32_t id = 0;
  std::string bytes;
  if (hex.size() != 8 ||
      !std::all_of(hex.begin(), hex.end(), absl::ascii_isxdigit) ||
      !absl::SimpleHexAtoi(hex, &id) ||
      !DecodeBase64(text.substr(second + 1), bytes) ||
      bytes.size() != 1 + kEd25519PublicKeySize) {
    return malformed();
  }
  const auto type = static_cast<NoteKeyType>(bytes[0]);
  if (type != NoteKeyType::kEd25519 && type != NoteKeyType::kCosignatureV1) {
    return absl::InvalidArgumentError(
        absl::StrCat("note key \"", Printable(name), "\" has signature type ",
                     static_cast<int>(static_cast<uint8_t>(bytes[0])),
                     "; verityd knows 1 (Ed25519) and 4 (cosignature/v1)"));
  }
  ASSIGN_OR_RETURN(Ed25519PublicKey key,
                   Ed25519PublicKey::FromRaw(bytes.substr(1)));
  ASSIGN_OR_RETURN(NoteKey made, Make(name, type, key));
  if (made.id() != id) {
    return absl::InvalidArgumentError(
        absl::StrFormat("note key \"%s\" says ID %08x; its key's ID is %08x",
                        Printable(name), id, made.id()));
  }
  return made;
}

std::string NoteKey::ToString() const {
  return absl::StrFormat(
      "%s+%08x+%s", name_, id_,
      absl::Base64Escape(absl::StrCat(std::string(1, static_cast<char>(type_)),
                                      RawKey(key_))));
}

absl::StatusOr<SignedNote> ParseNote(absl::string_view note) {
  if (note.size() > kMaxNoteSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a note is at most ", kMaxNoteSize, " bytes, not ", note.size()));
  }
  if (!IsUtf8(note) || std::any_of(note.begin(), note.end(), [](char c) {
        return static_cast<uint8_t>(c) < 0x20 && c != '\n';
      })) {
    return absl::InvalidArgumentError(
        "a note is UTF-8 text with no control character but newlines");
  }
  const size_t blank = note.rfind("\n\n");
  if (blank == absl::string_view::npos || !absl::EndsWith(note, "\n") ||
      blank + 2 == note.size()) {
    return absl::InvalidArgumentError(
        "a note is text, a blank line and signature lines, each ending in a "
        "newline");
  }
  SignedNote parsed;
  parsed.text = std::string(note.substr(0, blank + 1));
  absl::string_view lines = note.substr(blank + 2);
  lines.remove_suffix(1);
  for (absl::string_view line : absl::StrSplit(lines, '\n')) {
    if (parsed.signatures.size() == kMaxNoteSignatures) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a note has at most ", kMaxNoteSignatures, " signatures"));
    }
    ASSIGN_OR_RETURN(parsed.signatures.emplace_back(),
                     ParseSignatureLine(line));
  }
  return parsed;
}

std::string FormatNote(const SignedNote& note) {
  std::string out = absl::StrCat(note.text, "\n");
  for (const NoteSignature& signature : note.signatures) {
    absl::StrAppend(&out, kSignaturePrefix, signature.name, " ",
                    absl::Base64Escape(absl::StrCat(
                        BigEndianBytes(signature.id, 4), signature.signature)),
                    "\n");
  }
  return out;
}

absl::StatusOr<NoteSignature> SignNote(absl::string_view text,
                                       absl::string_view name,
                                       const Ed25519PrivateKey& key) {
  ASSIGN_OR_RETURN(NoteKey note_key, NoteKey::Make(name, NoteKeyType::kEd25519,
                                                   key.public_key()));
  return NoteSignature{std::string(name), note_key.id(), key.Sign(text)};
}

absl::StatusOr<NoteSignature> Cosign(absl::string_view checkpoint,
                                     uint64_t timestamp, absl::string_view name,
                                     const Ed25519PrivateKey& key) {
  ASSIGN_OR_RETURN(
      NoteKey note_key,
      NoteKey::Make(name, NoteKeyType::kCosignatureV1, key.public_key()));
  return NoteSignature{
      std::string(name), note_key.id(),
      absl::StrCat(BigEndianBytes(timestamp, kTimestampSize),
                   key.Sign(CosignedMessage(checkpoint, timestamp)))};
}

absl::StatusOr<std::vector<VerifiedSignature>> VerifyNote(
    const SignedNote& note, absl::Span<const NoteKey> keys) {
  std::vector<VerifiedSignature> verified;
  for (const NoteSignature& signature : note.signatures) {
    for (const NoteKey& key : keys) {
      if (key.name() != signature.name || key.id() != signature.id) continue;
      absl::string_view bytes = signature.signature;
      uint64_t timestamp = 0;
      bool ok = false;
      if (key.type() == NoteKeyType::kEd25519) {
        ok = key.key().Verify(note.text, bytes);
      } else if (bytes.size() == kTimestampSize + kEd25519SignatureSize) {
        timestamp =
            uint64_t{BigEndian32(bytes)} << 32 | BigEndian32(bytes.substr(4));
        ok = key.key().Verify(CosignedMessage(note.text, timestamp),
                              bytes.substr(kTimestampSize));
      }
      if (!ok) {
        return absl::DataLossError(absl::StrCat("the note's signature by ",
                                                Printable(key.name()),
                                                " does not verify"));
      }
      const bool seen = std::any_of(
          verified.begin(), verified.end(),
          [&key](const VerifiedSignature& v) { return v.key == &key; });
      if (!seen) verified.push_back({&key, timestamp});
    }
  }
  return verified;
}

}  // namespace verity::tlog
