#include "lib/base/byte_chain.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace verity {
namespace {

ByteChain::Piece Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(ByteChainTest, SizeAndBytesOfAllPieces) {
  const std::string a = "hello", b = "", c = " world";
  const ByteChain::Piece pieces[] = {Bytes(a), Bytes(b), Bytes(c)};
  const ByteChain chain(pieces);
  EXPECT_EQ(chain.size(), 11u);
  EXPECT_FALSE(chain.empty());
  EXPECT_EQ(chain.ToString(), "hello world");
}

TEST(ByteChainTest, EverySubRangeMatchesTheJoinedBytes) {
  const std::string a = "abc", b = "", c = "defgh", d = "i";
  const ByteChain::Piece pieces[] = {Bytes(a), Bytes(b), Bytes(c), Bytes(d)};
  const ByteChain chain(pieces);
  const std::string joined = "abcdefghi";
  for (size_t offset = 0; offset <= joined.size(); ++offset) {
    for (size_t length = 0; offset + length <= joined.size(); ++length) {
      const ByteChain sub = chain.Sub(offset, length);
      EXPECT_EQ(sub.size(), length);
      EXPECT_EQ(sub.ToString(), joined.substr(offset, length))
          << offset << "+" << length;
      // A range of a range.
      for (size_t inner = 0; inner <= length; ++inner) {
        EXPECT_EQ(sub.Sub(inner, length - inner).ToString(),
                  joined.substr(offset + inner, length - inner));
      }
    }
  }
}

TEST(ByteChainTest, VisitsNonEmptyPartsInOrderAndStops) {
  const std::string a = "ab", b = "", c = "cd", d = "ef";
  const ByteChain::Piece pieces[] = {Bytes(a), Bytes(b), Bytes(c), Bytes(d)};
  std::vector<std::string> seen;
  const auto record = [&seen](ByteChain::Piece part) {
    seen.emplace_back(reinterpret_cast<const char*>(part.data()), part.size());
    return seen.size() < 2;
  };
  EXPECT_FALSE(ByteChain(pieces).Sub(1, 4).ForEachPiece(record));
  EXPECT_EQ(seen, (std::vector<std::string>{"b", "cd"}));
  seen.clear();
  EXPECT_TRUE(ByteChain(pieces).Sub(3, 1).ForEachPiece(record));
  EXPECT_EQ(seen, (std::vector<std::string>{"d"}));
}

TEST(ByteChainTest, CopiesOutFromAnOffsetUntilEitherEnds) {
  const std::string a = "abc", b = "", c = "defg";
  const ByteChain::Piece pieces[] = {Bytes(a), Bytes(b), Bytes(c)};
  const ByteChain chain(pieces);
  uint8_t out[4] = {};
  EXPECT_EQ(chain.CopyOut(2, absl::MakeSpan(out)), 4u);
  EXPECT_EQ(std::string(out, out + 4), "cdef");
  EXPECT_EQ(chain.CopyOut(5, absl::MakeSpan(out)), 2u);
  EXPECT_EQ(std::string(out, out + 2), "fg");
  EXPECT_EQ(chain.CopyOut(7, absl::MakeSpan(out)), 0u);
}

// Peek, Skip and Read from every position, through empty pieces.
TEST(ByteChainTest, ReadersWalkTheBytesInRuns) {
  const std::string a = "", b = "abc", c = "", d = "defgh", e = "i";
  const ByteChain::Piece pieces[] = {Bytes(a), Bytes(b), Bytes(c), Bytes(d),
                                     Bytes(e)};
  const std::string joined = "abcdefghi";
  // Where the piece holding byte `at` ends: a run never goes past it.
  const auto run = [&joined](size_t at) {
    const size_t end = at < 3 ? 3 : at < 8 ? 8 : 9;
    return joined.substr(at, end - at);
  };
  const auto text = [](ByteChain::Piece piece) {
    return std::string(reinterpret_cast<const char*>(piece.data()),
                       piece.size());
  };
  for (size_t offset = 0; offset <= joined.size(); ++offset) {
    const ByteChain sub = ByteChain(pieces).Sub(offset, joined.size() - offset);
    ByteChain::Reader reader(sub);
    EXPECT_EQ(reader.left(), joined.size() - offset);
    EXPECT_EQ(text(reader.Peek(100)), offset < 9 ? run(offset) : "");
    EXPECT_EQ(text(reader.Peek(1)), joined.substr(offset, 1));
    // A copy reads on by itself.
    ByteChain::Reader copy = reader;
    std::string all(reader.left(), '\0');
    reader.Read(
        absl::MakeSpan(reinterpret_cast<uint8_t*>(all.data()), all.size()));
    EXPECT_EQ(all, joined.substr(offset));
    EXPECT_EQ(reader.left(), 0u);
    EXPECT_TRUE(reader.Peek(10).empty());
    if (offset < 9) {
      copy.Skip(1);
      EXPECT_EQ(copy.left(), joined.size() - offset - 1);
      EXPECT_EQ(text(copy.Peek(100)), offset < 8 ? run(offset + 1) : "");
    }
  }
}

TEST(ByteChainTest, NoPieces) {
  const ByteChain chain({});
  EXPECT_TRUE(chain.empty());
  EXPECT_TRUE(chain.Sub(0, 0).ForEachPiece([](ByteChain::Piece) {
    ADD_FAILURE() << "no part to visit";
    return true;
  }));
}

}  // namespace
}  // namespace verity
