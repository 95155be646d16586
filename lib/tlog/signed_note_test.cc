// Signed notes: parsed exactly as C2SP writes them, signed and cosigned,
// verified by known keys only, and refused whole when a known key's
// signature is wrong.

#include "lib/tlog/signed_note.h"

#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace verity::tlog {
namespace {

Ed25519PrivateKey KeyFrom(char seed) {
  return *Ed25519PrivateKey::FromSeed(std::string(32, seed));
}

constexpr char kText[] = "example.com/log\n5\nAAAA\n";

TEST(SignedNoteTest, KeysRoundTripAndTheirIdIsTheSpecs) {
  const Ed25519PrivateKey key = KeyFrom('k');
  absl::StatusOr<NoteKey> made =
      NoteKey::Make("example.com/log", NoteKeyType::kEd25519, key.public_key());
  ASSERT_TRUE(made.ok()) << made.status();
  const std::string text = made->ToString();
  EXPECT_EQ(text.substr(0, 16), "example.com/log+");
  absl::StatusOr<NoteKey> parsed = NoteKey::Parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->id(), made->id());
  EXPECT_EQ(parsed->ToString(), text);
  // A cosigning key of the same name and key has another ID.
  absl::StatusOr<NoteKey> witness = NoteKey::Make(
      "example.com/log", NoteKeyType::kCosignatureV1, key.public_key());
  ASSERT_TRUE(witness.ok());
  EXPECT_NE(witness->id(), made->id());
  EXPECT_EQ(NoteKey::Parse(witness->ToString())->type(),
            NoteKeyType::kCosignatureV1);
  // The wrong ID, another type, no name, a name with '+' or a space.
  std::string wrong_id = text;
  wrong_id[16] = wrong_id[16] == '0' ? '1' : '0';
  EXPECT_FALSE(NoteKey::Parse(wrong_id).ok());
  std::string prefixed = text;  // "0x" and six digits: not eight digits
  prefixed.replace(16, 2, "0x");
  EXPECT_FALSE(NoteKey::Parse(prefixed).ok());
  EXPECT_FALSE(NoteKey::Parse(text.substr(15)).ok());
  EXPECT_FALSE(NoteKey::Parse("example.com/log").ok());
  EXPECT_FALSE(
      NoteKey::Make("a+b", NoteKeyType::kEd25519, key.public_key()).ok());
  EXPECT_FALSE(
      NoteKey::Make("a b", NoteKeyType::kEd25519, key.public_key()).ok());
  EXPECT_FALSE(NoteKey::Make("a\xc2\xa0"
                             "b",
                             NoteKeyType::kEd25519, key.public_key())
                   .ok());
  EXPECT_FALSE(NoteKey::Make("", NoteKeyType::kEd25519, key.public_key()).ok());
}

TEST(SignedNoteTest, SignFormatParseVerify) {
  const Ed25519PrivateKey log = KeyFrom('l');
  const Ed25519PrivateKey other = KeyFrom('o');
  SignedNote note{kText, {}};
  note.signatures.push_back(*SignNote(kText, "example.com/log", log));
  note.signatures.push_back(*SignNote(kText, "other", other));
  const std::string formatted = FormatNote(note);
  EXPECT_EQ(formatted.substr(0, sizeof(kText)), std::string(kText) + "\n");
  EXPECT_NE(formatted.find("\n\xe2\x80\x94 example.com/log "),
            std::string::npos);
  absl::StatusOr<SignedNote> parsed = ParseNote(formatted);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->text, kText);
  ASSERT_EQ(parsed->signatures.size(), 2u);
  EXPECT_EQ(FormatNote(*parsed), formatted);

  const std::vector<NoteKey> keys = {*NoteKey::Make(
      "example.com/log", NoteKeyType::kEd25519, log.public_key())};
  absl::StatusOr<std::vector<VerifiedSignature>> verified =
      VerifyNote(*parsed, keys);
  ASSERT_TRUE(verified.ok()) << verified.status();
  ASSERT_EQ(verified->size(), 1u);  // "other" is unknown: ignored
  EXPECT_EQ(verified->at(0).key, &keys[0]);
  // Changed text: the known key's signature fails, and the note with it.
  SignedNote changed = *parsed;
  changed.text = "example.com/log\n6\nAAAA\n";
  EXPECT_EQ(VerifyNote(changed, keys).status().code(),
            absl::StatusCode::kDataLoss);
  // Signed by no known key: verified by none (the caller refuses it).
  SignedNote unknown{kText, {*SignNote(kText, "example.com/log", other)}};
  EXPECT_TRUE(VerifyNote(unknown, keys)->empty());
  // The same signature twice counts once.
  SignedNote twice{kText, {note.signatures[0], note.signatures[0]}};
  EXPECT_EQ(VerifyNote(twice, keys)->size(), 1u);
}

TEST(SignedNoteTest, Cosignatures) {
  const Ed25519PrivateKey witness = KeyFrom('w');
  const std::vector<NoteKey> keys = {*NoteKey::Make(
      "witness.example", NoteKeyType::kCosignatureV1, witness.public_key())};
  SignedNote note{kText,
                  {*Cosign(kText, 1700000000, "witness.example", witness)}};
  EXPECT_EQ(note.signatures[0].signature.size(), 72u);
  absl::StatusOr<std::vector<VerifiedSignature>> verified =
      VerifyNote(*ParseNote(FormatNote(note)), keys);
  ASSERT_TRUE(verified.ok()) << verified.status();
  ASSERT_EQ(verified->size(), 1u);
  EXPECT_EQ(verified->at(0).timestamp, 1700000000u);
  // The signed time is the one the signature carries.
  note.signatures[0].signature[7] ^= 1;
  EXPECT_EQ(VerifyNote(note, keys).status().code(),
            absl::StatusCode::kDataLoss);
  // A plain signature under the witness's name is not a cosignature.
  SignedNote plain{kText, {*SignNote(kText, "witness.example", witness)}};
  EXPECT_TRUE(VerifyNote(plain, keys)->empty());
}

TEST(SignedNoteTest, ParseRefusesWhatIsNotANote) {
  const Ed25519PrivateKey log = KeyFrom('l');
  const std::string good =
      FormatNote({kText, {*SignNote(kText, "example.com/log", log)}});
  ASSERT_TRUE(ParseNote(good).ok());
  const std::string signature_line = good.substr(sizeof(kText));
  for (const std::string& bad : std::vector<std::string>{
           std::string(kText),                           // no signature
           std::string(kText) + "\n",                    // empty block
           good.substr(0, good.size() - 1),              // no final newline
           std::string("a\tb\n\n") + signature_line,     // a control
           std::string("caf\xc3\n\n") + signature_line,  // not UTF-8
           std::string(kText) + "\n- example.com/log AAAAAAAA\n",
           std::string(kText) + "\n\xe2\x80\x94 example.com/log AAAA\n",
           std::string(kText) + "\n\xe2\x80\x94 example.com/log  x\n",
           std::string(kText) + "\n\xe2\x80\x94 a+b AAAAAAA=\n",
       }) {
    EXPECT_FALSE(ParseNote(bad).ok()) << absl::CEscape(bad);
  }
  // Text may hold blank lines: the last one separates the signatures.
  const std::string blank_inside = "a\n\nb\n";
  absl::StatusOr<SignedNote> parsed = ParseNote(FormatNote(
      {blank_inside, {*SignNote(blank_inside, "example.com/log", log)}}));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->text, blank_inside);
  // At most kMaxNoteSignatures.
  SignedNote many{kText, {}};
  for (size_t i = 0; i <= kMaxNoteSignatures; ++i) {
    many.signatures.push_back(*SignNote(kText, absl::StrCat("k", i), log));
  }
  EXPECT_FALSE(ParseNote(FormatNote(many)).ok());
  many.signatures.pop_back();
  EXPECT_TRUE(ParseNote(FormatNote(many)).ok());
}

}  // namespace
}  // namespace verity::tlog
