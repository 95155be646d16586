// The witness cosigns a log's first checkpoint and then only checkpoints
// that a consistency proof shows extend the one it kept; a stale "old" is
// 409 with its size, a fork or a bad proof 422 (the fork kept as evidence),
// another key's note 403, another log 404, a malformed request 400.

#include "client/witness/witness.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/tlog/log_prover.h"
#include "lib/tlog/log_sequencer.h"
#include "lib/tlog/memory_log_storage.h"
#include "lib/tlog/witness_protocol.h"

namespace verity::client {
namespace {

constexpr char kOrigin[] = "verityd.example/log";

// A log a sequencer writes over memory, with its consistency proofs.
struct TestLog {
  TestLog(std::shared_ptr<const Ed25519PrivateKey> key, std::string origin) {
    tlog::SequencerOptions options;
    options.origin = std::move(origin);
    options.key = std::move(key);
    options.unique_name = [this] { return absl::StrCat(++names); };
    sequencer = *tlog::LogSequencer::Create(storage, std::move(options));
  }
  tlog::SignedCheckpoint Append(absl::string_view tag, int n) {
    std::vector<std::string> entries;
    for (int i = 0; i < n; ++i) entries.push_back(absl::StrCat(tag, i));
    absl::StatusOr<tlog::AppendedBatch> appended = sequencer->Append(entries);
    EXPECT_TRUE(appended.ok()) << appended.status();
    return {appended->checkpoint, appended->note};
  }
  // The request for `to`, from `old_size`.
  std::string Request(uint64_t old_size, const tlog::SignedCheckpoint& to) {
    tlog::AddCheckpointRequest request{old_size, {}, to.note};
    if (old_size != 0 && old_size < to.checkpoint.size) {
      request.proof = *tlog::LogProver(storage).Consistency(
          old_size, to.checkpoint.size, to.checkpoint);
    }
    return tlog::FormatAddCheckpoint(request);
  }

  std::shared_ptr<tlog::MemoryLogStorage> storage =
      std::make_shared<tlog::MemoryLogStorage>();
  int names = 0;
  std::unique_ptr<tlog::LogSequencer> sequencer;
};

class WitnessTest : public ::testing::Test {
 protected:
  std::unique_ptr<Witness> NewWitness() {
    absl::StatusOr<std::unique_ptr<Witness>> witness = Witness::Create(
        *tlog::NoteKey::Make(kOrigin, tlog::NoteKeyType::kEd25519,
                             log_key_->public_key()),
        "witness.example", witness_key_, dir_);
    EXPECT_TRUE(witness.ok()) << witness.status();
    return *std::move(witness);
  }
  // That `answer` is a cosignature of `checkpoint` by the witness.
  void ExpectCosigned(const WitnessAnswer& answer,
                      const tlog::SignedCheckpoint& checkpoint,
                      const Witness& witness) {
    ASSERT_EQ(answer.http_status, 200) << answer.body;
    EXPECT_TRUE(tlog::OpenCosignatures(checkpoint.checkpoint.ToText(),
                                       answer.body, witness.verifier_key())
                    .ok());
    EXPECT_EQ((*witness.Kept())->note, checkpoint.note);
  }

  const std::string dir_ = absl::StrCat(
      ::testing::TempDir(), "/witness-",
      ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::shared_ptr<const Ed25519PrivateKey> log_key_ =
      std::make_shared<const Ed25519PrivateKey>(Ed25519PrivateKey::Generate());
  std::shared_ptr<const Ed25519PrivateKey> witness_key_ =
      std::make_shared<const Ed25519PrivateKey>(Ed25519PrivateKey::Generate());
  TestLog log_{log_key_, kOrigin};
};

TEST_F(WitnessTest, CosignsOnlyCheckpointsThatExtendTheOneKept) {
  std::unique_ptr<Witness> witness = NewWitness();
  const tlog::SignedCheckpoint first = log_.Append("a", 3);
  ExpectCosigned(witness->AddCheckpoint(log_.Request(0, first)), first,
                 *witness);
  const tlog::SignedCheckpoint second = log_.Append("b", 300);
  ExpectCosigned(witness->AddCheckpoint(log_.Request(3, second)), second,
                 *witness);
  // The same checkpoint again is cosigned again.
  ExpectCosigned(witness->AddCheckpoint(log_.Request(303, second)), second,
                 *witness);

  // A request from a size the witness is not at: 409 with its size, as
  // text/x.tlog.size, from this witness and from one restarted on its state.
  const tlog::SignedCheckpoint third = log_.Append("c", 5);
  for (const std::unique_ptr<Witness>& w : {std::move(witness), NewWitness()}) {
    const WitnessAnswer stale = w->AddCheckpoint(log_.Request(3, third));
    EXPECT_EQ(stale.http_status, 409);
    EXPECT_EQ(stale.content_type, "text/x.tlog.size");
    EXPECT_EQ(*tlog::ParseWitnessSize(stale.body), 303u);
  }
}

TEST_F(WitnessTest, RefusesAnInconsistentCheckpointAndKeepsTheFork) {
  std::unique_ptr<Witness> witness = NewWitness();
  const tlog::SignedCheckpoint kept = log_.Append("a", 10);
  ASSERT_EQ(witness->AddCheckpoint(log_.Request(0, kept)).http_status, 200);

  // The same key signs another history: a fork of the same size, and a
  // larger tree with its own proof from 10, which cannot prove the kept root.
  TestLog fork(log_key_, kOrigin);
  const tlog::SignedCheckpoint forked = fork.Append("z", 10);
  const WitnessAnswer same_size =
      witness->AddCheckpoint(fork.Request(10, forked));
  EXPECT_EQ(same_size.http_status, 422) << same_size.body;
  EXPECT_NE(same_size.body.find("forked"), std::string::npos) << same_size.body;
  const tlog::SignedCheckpoint grown = fork.Append("y", 7);
  EXPECT_EQ(witness->AddCheckpoint(fork.Request(10, grown)).http_status, 422);
  // A proof with a hash changed is no proof either.
  const tlog::SignedCheckpoint next = log_.Append("b", 7);
  tlog::AddCheckpointRequest bad =
      *tlog::ParseAddCheckpoint(log_.Request(10, next));
  ASSERT_FALSE(bad.proof.empty());
  bad.proof[0][0] ^= 1;
  EXPECT_EQ(witness->AddCheckpoint(tlog::FormatAddCheckpoint(bad)).http_status,
            422);
  EXPECT_EQ((*witness->Kept())->note, kept.note);
  int evidence = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    evidence += entry.path().string().find(".evidence-") != std::string::npos;
  }
  EXPECT_GE(evidence, 2);
  // The honest log goes on.
  ExpectCosigned(witness->AddCheckpoint(log_.Request(10, next)), next,
                 *witness);
}

TEST_F(WitnessTest, RefusesOtherLogsOtherKeysAndMalformedRequests) {
  std::unique_ptr<Witness> witness = NewWitness();
  TestLog other_log(log_key_, "other.example/log");
  EXPECT_EQ(
      witness->AddCheckpoint(other_log.Request(0, other_log.Append("a", 1)))
          .http_status,
      404);
  TestLog other_key(
      std::make_shared<const Ed25519PrivateKey>(Ed25519PrivateKey::Generate()),
      kOrigin);
  EXPECT_EQ(
      witness->AddCheckpoint(other_key.Request(0, other_key.Append("a", 1)))
          .http_status,
      403);
  const tlog::SignedCheckpoint checkpoint = log_.Append("a", 2);
  for (const std::string& body :
       {std::string("hello"), absl::StrCat("old 3\n\n", checkpoint.note),
        std::string("old 0\n\nnot a note\n"),
        std::string("old 0\n\nnot\na\ncheckpoint\n\n\xe2\x80\x94 x AAAA\n")}) {
    EXPECT_EQ(witness->AddCheckpoint(body).http_status, 400) << body;
  }
  EXPECT_FALSE(witness->Kept()->has_value());
}

TEST_F(WitnessTest, RefusesToStartOnAStateItCannotTrust) {
  const auto create = [this](const std::string& dir) {
    return Witness::Create(
               *tlog::NoteKey::Make(kOrigin, tlog::NoteKeyType::kEd25519,
                                    log_key_->public_key()),
               "witness.example", witness_key_, dir)
        .status();
  };
  // Others may write it: they could plant the checkpoint it keeps.
  ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
  ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
  absl::Status refused = create(dir_);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused)) << refused;
  EXPECT_TRUE(absl::StrContains(refused.message(), "writable")) << refused;
  // Its own, with a kept checkpoint that does not open: damaged.
  ASSERT_EQ(chmod(dir_.c_str(), 0700), 0);
  std::unique_ptr<Witness> witness = NewWitness();
  const tlog::SignedCheckpoint first = log_.Append("a", 1);
  ExpectCosigned(witness->AddCheckpoint(log_.Request(0, first)), first,
                 *witness);
  witness.reset();
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    if (entry.path().extension() == ".checkpoint") {
      std::ofstream(entry.path()) << "not a checkpoint\n";
    }
  }
  refused = create(dir_);
  EXPECT_TRUE(absl::IsDataLoss(refused)) << refused;
}

}  // namespace
}  // namespace verity::client
