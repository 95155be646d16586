// MerkleVerifier against trees made by MerkleBuilder: honest blobs verify;
// every kind of tampering with the descriptor, the tree or the data is
// DATA_LOSS; nothing crashes.

#include "lib/tree/merkle_verifier.h"

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/testing/test_blob.h"
#include "lib/tree/merkle_builder.h"

namespace verity {
namespace {

using ::absl::StatusCode;

}  // namespace

void PrintTo(const TreeBlockId& id, std::ostream* os) {
  *os << "{level " << id.level << ", index " << id.index << "}";
}

namespace {

absl::Status Verify(const TestBlob& blob) {
  return VerifyBlob(blob.tree.descriptor, blob.digest, AsBytes(blob.tree.tree),
                    AsBytes(blob.data));
}

TEST(MerkleVerifierTest, HonestBlobsVerify) {
  for (HashAlgorithm alg : {HashAlgorithm::kSha256, HashAlgorithm::kSha512}) {
    for (uint32_t bs : {1024u, 4096u}) {
      const uint64_t hpb = bs / DigestSize(alg);
      for (uint64_t size : {uint64_t{0}, uint64_t{1}, uint64_t{bs} - 1,
                            uint64_t{bs}, uint64_t{bs} + 1, hpb * bs - 1,
                            hpb * bs, hpb * bs + 1, hpb * hpb * bs + 3}) {
        TestBlob blob = MakeRandomTestBlob(size, TestParams(alg, bs, "salty"));
        EXPECT_TRUE(Verify(blob).ok()) << size << " " << Verify(blob);
      }
    }
  }
}

TEST(MerkleVerifierTest, EveryFlippedTreeByteIsDataLoss) {
  const MerkleParams params = TestParams(HashAlgorithm::kSha256, 1024);
  TestBlob blob =
      MakeRandomTestBlob(1024 * 32 * 32 + 5, params);  // three tree levels
  absl::StatusOr<TreeGeometry> geometry =
      TreeGeometry::Create(params, blob.data.size());
  ASSERT_TRUE(geometry.ok());
  ASSERT_EQ(geometry->num_levels(), 3);
  for (int level = 0; level < geometry->num_levels(); ++level) {
    for (uint64_t at : {geometry->level_offset(level),
                        geometry->level_offset(level) +
                            geometry->level_block_count(level) * 1024 - 1}) {
      TestBlob bad = blob;
      bad.tree.tree[at] ^= 0x01;
      EXPECT_EQ(Verify(bad).code(), StatusCode::kDataLoss)
          << "level " << level << " at " << at;
    }
  }
}

TEST(MerkleVerifierTest, FlippedDataBitsAreDataLoss) {
  TestBlob blob = MakeRandomTestBlob(
      10 * 4096 + 17, TestParams(HashAlgorithm::kSha512, 4096, "s"));
  for (size_t at : {size_t{0}, size_t{4096 * 3 + 100}, blob.data.size() - 1}) {
    TestBlob bad = blob;
    bad.data[at] ^= 0x80;
    absl::Status status = Verify(bad);
    EXPECT_EQ(status.code(), StatusCode::kDataLoss);
    EXPECT_NE(status.message().find(absl::StrCat("offset ", at / 4096 * 4096)),
              absl::string_view::npos)
        << status;
  }
}

TEST(MerkleVerifierTest, SingleBlockBlobVerifiesAgainstTheRoot) {
  TestBlob blob =
      MakeRandomTestBlob(100, TestParams(HashAlgorithm::kSha256, 4096));
  ASSERT_TRUE(blob.tree.tree.empty());
  absl::StatusOr<MerkleVerifier> v =
      MerkleVerifier::Create(blob.tree.descriptor, blob.digest);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->VerifyDataBlock(0, AsBytes(blob.data)).ok());
  std::string bad = blob.data;
  bad[99] ^= 1;
  EXPECT_EQ(v->VerifyDataBlock(0, AsBytes(bad)).code(), StatusCode::kDataLoss);
  // Zero padding is implied, never accepted on the wire.
  EXPECT_EQ(v->VerifyDataBlock(0, AsBytes(blob.data + std::string(3996, '\0')))
                .code(),
            StatusCode::kDataLoss);
}

TEST(MerkleVerifierTest, EmptyBlob) {
  TestBlob blob =
      MakeRandomTestBlob(0, TestParams(HashAlgorithm::kSha256, 4096));
  EXPECT_EQ(blob.tree.descriptor.root_hash, std::string(32, '\0'));
  EXPECT_TRUE(Verify(blob).ok());
  absl::StatusOr<MerkleVerifier> v =
      MerkleVerifier::Create(blob.tree.descriptor, blob.digest);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->VerifyDataBlock(0, {}).code(), StatusCode::kDataLoss);
  EXPECT_EQ(v->MissingTreeBlocks(0, 1).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(MerkleVerifierTest, DescriptorLiesAreDataLoss) {
  TestBlob blob = MakeRandomTestBlob(
      50000, TestParams(HashAlgorithm::kSha256, 4096, "abc"));
  auto create = [&](const Descriptor& d) {
    return MerkleVerifier::Create(d, blob.digest);
  };
  Descriptor d = blob.tree.descriptor;
  d.data_size += 1;
  EXPECT_EQ(create(d).status().code(), StatusCode::kDataLoss);
  d = blob.tree.descriptor;
  d.salt = "abd";
  EXPECT_EQ(create(d).status().code(), StatusCode::kDataLoss);
  d = blob.tree.descriptor;
  d.log_block_size = 10;
  EXPECT_EQ(create(d).status().code(), StatusCode::kDataLoss);
  d = blob.tree.descriptor;
  d.root_hash[0] ^= 1;
  EXPECT_EQ(create(d).status().code(), StatusCode::kDataLoss);
  d = blob.tree.descriptor;
  d.root_hash.resize(31);
  EXPECT_EQ(create(d).status().code(), StatusCode::kDataLoss);
  d = blob.tree.descriptor;
  d.hash_algorithm = HashAlgorithm::kSha512;
  EXPECT_EQ(create(d).status().code(), StatusCode::kDataLoss);
  d = blob.tree.descriptor;
  d.salt = std::string(33, 'x');
  EXPECT_EQ(create(d).status().code(), StatusCode::kDataLoss);
  // A valid blob, but not the one the caller trusts.
  TestBlob other = MakeRandomTestBlob(
      50000, TestParams(HashAlgorithm::kSha256, 4096, "abc"), /*seed=*/2);
  EXPECT_EQ(create(other.tree.descriptor).status().code(),
            StatusCode::kDataLoss);
}

TEST(MerkleVerifierTest, MalformedTrustedDigestIsInvalidArgument) {
  TestBlob blob =
      MakeRandomTestBlob(5000, TestParams(HashAlgorithm::kSha256, 4096));
  ParsedDigest digest = blob.digest;
  digest.digest.pop_back();
  EXPECT_EQ(
      MerkleVerifier::Create(blob.tree.descriptor, digest).status().code(),
      StatusCode::kInvalidArgument);
}

TEST(MerkleVerifierTest, BlockSizeOverTheLimitIsRefusedBeforeAnyWork) {
  TestBlob blob =
      MakeRandomTestBlob(5000, TestParams(HashAlgorithm::kSha256, 131072));
  EXPECT_EQ(
      MerkleVerifier::Create(blob.tree.descriptor, blob.digest).status().code(),
      StatusCode::kInvalidArgument);
  VerifierOptions options;
  options.max_block_size = 131072;
  EXPECT_TRUE(
      MerkleVerifier::Create(blob.tree.descriptor, blob.digest, options).ok());
}

TEST(MerkleVerifierTest, TruncatedOrExtendedTreeIsDataLoss) {
  TestBlob blob =
      MakeRandomTestBlob(300000, TestParams(HashAlgorithm::kSha256, 4096));
  TestBlob bad = blob;
  bad.tree.tree.resize(bad.tree.tree.size() - 4096);
  EXPECT_EQ(Verify(bad).code(), StatusCode::kDataLoss);
  bad = blob;
  bad.tree.tree.push_back('\0');
  EXPECT_EQ(Verify(bad).code(), StatusCode::kDataLoss);
  bad = blob;
  bad.data.pop_back();
  EXPECT_EQ(Verify(bad).code(), StatusCode::kDataLoss);
}

class IncrementalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    params_ = TestParams(HashAlgorithm::kSha256, 1024);
    blob_ =
        MakeRandomTestBlob(1024 * 32 * 32 * 2 + 1,
                           params_);  // three levels, two top-level children
    absl::StatusOr<MerkleVerifier> v =
        MerkleVerifier::Create(blob_.tree.descriptor, blob_.digest);
    ASSERT_TRUE(v.ok()) << v.status();
    verifier_.emplace(*std::move(v));
  }

  absl::Span<const uint8_t> TreeBlock(TreeBlockId id) const {
    const TreeGeometry& g = verifier_->geometry();
    return AsBytes(blob_.tree.tree)
        .subspan(g.level_offset(id.level) + id.index * 1024, 1024);
  }

  absl::Span<const uint8_t> DataBlock(uint64_t index) const {
    return AsBytes(blob_.data).subspan(index * 1024, 1024);
  }

  MerkleParams params_;
  TestBlob blob_;
  std::optional<MerkleVerifier> verifier_;
};

TEST_F(IncrementalTest, MissingBlocksComeTopDownAndShrinkAsTheyAreAdded) {
  absl::StatusOr<std::vector<TreeBlockId>> missing =
      verifier_->MissingTreeBlocks(1000, 1030);
  ASSERT_TRUE(missing.ok());
  // Data blocks 1000..1029 hang off level-0 blocks 31 and 32, and those off
  // level-1 blocks 0 and 1 (32 hashes per block).
  const std::vector<TreeBlockId> want = {
      {2, 0}, {1, 0}, {1, 1}, {0, 31}, {0, 32}};
  EXPECT_EQ(*missing, want);
  for (const TreeBlockId& id : *missing) {
    ASSERT_TRUE(verifier_->AddTreeBlock(id, TreeBlock(id)).ok());
  }
  EXPECT_TRUE(verifier_->MissingTreeBlocks(1000, 1030)->empty());
  EXPECT_EQ(*verifier_->MissingTreeBlocks(1024 * 2 - 1, 1024 * 2 + 1),
            (std::vector<TreeBlockId>{{1, 2}, {0, 63}, {0, 64}}));
  for (uint64_t i = 1000; i < 1030; ++i) {
    EXPECT_TRUE(verifier_->VerifyDataBlock(i, DataBlock(i)).ok()) << i;
  }
  EXPECT_TRUE(verifier_
                  ->VerifyDataBlocks(
                      1000, AsBytes(blob_.data).subspan(1000 * 1024, 30 * 1024))
                  .ok());
}

// Data in pieces (as a gRPC message's slices) verifies as in one piece, and a
// flipped byte in any piece, a block spanning two of them included, is
// DATA_LOSS naming its block.
TEST_F(IncrementalTest, DataInPiecesVerifiesAndEveryFlipIsCaught) {
  const absl::StatusOr<std::vector<TreeBlockId>> missing =
      verifier_->MissingTreeBlocks(0, 20);
  ASSERT_TRUE(missing.ok());
  for (const TreeBlockId& id : *missing) {
    ASSERT_TRUE(verifier_->AddTreeBlock(id, TreeBlock(id)).ok());
  }
  std::string data = blob_.data.substr(0, 20 * 1024);
  const auto pieces_of = [&data] {
    const absl::Span<const uint8_t> bytes = AsBytes(data);
    return std::vector<ByteChain::Piece>{
        bytes.subspan(0, 5000), bytes.subspan(5000, 0),
        bytes.subspan(5000, 7000), bytes.subspan(12000)};
  };
  std::vector<ByteChain::Piece> pieces = pieces_of();
  EXPECT_TRUE(verifier_->VerifyDataBlocks(0, ByteChain(pieces)).ok());
  for (size_t at : {size_t{0}, size_t{4999}, size_t{5000}, size_t{11999},
                    size_t{12000}, data.size() - 1}) {
    data[at] ^= 1;
    pieces = pieces_of();
    const absl::Status status =
        verifier_->VerifyDataBlocks(0, ByteChain(pieces));
    EXPECT_EQ(status.code(), StatusCode::kDataLoss) << at;
    EXPECT_NE(status.message().find(absl::StrCat("data block ", at / 1024)),
              std::string::npos)
        << status.message();
    data[at] ^= 1;
  }
}

TEST_F(IncrementalTest, ChildBeforeParentIsDataLoss) {
  EXPECT_EQ(verifier_->AddTreeBlock({1, 0}, TreeBlock({1, 0})).code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(verifier_->VerifyDataBlock(0, DataBlock(0)).code(),
            StatusCode::kDataLoss);
}

TEST_F(IncrementalTest, MisplacedAndMisshapenBlocksAreDataLoss) {
  ASSERT_TRUE(verifier_->AddTreeBlock({2, 0}, TreeBlock({2, 0})).ok());
  // The right bytes in the wrong place.
  EXPECT_EQ(verifier_->AddTreeBlock({1, 1}, TreeBlock({1, 0})).code(),
            StatusCode::kDataLoss);
  ASSERT_TRUE(verifier_->AddTreeBlock({1, 0}, TreeBlock({1, 0})).ok());
  ASSERT_TRUE(verifier_->AddTreeBlock({0, 0}, TreeBlock({0, 0})).ok());
  EXPECT_EQ(verifier_->VerifyDataBlock(1, DataBlock(0)).code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(verifier_->AddTreeBlock({3, 0}, TreeBlock({2, 0})).code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(verifier_->AddTreeBlock({-1, 0}, TreeBlock({2, 0})).code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(verifier_->AddTreeBlock({0, 1u << 20}, TreeBlock({2, 0})).code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(
      verifier_->AddTreeBlock({1, 1}, TreeBlock({1, 1}).first(1023)).code(),
      StatusCode::kDataLoss);
  EXPECT_EQ(verifier_->VerifyDataBlock(0, DataBlock(0).first(1000)).code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(verifier_->VerifyDataBlock(uint64_t{1} << 62, DataBlock(0)).code(),
            StatusCode::kDataLoss);
  // A verified block can be offered again, but only with the same bytes.
  EXPECT_TRUE(verifier_->AddTreeBlock({1, 0}, TreeBlock({1, 0})).ok());
  std::string changed(TreeBlock({1, 0}).begin(), TreeBlock({1, 0}).end());
  changed[5] ^= 1;
  EXPECT_EQ(verifier_->AddTreeBlock({1, 0}, AsBytes(changed)).code(),
            StatusCode::kDataLoss);
  EXPECT_TRUE(verifier_->VerifiedTreeBlock({1, 0}).ok());
  EXPECT_EQ(verifier_->VerifiedTreeBlock({1, 1}).status().code(),
            StatusCode::kNotFound);
}

// Random garbage in every input must produce an error, never a crash or an
// acceptance.
TEST(MerkleVerifierTest, RandomGarbageNeverVerifies) {
  TestBlob blob =
      MakeRandomTestBlob(70000, TestParams(HashAlgorithm::kSha256, 1024));
  absl::StatusOr<MerkleVerifier> v =
      MerkleVerifier::Create(blob.tree.descriptor, blob.digest);
  ASSERT_TRUE(v.ok());
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const std::string junk =
        RandomBytes(rng() % 2100, static_cast<uint32_t>(rng()));
    const TreeBlockId id{static_cast<int>(rng() % 5) - 1, rng() % 100};
    EXPECT_FALSE(v->AddTreeBlock(id, AsBytes(junk)).ok());
    EXPECT_FALSE(v->VerifyDataBlock(rng() % 100, AsBytes(junk)).ok());
    Descriptor d = blob.tree.descriptor;
    d.log_block_size = static_cast<uint8_t>(rng());
    d.data_size = rng();
    d.salt = junk.substr(0, rng() % 40);
    EXPECT_FALSE(MerkleVerifier::Create(d, blob.digest).ok());
  }
}

}  // namespace
}  // namespace verity
