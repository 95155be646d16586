// ReadStreamVerifier on honest streams: every blob shape and range releases
// exactly the requested bytes; held tree blocks are reused; errors that are not
// the server's fault keep their own codes.

#include "client/sdk/read_stream_verifier.h"

#include <optional>
#include <string>
#include <vector>

#include "client/testing/read_stream_fixture.h"
#include "gtest/gtest.h"
#include "lib/hash/hash.h"

namespace verity::client {
namespace {

using ::absl::StatusCode;
using ::verity::v1::ReadResponse;

// Reads [offset, offset + length) honestly and checks the released bytes.
void ExpectHonestRead(const TestBlob& blob, uint64_t offset,
                      std::optional<uint64_t> length,
                      const StreamShape& shape = {}) {
  const ReplayResult result =
      Replay(blob.digest, offset, length,
             HonestReadStream(blob, offset, length, shape));
  const uint64_t size = length.value_or(blob.data.size() - offset);
  EXPECT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(result.released, blob.data.substr(offset, size));
  EXPECT_EQ(result.verified_end, offset + size);
}

TEST(ReadStreamVerifierTest, WholeBlobsOfEveryShape) {
  struct Case {
    MerkleParams params;
    uint64_t size;
  };
  const std::vector<Case> cases = {
      {TestParams(HashAlgorithm::kSha256, 4096), 0},
      {TestParams(HashAlgorithm::kSha256, 4096), 1},
      {TestParams(HashAlgorithm::kSha256, 4096), 4095},
      {TestParams(HashAlgorithm::kSha256, 4096), 4096},  // one block, no tree
      {TestParams(HashAlgorithm::kSha256, 4096), 4097},
      {TestParams(HashAlgorithm::kSha256, 1024), 1024 * 32 * 32 * 2 + 1},
      {TestParams(HashAlgorithm::kSha512, 1024, "pepper"), 1024 * 8 * 8 + 7},
      {TestParams(HashAlgorithm::kSha512, 4096, std::string(32, 's')), 99999},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "size " << c.size);
    const TestBlob blob = MakeRandomTestBlob(c.size, c.params);
    for (uint64_t per_chunk : {1, 3, 1000000}) {
      StreamShape shape;
      shape.blocks_per_chunk = per_chunk;
      ExpectHonestRead(blob, 0, std::nullopt, shape);
      shape.descriptor_alone = true;
      ExpectHonestRead(blob, 0, std::nullopt, shape);
    }
  }
}

TEST(ReadStreamVerifierTest, UnalignedRangesOfAThreeLevelTree) {
  const TestBlob blob = MakeRandomTestBlob(
      1024 * 32 * 32 * 2 + 1, TestParams(HashAlgorithm::kSha256, 1024));
  const uint64_t size = blob.data.size();
  for (uint64_t offset :
       {uint64_t{0}, uint64_t{1}, uint64_t{1023}, uint64_t{1024},
        uint64_t{5000}, uint64_t{1024 * 32 - 1}, uint64_t{1024 * 32 * 32 + 3},
        size - 1025, size - 1}) {
    for (uint64_t length : {uint64_t{1}, uint64_t{1023}, uint64_t{1024},
                            uint64_t{1025}, uint64_t{70000}}) {
      if (length > size - offset) continue;
      SCOPED_TRACE(::testing::Message() << offset << " +" << length);
      ExpectHonestRead(blob, offset, length);
    }
    ExpectHonestRead(blob, offset, std::nullopt);
  }
}

TEST(ReadStreamVerifierTest, EmptyRangesNeedOnlyTheDescriptor) {
  const TestBlob blob =
      MakeRandomTestBlob(5000, TestParams(HashAlgorithm::kSha256, 4096));
  for (uint64_t offset : {0, 1, 4096, 4999, 5000}) {
    const std::vector<ReadResponse> stream =
        HonestReadStream(blob, offset, uint64_t{0});
    ASSERT_EQ(stream.size(), 1u);
    ExpectHonestRead(blob, offset, uint64_t{0});
  }
  ExpectHonestRead(blob, 5000, std::nullopt);  // to the end, from the end
  const TestBlob empty =
      MakeRandomTestBlob(0, TestParams(HashAlgorithm::kSha256, 4096));
  ExpectHonestRead(empty, 0, std::nullopt);
}

TEST(ReadStreamVerifierTest, RangeOutsideTheBlobIsOutOfRange) {
  const TestBlob blob =
      MakeRandomTestBlob(5000, TestParams(HashAlgorithm::kSha256, 4096));
  const std::vector<ReadResponse> stream =
      HonestReadStream(blob, 0, uint64_t{0});
  EXPECT_EQ(Replay(blob.digest, 5001, std::nullopt, stream).status.code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(Replay(blob.digest, 4000, 1001, stream).status.code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(Replay(blob.digest, 1, UINT64_MAX, stream).status.code(),
            StatusCode::kOutOfRange);
}

TEST(ReadStreamVerifierTest, BlockSizeOverTheLimitIsInvalidArgument) {
  const TestBlob blob =
      MakeRandomTestBlob(5000, TestParams(HashAlgorithm::kSha256, 131072));
  EXPECT_EQ(Replay(blob.digest, 0, std::nullopt,
                   HonestReadStream(blob, 0, std::nullopt))
                .status.code(),
            StatusCode::kInvalidArgument);
}

TEST(ReadStreamVerifierTest, SinkErrorsStopTheStream) {
  const TestBlob blob =
      MakeRandomTestBlob(50000, TestParams(HashAlgorithm::kSha256, 4096));
  const std::vector<ReadResponse> stream =
      HonestReadStream(blob, 0, std::nullopt);
  ReadStreamVerifier verifier(blob.digest, 0, std::nullopt);
  const ByteSink failing = [](absl::Span<const uint8_t>) {
    return absl::ResourceExhaustedError("disk full");
  };
  EXPECT_EQ(verifier.OnResponse(stream[0], failing).code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(verifier.verified_end(), 0u);
  const ByteSink ok = [](absl::Span<const uint8_t>) {
    return absl::OkStatus();
  };
  EXPECT_EQ(verifier.OnResponse(stream[1], ok).code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(verifier.Finish().code(), StatusCode::kResourceExhausted);
}

class HeldTreeTest : public ::testing::Test {
 protected:
  HeldTreeTest()
      : blob_(MakeRandomTestBlob(1024 * 32 * 32 * 2 + 1,
                                 TestParams(HashAlgorithm::kSha256, 1024))) {}

  // Reads [offset, +length) and returns the verified tree it leaves.
  std::shared_ptr<VerifiedTree> ReadOnce(uint64_t offset, uint64_t length) {
    ReadStreamVerifier verifier(blob_.digest, offset, length);
    EXPECT_TRUE(verifier.HeldTreeBlocks().empty());
    EXPECT_FALSE(verifier.HoldsAllTreeBlocks());
    const ReplayResult result =
        Replay(verifier, HonestReadStream(blob_, offset, length));
    EXPECT_TRUE(result.status.ok()) << result.status;
    return verifier.verified_tree();
  }

  TestBlob blob_;
};

TEST_F(HeldTreeTest, ARepeatedReadNeedsNoTreeBlocks) {
  std::shared_ptr<VerifiedTree> tree = ReadOnce(100000, 50000);
  ReadStreamVerifier again(blob_.digest, 100000, 50000);
  ASSERT_TRUE(again.UseVerifiedTree(tree).ok());
  EXPECT_TRUE(again.HoldsAllTreeBlocks());
  StreamShape shape;
  const std::vector<uint64_t> held = again.HeldTreeBlocks();
  shape.have_tree_blocks.insert(held.begin(), held.end());
  const std::vector<ReadResponse> stream =
      HonestReadStream(blob_, 100000, 50000, shape);
  for (const ReadResponse& msg : stream) EXPECT_EQ(msg.tree_blocks_size(), 0);
  const ReplayResult result = Replay(again, stream);
  EXPECT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(result.released, blob_.data.substr(100000, 50000));
}

TEST_F(HeldTreeTest, AnOverlappingReadNeedsOnlyTheNewBlocks) {
  std::shared_ptr<VerifiedTree> tree = ReadOnce(0, 1024 * 40);
  ReadStreamVerifier next(blob_.digest, 1024 * 30, 1024 * 40);
  ASSERT_TRUE(next.UseVerifiedTree(tree).ok());
  EXPECT_FALSE(next.HoldsAllTreeBlocks());
  // The top block, level-1 block 0, level-0 blocks 0 and 1 are held; level-0
  // block 2 is not.
  const std::vector<uint64_t> held = next.HeldTreeBlocks();
  EXPECT_EQ(held.size(), 4u);
  StreamShape shape;
  shape.have_tree_blocks.insert(held.begin(), held.end());
  const ReplayResult result =
      Replay(next, HonestReadStream(blob_, 1024 * 30, 1024 * 40, shape));
  EXPECT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(result.released, blob_.data.substr(1024 * 30, 1024 * 40));
}

TEST_F(HeldTreeTest, ATreeForAnotherDigestIsRefused) {
  const TestBlob other = MakeRandomTestBlob(
      blob_.data.size(), TestParams(HashAlgorithm::kSha256, 1024), 2);
  ReadStreamVerifier verifier(other.digest, 0, std::nullopt);
  EXPECT_EQ(verifier.UseVerifiedTree(ReadOnce(0, 1)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(verifier.UseVerifiedTree(nullptr).code(),
            StatusCode::kInvalidArgument);
}

TEST_F(HeldTreeTest, AHeldTreeDoesNotExcuseALyingDescriptor) {
  std::shared_ptr<VerifiedTree> tree = ReadOnce(0, 1);
  ReadStreamVerifier verifier(blob_.digest, 0, 1);
  ASSERT_TRUE(verifier.UseVerifiedTree(tree).ok());
  std::vector<ReadResponse> stream = HonestReadStream(blob_, 0, 1);
  stream[0].mutable_fsverity_descriptor()->set_data_size(1);
  EXPECT_EQ(Replay(verifier, stream).status.code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace verity::client
