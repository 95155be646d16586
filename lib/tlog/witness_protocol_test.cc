// tlog-witness requests round trip and refuse what C2SP does not allow; a
// witness's answer yields only its own verified cosignatures.

#include "lib/tlog/witness_protocol.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace verity::tlog {
namespace {

constexpr char kCheckpoint[] = "example.com/log\n5\nAAAA\n";

LogHash HashOf(char c) {
  LogHash hash;
  hash.fill(static_cast<uint8_t>(c));
  return hash;
}

TEST(WitnessProtocolTest, RequestsRoundTrip) {
  AddCheckpointRequest request;
  request.old_size = 3;
  request.proof = {HashOf('a'), HashOf('b')};
  request.checkpoint = "the note\n\n\xe2\x80\x94 log sig\n";
  const std::string body = FormatAddCheckpoint(request);
  EXPECT_EQ(body.substr(0, 6), "old 3\n");
  absl::StatusOr<AddCheckpointRequest> parsed = ParseAddCheckpoint(body);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->old_size, 3u);
  EXPECT_EQ(parsed->proof, request.proof);
  EXPECT_EQ(parsed->checkpoint, request.checkpoint);

  absl::StatusOr<AddCheckpointRequest> first =
      ParseAddCheckpoint("old 0\n\nnote\n\nsig\n");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->proof.empty());
  EXPECT_EQ(first->checkpoint, "note\n\nsig\n");
}

TEST(WitnessProtocolTest, MalformedRequestsAreInvalid) {
  const std::string hash = LogHashToBase64(HashOf('a'));
  for (const std::string& body :
       {std::string("old 3\nnote"), std::string("new 3\n\nnote\n"),
        std::string("old 03\n\nnote\n"), std::string("old -1\n\nnote\n"),
        std::string("old +1\n\nnote\n"), std::string("old 1x\n\nnote\n"),
        absl::StrCat("old 0\n", hash, "\n\nnote\n"),
        std::string("old 2\nnot base64\n\nnote\n"),
        std::string(kMaxAddCheckpointSize + 1, 'x')}) {
    EXPECT_TRUE(absl::IsInvalidArgument(ParseAddCheckpoint(body).status()))
        << body.substr(0, 40);
  }
  std::string long_proof = "old 5\n";
  for (size_t i = 0; i <= kMaxConsistencyHashes; ++i) {
    absl::StrAppend(&long_proof, hash, "\n");
  }
  EXPECT_TRUE(absl::IsInvalidArgument(
      ParseAddCheckpoint(absl::StrCat(long_proof, "\nnote\n")).status()));
}

TEST(WitnessProtocolTest, SizesRoundTrip) {
  EXPECT_EQ(FormatWitnessSize(42), "42\n");
  EXPECT_EQ(*ParseWitnessSize("42\n"), 42u);
  EXPECT_EQ(*ParseWitnessSize("0\n"), 0u);
  for (absl::string_view bad : {"42", "", "\n", "042\n", "4 2\n", "-1\n"}) {
    EXPECT_FALSE(ParseWitnessSize(bad).ok()) << bad;
  }
}

TEST(WitnessProtocolTest, OpensOnlyTheWitnessesOwnVerifiedCosignatures) {
  const Ed25519PrivateKey key =
      *Ed25519PrivateKey::FromSeed(std::string(32, 'w'));
  const Ed25519PrivateKey other =
      *Ed25519PrivateKey::FromSeed(std::string(32, 'o'));
  const NoteKey witness = *NoteKey::Make(
      "w.example", NoteKeyType::kCosignatureV1, key.public_key());
  const NoteSignature mine = *Cosign(kCheckpoint, 1700000000, "w.example", key);
  const NoteSignature theirs =
      *Cosign(kCheckpoint, 1700000000, "o.example", other);
  // The answer's lines, as FormatNote writes them after the text.
  auto lines = [](std::vector<NoteSignature> signatures) {
    return FormatNote({kCheckpoint, std::move(signatures)})
        .substr(sizeof(kCheckpoint));
  };
  absl::StatusOr<std::vector<NoteSignature>> opened =
      OpenCosignatures(kCheckpoint, lines({theirs, mine}), witness);
  ASSERT_TRUE(opened.ok()) << opened.status();
  ASSERT_EQ(opened->size(), 1u);
  EXPECT_EQ((*opened)[0].signature, mine.signature);

  // Another witness's alone, a cosignature over another checkpoint, and
  // text that is not signature lines are refused.
  EXPECT_TRUE(absl::IsDataLoss(
      OpenCosignatures(kCheckpoint, lines({theirs}), witness).status()));
  const NoteSignature elsewhere =
      *Cosign("example.com/log\n6\nAAAA\n", 1700000000, "w.example", key);
  EXPECT_TRUE(absl::IsDataLoss(
      OpenCosignatures(kCheckpoint, lines({elsewhere}), witness).status()));
  EXPECT_TRUE(absl::IsDataLoss(
      OpenCosignatures(kCheckpoint, "hello\n", witness).status()));
}

}  // namespace
}  // namespace verity::tlog
