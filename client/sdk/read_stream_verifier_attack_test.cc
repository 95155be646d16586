// ReadStreamVerifier against a lying server: every tampered stream is
// DATA_LOSS, and the sink never receives a byte that differs from the true
// content at its offset.

#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "client/sdk/read_stream_verifier.h"
#include "client/testing/read_stream_fixture.h"
#include "gtest/gtest.h"
#include "lib/hash/hash.h"

namespace verity::client {
namespace {

using ::absl::StatusCode;
using ::verity::v1::ReadResponse;
using Stream = std::vector<ReadResponse>;

class AttackTest : public ::testing::Test {
 protected:
  // 2049 blocks of 1 KiB: three tree levels (32 hashes per block), so every
  // level and both partial and full blocks are exercised.
  AttackTest()
      : blob_(MakeRandomTestBlob(1024 * 32 * 32 * 2 + 1,
                                 TestParams(HashAlgorithm::kSha256, 1024))) {}

  Stream Honest(uint64_t offset, std::optional<uint64_t> length,
                uint64_t blocks_per_chunk = 4) const {
    StreamShape shape;
    shape.blocks_per_chunk = blocks_per_chunk;
    return HonestReadStream(blob_, offset, length, shape);
  }

  // The attack must fail with DATA_LOSS having released only true bytes.
  void ExpectRejected(const Stream& stream, uint64_t offset,
                      std::optional<uint64_t> length,
                      const ParsedDigest* trusted = nullptr) const {
    const ReplayResult result =
        Replay(trusted ? *trusted : blob_.digest, offset, length, stream);
    EXPECT_EQ(result.status.code(), StatusCode::kDataLoss) << result.status;
    ExpectOnlyTrueBytes(result, offset);
  }

  void ExpectOnlyTrueBytes(const ReplayResult& result, uint64_t offset) const {
    EXPECT_EQ(result.released,
              blob_.data.substr(offset, result.released.size()));
    EXPECT_EQ(result.verified_end, offset + result.released.size());
  }

  TestBlob blob_;
};

TEST_F(AttackTest, FlippedDataBitReleasesOnlyTheChunksBefore) {
  Stream stream = Honest(100, 20000);
  stream[2].mutable_data()->at(1024 + 7) ^= 0x10;  // third chunk, 2nd block
  const ReplayResult result = Replay(blob_.digest, 100, 20000, stream);
  EXPECT_EQ(result.status.code(), StatusCode::kDataLoss);
  EXPECT_EQ(result.released, blob_.data.substr(100, 8 * 1024 - 100));
  ExpectOnlyTrueBytes(result, 100);
}

TEST_F(AttackTest, FlippedBitInEachTreeLevel) {
  const Stream honest = Honest(0, std::nullopt);
  // The first message carries the top block (ordinal 0), level-1 block 0
  // (ordinal 1) and level-0 block 0 (ordinal 4).
  ASSERT_GE(honest[0].tree_blocks_size(), 3);
  for (int i = 0; i < 3; ++i) {
    for (size_t at : {size_t{0}, size_t{1023}}) {
      Stream stream = honest;
      stream[0].mutable_tree_blocks(i)->mutable_data()->at(at) ^= 1;
      ExpectRejected(stream, 0, std::nullopt);
    }
  }
}

TEST_F(AttackTest, EveryDescriptorLie) {
  const Stream honest = Honest(0, 5000);
  using D = verity::v1::FsverityDescriptor;
  const std::vector<void (*)(D*)> lies = {
      [](D* d) { d->set_data_size(d->data_size() + 1); },
      [](D* d) { d->set_data_size(d->data_size() - 1); },
      [](D* d) { d->set_data_size(5000); },
      [](D* d) { d->set_salt("x"); },
      [](D* d) { d->set_salt(std::string(33, 'x')); },
      [](D* d) { d->set_hash_algorithm(verity::v1::SHA512); },
      [](D* d) {
        d->set_hash_algorithm(verity::v1::HASH_ALGORITHM_UNSPECIFIED);
      },
      [](D* d) {
        d->set_hash_algorithm(static_cast<verity::v1::HashAlgorithm>(7));
      },
      [](D* d) { d->set_log_block_size(11); },
      [](D* d) { d->set_log_block_size(9); },
      [](D* d) { d->set_log_block_size(300); },
      [](D* d) { (*d->mutable_root_hash())[31] ^= 1; },
      [](D* d) { d->mutable_root_hash()->pop_back(); },
      [](D* d) { d->clear_root_hash(); },
  };
  for (size_t i = 0; i < lies.size(); ++i) {
    SCOPED_TRACE(i);
    Stream stream = honest;
    lies[i](stream[0].mutable_fsverity_descriptor());
    ExpectRejected(stream, 0, 5000);
  }
}

TEST_F(AttackTest, AValidBlobForAnotherDigest) {
  const TestBlob other = MakeRandomTestBlob(
      blob_.data.size(), TestParams(HashAlgorithm::kSha256, 1024), 2);
  Stream stream = HonestReadStream(other, 0, 5000);
  ExpectRejected(stream, 0, 5000);  // names its own digest
  stream[0].set_digest(blob_.digest_text);
  ExpectRejected(stream, 0, 5000);  // claims ours
  // The same content under other parameters also has another digest.
  const TestBlob salted = MakeTestBlob(
      blob_.data, TestParams(HashAlgorithm::kSha256, 1024, "salt"));
  stream = HonestReadStream(salted, 0, 5000);
  stream[0].set_digest(blob_.digest_text);
  ExpectRejected(stream, 0, 5000);
}

TEST_F(AttackTest, LyingSizeWithAConsistentTree) {
  // The true prefix, with a tree of its own: a consistent but different blob.
  const TestBlob prefix = MakeTestBlob(
      blob_.data.substr(0, 3000), TestParams(HashAlgorithm::kSha256, 1024));
  Stream stream = HonestReadStream(prefix, 0, std::nullopt);
  stream[0].set_digest(blob_.digest_text);
  ExpectRejected(stream, 0, std::nullopt);
}

TEST_F(AttackTest, SwappedBlocks) {
  Stream stream = Honest(0, 40 * 1024);
  std::swap(*stream[1].mutable_data(), *stream[2].mutable_data());
  ExpectRejected(stream, 0, 40 * 1024);

  stream = Honest(0, 40 * 1024, /*blocks_per_chunk=*/40);
  std::string& data = *stream[0].mutable_data();
  std::swap_ranges(data.begin(), data.begin() + 1024, data.begin() + 1024);
  ExpectRejected(stream, 0, 40 * 1024);

  // Level-0 blocks 0 and 1, both needed: bytes swapped, then indices swapped.
  stream = Honest(0, 40 * 1024, /*blocks_per_chunk=*/40);
  ASSERT_EQ(stream[0].tree_blocks_size(), 4);
  std::swap(*stream[0].mutable_tree_blocks(2)->mutable_data(),
            *stream[0].mutable_tree_blocks(3)->mutable_data());
  ExpectRejected(stream, 0, 40 * 1024);
  stream = Honest(0, 40 * 1024, /*blocks_per_chunk=*/40);
  const uint64_t index2 = stream[0].tree_blocks(2).index();
  stream[0].mutable_tree_blocks(2)->set_index(stream[0].tree_blocks(3).index());
  stream[0].mutable_tree_blocks(3)->set_index(index2);
  ExpectRejected(stream, 0, 40 * 1024);
}

TEST_F(AttackTest, DroppedDuplicatedReorderedAndTruncatedMessages) {
  const Stream honest = Honest(3000, 30000, /*blocks_per_chunk=*/3);
  ASSERT_GE(honest.size(), 5u);
  for (size_t i = 0; i < honest.size(); ++i) {
    SCOPED_TRACE(i);
    Stream dropped = honest;
    dropped.erase(dropped.begin() + i);
    ExpectRejected(dropped, 3000, 30000);

    Stream duplicated = honest;
    duplicated.insert(duplicated.begin() + i, honest[i]);
    ExpectRejected(duplicated, 3000, 30000);

    Stream truncated(honest.begin(), honest.begin() + i);
    ExpectRejected(truncated, 3000, 30000);

    if (i + 1 < honest.size()) {
      Stream reordered = honest;
      std::swap(reordered[i], reordered[i + 1]);
      ExpectRejected(reordered, 3000, 30000);
    }
  }
}

TEST_F(AttackTest, DuplicatedTreeOnlyMessage) {
  StreamShape shape;
  shape.descriptor_alone = true;
  Stream stream = HonestReadStream(blob_, 0, 5000, shape);
  ReadResponse tree_only;
  *tree_only.mutable_tree_blocks() = stream[1].tree_blocks();
  stream[1].clear_tree_blocks();
  stream.insert(stream.begin() + 1, {tree_only, tree_only});
  ExpectRejected(stream, 0, 5000);
  stream.erase(stream.begin() + 1);  // once: honest
  EXPECT_TRUE(Replay(blob_.digest, 0, 5000, stream).status.ok());
}

// Each tree block in a message of its own, then each data block: the longest
// stream an honest server could send, which the bound must admit.
Stream OneItemPerMessage(const Stream& honest) {
  Stream split = {honest[0]};
  split[0].clear_tree_blocks();
  split[0].clear_data();
  split[0].clear_data_offset();
  for (const ReadResponse& msg : honest) {
    for (const verity::v1::TreeBlock& block : msg.tree_blocks()) {
      split.emplace_back();
      *split.back().add_tree_blocks() = block;
    }
    if (msg.data().empty()) continue;
    split.emplace_back();
    split.back().set_data(msg.data());
    split.back().set_data_offset(msg.data_offset());
  }
  return split;
}

TEST_F(AttackTest, EmptyMessagesBeyondTheAllowance) {
  constexpr int kAllowed = ReadStreamVerifier::kMaxEmptyMessages;
  const Stream honest = OneItemPerMessage(Honest(5000, 2000, 1));
  // 1 descriptor + 3 tree blocks (top, level 1, level 0) + 3 data blocks.
  ASSERT_EQ(honest.size(), 7u);
  Stream stream = honest;
  stream.insert(stream.begin() + 2, kAllowed, ReadResponse());
  EXPECT_TRUE(Replay(blob_.digest, 5000, 2000, stream).status.ok());
  EXPECT_EQ(stream.size(), 1 + 3 + 3 + kAllowed);

  stream.insert(stream.begin() + 5, ReadResponse());
  ExpectRejected(stream, 5000, 2000);
  // Spread out, after some data was released, they count the same.
  stream = honest;
  for (int i = 0; i <= kAllowed; ++i) {
    stream.insert(stream.begin() + 5 + i % 2, ReadResponse());
  }
  const ReplayResult result = Replay(blob_.digest, 5000, 2000, stream);
  EXPECT_EQ(result.status.code(), StatusCode::kDataLoss);
  EXPECT_NE(result.status.message().find("neither tree blocks nor data"),
            std::string::npos)
      << result.status;
  ExpectOnlyTrueBytes(result, 5000);
}

TEST_F(AttackTest, DataBeyondTheRange) {
  // One chunk past the end of the range.
  Stream stream = Honest(0, 8 * 1024);
  Stream longer = Honest(0, 12 * 1024);
  stream.push_back(longer.back());
  ExpectRejected(stream, 0, 8 * 1024);
  EXPECT_NE(Replay(blob_.digest, 0, 8 * 1024, stream)
                .status.message()
                .find("after the range was complete"),
            absl::string_view::npos);
  // A chunk that runs past the block holding the range's last byte.
  ExpectRejected(Honest(0, 6 * 1024, /*blocks_per_chunk=*/8), 0, 1536);
  // Bytes past the end of the blob, in the last block.
  stream = Honest(blob_.data.size() - 10, std::nullopt);
  stream.back().mutable_data()->push_back('\0');
  ExpectRejected(stream, blob_.data.size() - 10, std::nullopt);
  // Data for an empty range.
  stream = Honest(0, 1024);
  stream[0].clear_tree_blocks();
  ExpectRejected(stream, 0, 0);
}

TEST_F(AttackTest, TreeBlockBeforeItsParent) {
  Stream stream = Honest(0, 1024);
  ASSERT_EQ(stream[0].tree_blocks_size(), 3);
  stream[0].mutable_tree_blocks()->SwapElements(0, 1);
  ExpectRejected(stream, 0, 1024);
}

TEST_F(AttackTest, TreeBlockIndexOutsideTheTree) {
  const uint64_t tree_blocks = blob_.tree.tree.size() / 1024;
  for (uint64_t index :
       {tree_blocks, tree_blocks + 1, uint64_t{1} << 60, UINT64_MAX}) {
    Stream stream = Honest(0, 1024);
    stream[0].mutable_tree_blocks(2)->set_index(index);
    ExpectRejected(stream, 0, 1024);
  }
}

TEST_F(AttackTest, TreeBlocksTheRangeDoesNotNeed) {
  // Valid blocks with verified parents, but for data outside the range:
  // level-0 block 1 (ordinal 5) authenticates data blocks 32-63.
  const verity::v1::TreeBlock next = Honest(32 * 1024, 1024)[0].tree_blocks(2);
  ASSERT_EQ(next.index(), 5u);
  Stream stream = Honest(0, 1024);
  *stream[0].add_tree_blocks() = next;
  ExpectRejected(stream, 0, 1024);
  // The same block after the range was complete.
  stream = Honest(0, 1024);
  ReadResponse late;
  *late.add_tree_blocks() = next;
  stream.push_back(late);
  ExpectRejected(stream, 0, 1024);
  // A block far away, whose parent is not verified either.
  stream = Honest(0, 1024);
  *stream[0].add_tree_blocks() = Honest(1024 * 1024, 1024)[0].tree_blocks(2);
  ExpectRejected(stream, 0, 1024);
  // A needed block cut short.
  stream = Honest(0, 1024);
  stream[0].mutable_tree_blocks(2)->mutable_data()->pop_back();
  ExpectRejected(stream, 0, 1024);
}

TEST_F(AttackTest, DataNotBlockAligned) {
  Stream stream = Honest(0, 8 * 1024);
  stream[1].set_data_offset(stream[1].data_offset() + 1);
  ExpectRejected(stream, 0, 8 * 1024);
  // A chunk that ends inside a block, the rest following in the next one.
  stream = Honest(0, 8 * 1024);
  stream[1].set_data(stream[0].data().substr(1000) + stream[1].data());
  stream[0].mutable_data()->resize(1000);
  ExpectRejected(stream, 0, 8 * 1024);
  EXPECT_NE(Replay(blob_.digest, 0, 8 * 1024, stream)
                .status.message()
                .find("does not end on a block"),
            absl::string_view::npos);
  // An empty message that names an offset.
  stream = Honest(0, 8 * 1024);
  ReadResponse empty;
  empty.set_data_offset(4096);
  stream.insert(stream.begin() + 1, empty);
  ExpectRejected(stream, 0, 8 * 1024);
}

TEST_F(AttackTest, FirstMessageMustIdentifyTheBlobLaterOnesMustNot) {
  Stream stream = Honest(0, 8 * 1024);
  stream[0].clear_digest();
  ExpectRejected(stream, 0, 8 * 1024);
  stream = Honest(0, 8 * 1024);
  stream[0].clear_fsverity_descriptor();
  ExpectRejected(stream, 0, 8 * 1024);
  stream = Honest(0, 8 * 1024);
  stream[0].set_digest("sha256:zz");
  ExpectRejected(stream, 0, 8 * 1024);
  stream = Honest(0, 8 * 1024);
  stream[0].set_digest("sha512:" + blob_.digest_text.substr(7) +
                       blob_.digest_text.substr(7));
  ExpectRejected(stream, 0, 8 * 1024);
  // Identical copies later on are refused too.
  stream = Honest(0, 8 * 1024);
  stream[1].set_digest(stream[0].digest());
  ExpectRejected(stream, 0, 8 * 1024);
  stream = Honest(0, 8 * 1024);
  *stream[1].mutable_fsverity_descriptor() = stream[0].fsverity_descriptor();
  ExpectRejected(stream, 0, 8 * 1024);
  ExpectRejected({}, 0, 8 * 1024);  // no message at all
}

TEST_F(AttackTest, ATrustedSha512DigestRefusesTheSha256Blob) {
  const TestBlob sha512 = MakeTestBlob(
      blob_.data, TestParams(HashAlgorithm::kSha512, 1024, "salt"));
  ExpectRejected(Honest(0, 5000), 0, 5000, &sha512.digest);
}

TEST_F(AttackTest, RandomMutationsAreAllCaught) {
  const Stream honest = Honest(5000, 60000, /*blocks_per_chunk=*/5);
  std::mt19937 rng(42);
  for (int round = 0; round < 3000; ++round) {
    Stream stream = honest;
    ReadResponse& msg = stream[rng() % stream.size()];
    switch (rng() % 4) {
      case 0:
        if (msg.data().empty()) continue;
        (*msg.mutable_data())[rng() % msg.data().size()] ^= 1 << (rng() % 8);
        break;
      case 1: {
        if (msg.tree_blocks_size() == 0) continue;
        std::string* block =
            msg.mutable_tree_blocks(rng() % msg.tree_blocks_size())
                ->mutable_data();
        (*block)[rng() % block->size()] ^= 1 << (rng() % 8);
        break;
      }
      case 2: {
        if (msg.tree_blocks_size() == 0) continue;
        auto* block = msg.mutable_tree_blocks(rng() % msg.tree_blocks_size());
        block->set_index(block->index() ^ (uint64_t{1} << (rng() % 64)));
        break;
      }
      case 3:
        msg.set_data_offset(msg.data_offset() ^ (uint64_t{1} << (rng() % 64)));
        break;
    }
    SCOPED_TRACE(round);
    ExpectRejected(stream, 5000, 60000);
  }
}

}  // namespace
}  // namespace verity::client
