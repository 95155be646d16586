// OpenCheckpoint: only a note signed by the log's key over a checkpoint of
// that log opens.

#include "lib/tlog/signed_checkpoint.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/trust/ed25519_key.h"

namespace verity::tlog {
namespace {

constexpr char kOrigin[] = "verityd.example/log";

class SignedCheckpointTest : public ::testing::Test {
 protected:
  std::string Signed(const std::string& text,
                     const Ed25519PrivateKey& key) const {
    absl::StatusOr<NoteSignature> signature = SignNote(text, kOrigin, key);
    EXPECT_TRUE(signature.ok());
    return FormatNote(SignedNote{text, {*signature}});
  }

  NoteKey KeyOf(const Ed25519PrivateKey& key) const {
    return *NoteKey::Make(kOrigin, NoteKeyType::kEd25519, key.public_key());
  }

  void ExpectRefused(const std::string& note, absl::string_view why) const {
    const absl::Status status = OpenCheckpoint(note, KeyOf(key_)).status();
    EXPECT_TRUE(absl::IsDataLoss(status)) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), why)) << status;
  }

  const Ed25519PrivateKey key_ = Ed25519PrivateKey::Generate();
  const std::string text_ = Checkpoint{kOrigin, 42, LeafHash("x"), {}}.ToText();
};

TEST_F(SignedCheckpointTest, OpensTheLogsCheckpoint) {
  const std::string note = Signed(text_, key_);
  absl::StatusOr<SignedCheckpoint> opened = OpenCheckpoint(note, KeyOf(key_));
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(opened->checkpoint.size, 42u);
  EXPECT_EQ(opened->checkpoint.root, LeafHash("x"));
  EXPECT_EQ(opened->note, note);
}

TEST_F(SignedCheckpointTest, RefusesWhatTheLogsKeyDidNotSign) {
  ExpectRefused(Signed(text_, Ed25519PrivateKey::Generate()),
                "not signed by the log's key");
  std::string changed = Signed(text_, key_);
  changed[changed.find("42")] = '4';
  changed[changed.find("42") + 1] = '3';
  ExpectRefused(changed, "");
  ExpectRefused("not a note", "");
  ExpectRefused(Signed("verityd.example/log\nnot a size\nx\n", key_),
                "not a checkpoint");
  ExpectRefused(
      Signed(Checkpoint{"other/log", 1, LeafHash("x"), {}}.ToText(), key_),
      "origin");
}

}  // namespace
}  // namespace verity::tlog
