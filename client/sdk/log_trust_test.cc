// LogTrust: a statement is accepted only with a proof of inclusion under a
// checkpoint the log's key signed, consistent with the newest seen; an
// older checkpoint, a fork and an inconsistent tree are refused with their
// evidence kept.

#include "client/sdk/log_trust.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/file_util.h"
#include "lib/testing/fsverity_cli.h"
#include "lib/tlog/log_prover.h"
#include "lib/tlog/log_sequencer.h"
#include "lib/tlog/memory_log_storage.h"

namespace verity::client {
namespace {

constexpr char kOrigin[] = "verityd.example/log";

// A log written by a sequencer over memory, and the proofs a server sends.
class TestLog {
 public:
  explicit TestLog(std::shared_ptr<const Ed25519PrivateKey> key) {
    tlog::SequencerOptions options;
    options.origin = kOrigin;
    options.key = std::move(key);
    options.unique_name = [this] { return absl::StrCat(++names_); };
    sequencer_ = *tlog::LogSequencer::Create(storage_, std::move(options));
  }

  tlog::SignedCheckpoint Append(const std::vector<std::string>& entries) {
    absl::StatusOr<tlog::AppendedBatch> appended = sequencer_->Append(entries);
    EXPECT_TRUE(appended.ok()) << appended.status();
    return {appended->checkpoint, appended->note};
  }

  // What a server answers for entry `index` under `checkpoint`, for a
  // client that saw `seen_size`.
  v1::LogProof Proof(uint64_t index, const std::string& entry,
                     const tlog::SignedCheckpoint& checkpoint,
                     uint64_t seen_size) const {
    const tlog::LogProver prover(storage_);
    v1::LogProof proof;
    proof.set_checkpoint(checkpoint.note);
    proof.set_index(index);
    const absl::StatusOr<std::vector<tlog::LogHash>> inclusion =
        prover.Inclusion(index, entry, checkpoint.checkpoint);
    EXPECT_TRUE(inclusion.ok()) << inclusion.status();
    for (const tlog::LogHash& hash : *inclusion) {
      proof.add_inclusion(tlog::LogHashToBytes(hash));
    }
    if (seen_size != 0 && seen_size < checkpoint.checkpoint.size) {
      proof.set_consistency_from(seen_size);
      const absl::StatusOr<std::vector<tlog::LogHash>> consistency =
          prover.Consistency(seen_size, checkpoint.checkpoint.size,
                             checkpoint.checkpoint);
      EXPECT_TRUE(consistency.ok()) << consistency.status();
      for (const tlog::LogHash& hash : *consistency) {
        proof.add_consistency(tlog::LogHashToBytes(hash));
      }
    }
    return proof;
  }

 private:
  std::shared_ptr<tlog::MemoryLogStorage> storage_ =
      std::make_shared<tlog::MemoryLogStorage>();
  std::unique_ptr<tlog::LogSequencer> sequencer_;
  int names_ = 0;
};

class LogTrustTest : public ::testing::Test {
 protected:
  LogTrust Trust() const {
    return LogTrust(*tlog::NoteKey::Make(kOrigin, tlog::NoteKeyType::kEd25519,
                                         key_->public_key()),
                    dir_);
  }

  // The evidence files kept beside the state file.
  std::vector<std::string> Evidence() const {
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      const std::string name = entry.path().filename();
      if (absl::StrContains(name, ".evidence-")) found.push_back(name);
    }
    return found;
  }

  static void ExpectRefused(const absl::Status& status, absl::string_view why) {
    EXPECT_TRUE(absl::IsDataLoss(status)) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), why)) << status;
  }

  std::shared_ptr<const Ed25519PrivateKey> key_ =
      std::make_shared<Ed25519PrivateKey>(Ed25519PrivateKey::Generate());
  std::string dir_ = FreshTestDir("log_trust") + "/state";
  TestLog log_{key_};
};

TEST_F(LogTrustTest, AcceptsAnIncludedStatementAndRemembersItsCheckpoint) {
  const LogTrust trust = Trust();
  EXPECT_EQ(*trust.SeenSize(), 0u);
  const tlog::SignedCheckpoint first = log_.Append({"a", "b", "c"});
  const v1::LogProof proof = log_.Proof(1, "b", first, 0);
  ASSERT_TRUE(trust.Check("n", "b", &proof).ok());
  EXPECT_EQ(*trust.SeenSize(), 3u);
  // Again at the same size: fine.
  EXPECT_TRUE(trust.Check("n", "b", &proof).ok());

  // A newer checkpoint, proved consistent with the one seen.
  const tlog::SignedCheckpoint second = log_.Append({"d", "e"});
  const v1::LogProof newer = log_.Proof(4, "e", second, 3);
  ASSERT_TRUE(trust.Check("n", "e", &newer).ok());
  EXPECT_EQ(*trust.SeenSize(), 5u);
  EXPECT_TRUE(Evidence().empty());
}

TEST_F(LogTrustTest, RefusesWhatTheLogDoesNotProve) {
  const LogTrust trust = Trust();
  const tlog::SignedCheckpoint checkpoint = log_.Append({"a", "b", "c"});
  v1::LogProof proof = log_.Proof(1, "b", checkpoint, 0);
  ExpectRefused(trust.Check("n", "", &proof), "has no statement");
  ExpectRefused(trust.Check("n", "b", nullptr), "no proof");
  // A validly signed statement that is not in the log: another entry.
  ExpectRefused(trust.Check("n", "x", &proof), "is not entry 1");
  v1::LogProof other_index = proof;
  other_index.set_index(2);
  ExpectRefused(trust.Check("n", "b", &other_index), "is not entry 2");
  // A checkpoint signed by another key (a server's own "log").
  TestLog forged(
      std::make_shared<Ed25519PrivateKey>(Ed25519PrivateKey::Generate()));
  const tlog::SignedCheckpoint theirs = forged.Append({"a", "b", "c"});
  const v1::LogProof unsigned_proof = forged.Proof(1, "b", theirs, 0);
  ExpectRefused(trust.Check("n", "b", &unsigned_proof), "log's key");
  EXPECT_EQ(*trust.SeenSize(), 0u);
}

TEST_F(LogTrustTest, RefusesAnOlderCheckpointAndKeepsIt) {
  const LogTrust trust = Trust();
  const tlog::SignedCheckpoint old = log_.Append({"a", "b"});
  const tlog::SignedCheckpoint now = log_.Append({"c"});
  const v1::LogProof current = log_.Proof(2, "c", now, 0);
  ASSERT_TRUE(trust.Check("n", "c", &current).ok());
  const v1::LogProof rolled_back = log_.Proof(0, "a", old, 0);
  ExpectRefused(trust.Check("n", "a", &rolled_back), "older than the 3");
  ASSERT_EQ(Evidence().size(), 1u);
  const std::string evidence = *ReadTestFile(dir_ + "/" + Evidence()[0]);
  EXPECT_TRUE(absl::StrContains(evidence, old.note));
  EXPECT_TRUE(absl::StrContains(evidence, now.note));
  EXPECT_EQ(*trust.SeenSize(), 3u);
}

TEST_F(LogTrustTest, AForkIsRefusedWithBothCheckpointsAsItsProof) {
  const LogTrust trust = Trust();
  const tlog::SignedCheckpoint mine = log_.Append({"a", "b", "c"});
  const v1::LogProof proof = log_.Proof(0, "a", mine, 0);
  ASSERT_TRUE(trust.Check("n", "a", &proof).ok());
  // The same key signs a second history for one victim: three entries too.
  TestLog split(key_);
  const tlog::SignedCheckpoint theirs = split.Append({"a", "b", "evil"});
  const v1::LogProof forked = split.Proof(2, "evil", theirs, 3);
  const absl::Status status = trust.Check("n", "evil", &forked);
  ExpectRefused(status, "the log forked");
  ASSERT_EQ(Evidence().size(), 1u);
  const std::string evidence = *ReadTestFile(dir_ + "/" + Evidence()[0]);
  EXPECT_TRUE(absl::StrContains(evidence, "a fork"));
  EXPECT_TRUE(absl::StrContains(evidence, mine.note));
  EXPECT_TRUE(absl::StrContains(evidence, theirs.note));
}

TEST_F(LogTrustTest, ALargerTreeThatDoesNotExtendTheSeenOneIsRefused) {
  const LogTrust trust = Trust();
  const tlog::SignedCheckpoint mine = log_.Append({"a", "b", "c"});
  const v1::LogProof proof = log_.Proof(0, "a", mine, 0);
  ASSERT_TRUE(trust.Check("n", "a", &proof).ok());
  TestLog split(key_);
  split.Append({"a", "x", "c"});
  const tlog::SignedCheckpoint theirs = split.Append({"evil"});
  const v1::LogProof forked = split.Proof(3, "evil", theirs, 3);
  ExpectRefused(trust.Check("n", "evil", &forked), "does not extend");
  EXPECT_EQ(Evidence().size(), 1u);
  // No consistency proof at all is no better.
  v1::LogProof bare = forked;
  bare.clear_consistency();
  ExpectRefused(trust.Check("n", "evil", &bare), "does not extend");
  EXPECT_EQ(*trust.SeenSize(), 3u);
}

TEST_F(LogTrustTest, AProofFromAnotherSeenSizeIsAskedAgain) {
  const LogTrust trust = Trust();
  const tlog::SignedCheckpoint first = log_.Append({"a", "b", "c"});
  const v1::LogProof proof = log_.Proof(0, "a", first, 0);
  ASSERT_TRUE(trust.Check("n", "a", &proof).ok());
  const tlog::SignedCheckpoint second = log_.Append({"d"});
  // Asked while nothing was seen: no consistency proof from 3.
  const v1::LogProof stale = log_.Proof(3, "d", second, 0);
  EXPECT_TRUE(absl::IsAborted(trust.Check("n", "d", &stale)));
  EXPECT_TRUE(Evidence().empty());
}

TEST_F(LogTrustTest, ADamagedStateFileIsDataLoss) {
  const LogTrust trust = Trust();
  const tlog::SignedCheckpoint first = log_.Append({"a"});
  const v1::LogProof proof = log_.Proof(0, "a", first, 0);
  ASSERT_TRUE(trust.Check("n", "a", &proof).ok());
  ASSERT_TRUE(ReplaceFileDurably(trust.path() + ".tmp", trust.path(),
                                 "not a checkpoint")
                  .ok());
  EXPECT_TRUE(absl::IsDataLoss(trust.SeenSize().status()));
  EXPECT_TRUE(absl::IsDataLoss(trust.Check("n", "a", &proof)));
}

}  // namespace
}  // namespace verity::client

namespace verity::client {
namespace {

// `checkpoint` with cosignatures by `witnesses` (named w0, w1, ...).
tlog::SignedCheckpoint Cosigned(
    tlog::SignedCheckpoint checkpoint,
    const std::vector<std::shared_ptr<const Ed25519PrivateKey>>& witnesses) {
  tlog::SignedNote note = *tlog::ParseNote(checkpoint.note);
  for (size_t i = 0; i < witnesses.size(); ++i) {
    note.signatures.push_back(*tlog::Cosign(
        note.text, 1700000000, absl::StrCat("w", i), *witnesses[i]));
  }
  checkpoint.note = tlog::FormatNote(note);
  return checkpoint;
}

TEST_F(LogTrustTest, RequiresTheWitnessesCosignatures) {
  std::vector<std::shared_ptr<const Ed25519PrivateKey>> witnesses;
  LogWitnesses required;
  for (int i = 0; i < 2; ++i) {
    witnesses.push_back(
        std::make_shared<Ed25519PrivateKey>(Ed25519PrivateKey::Generate()));
    required.keys.push_back(*tlog::NoteKey::Make(
        absl::StrCat("w", i), tlog::NoteKeyType::kCosignatureV1,
        witnesses.back()->public_key()));
  }
  required.threshold = 2;
  const LogTrust trust(
      *tlog::NoteKey::Make(kOrigin, tlog::NoteKeyType::kEd25519,
                           key_->public_key()),
      dir_, required);
  const tlog::SignedCheckpoint checkpoint = log_.Append({"a", "b"});
  // None, and one of the two required: refused, nothing recorded.
  for (size_t given : {0, 1}) {
    const v1::LogProof proof = log_.Proof(
        1, "b",
        Cosigned(checkpoint, {witnesses.begin(), witnesses.begin() + given}),
        0);
    ExpectRefused(trust.Check("n", "b", &proof),
                  absl::StrCat("cosigned by ", given, " of the 2 witnesses"));
  }
  EXPECT_EQ(*trust.SeenSize(), 0u);
  // A cosignature that does not verify refuses the checkpoint whole.
  v1::LogProof forged = log_.Proof(1, "b", Cosigned(checkpoint, witnesses), 0);
  std::string note = forged.checkpoint();
  note[note.size() - 3] = note[note.size() - 3] == 'A' ? 'B' : 'A';
  forged.set_checkpoint(note);
  EXPECT_TRUE(absl::IsDataLoss(trust.Check("n", "b", &forged)));
  // Both: accepted.
  const v1::LogProof both =
      log_.Proof(1, "b", Cosigned(checkpoint, witnesses), 0);
  EXPECT_TRUE(trust.Check("n", "b", &both).ok());
  EXPECT_EQ(*trust.SeenSize(), 2u);
}

TEST(LogTrustCreateTest, ChecksTheWitnessOptions) {
  const auto key = Ed25519PrivateKey::Generate();
  sdk::ClientOptions options;
  options.state_dir = FreshTestDir("log_trust_create");
  const std::string witness =
      tlog::NoteKey::Make("w", tlog::NoteKeyType::kCosignatureV1,
                          key.public_key())
          ->ToString();
  options.witness_keys = witness;
  // Witnesses without the log's key.
  EXPECT_TRUE(absl::IsInvalidArgument(LogTrust::Create(options).status()));
  options.log_key = tlog::NoteKey::Make(kOrigin, tlog::NoteKeyType::kEd25519,
                                        key.public_key())
                        ->ToString();
  EXPECT_TRUE(LogTrust::Create(options).ok());
  options.witness_threshold = 2;
  EXPECT_TRUE(absl::IsInvalidArgument(LogTrust::Create(options).status()));
  options.witness_threshold = 1;
  // A log's key listed as a witness's, and a key listed twice.
  for (const std::string& keys :
       {options.log_key, absl::StrCat(witness, "\n# again\n", witness)}) {
    options.witness_keys = keys;
    EXPECT_TRUE(absl::IsInvalidArgument(LogTrust::Create(options).status()))
        << keys;
  }
}

}  // namespace
}  // namespace verity::client
