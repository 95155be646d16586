// ParseReadResponsePieces against protobuf's own parser, on messages like the
// server's and on damaged ones, cut into pieces at every point.

#include "proto/read_response_pieces.h"

#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace verity {
namespace {

std::vector<ByteChain::Piece> Cut(const std::string& bytes,
                                  const std::vector<size_t>& cuts) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  std::vector<ByteChain::Piece> pieces;
  size_t begin = 0;
  for (size_t cut : cuts) {
    pieces.emplace_back(data + begin, cut - begin);
    begin = cut;
  }
  pieces.emplace_back(data + begin, bytes.size() - begin);
  return pieces;
}

std::string Joined(const std::vector<ByteChain::Piece>& pieces) {
  return ByteChain(pieces).ToString();
}

// Ours accepts exactly when protobuf does, and then agrees with it.
void ExpectSameAsProtobuf(const std::string& bytes,
                          const std::vector<size_t>& cuts) {
  v1::ReadResponse want;
  const bool parses = want.ParseFromString(bytes);
  const std::vector<ByteChain::Piece> pieces = Cut(bytes, cuts);
  v1::ReadResponse head;
  std::vector<ByteChain::Piece> data;
  const absl::Status status =
      ParseReadResponsePieces(ByteChain(pieces), &head, &data);
  if (!status.ok()) {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_FALSE(parses) << "refused what protobuf parses: " << status;
    return;
  }
  ASSERT_TRUE(parses) << "accepted what protobuf refuses";
  EXPECT_EQ(Joined(data), want.data());
  EXPECT_TRUE(head.data().empty());
  want.clear_data();
  EXPECT_EQ(head.SerializeAsString(), want.SerializeAsString());
}

v1::ReadResponse FirstMessage() {
  v1::ReadResponse msg;
  msg.set_digest("sha256:0123");
  msg.mutable_fsverity_descriptor()->set_data_size(12345);
  for (int i = 0; i < 2; ++i) {
    v1::TreeBlock* block = msg.add_tree_blocks();
    block->set_index(i);
    block->set_data(std::string(300, static_cast<char>('a' + i)));
  }
  msg.set_data_offset(4096);
  msg.set_data(std::string(1000, 'd'));
  return msg;
}

TEST(ReadResponsePiecesTest, EveryCutOfMessagesLikeTheServers) {
  v1::ReadResponse data_only;
  data_only.set_data_offset(1 << 20);
  data_only.set_data(std::string(700, 'x'));
  v1::ReadResponse no_data = FirstMessage();
  no_data.clear_data();
  no_data.clear_data_offset();
  for (const v1::ReadResponse& msg :
       {FirstMessage(), data_only, no_data, v1::ReadResponse()}) {
    const std::string bytes = msg.SerializeAsString();
    for (size_t cut = 0; cut <= bytes.size(); ++cut) {
      ExpectSameAsProtobuf(bytes, {cut});
      ExpectSameAsProtobuf(bytes, {cut, cut, std::min(bytes.size(), cut + 7)});
    }
  }
}

TEST(ReadResponsePiecesTest, FieldsInAnyOrderAndTheLastDataWins) {
  v1::ReadResponse first;
  first.set_data("old data");
  v1::ReadResponse second;
  second.set_data_offset(8192);
  second.set_data("new data");
  v1::ReadResponse third;
  third.set_digest("sha256:ab");
  // Concatenated messages merge: the later data and the other fields.
  const std::string bytes = first.SerializeAsString() +
                            second.SerializeAsString() +
                            third.SerializeAsString();
  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    ExpectSameAsProtobuf(bytes, {cut});
  }
  v1::ReadResponse head;
  std::vector<ByteChain::Piece> data;
  const std::vector<ByteChain::Piece> pieces = Cut(bytes, {3, 11});
  ASSERT_TRUE(ParseReadResponsePieces(ByteChain(pieces), &head, &data).ok());
  EXPECT_EQ(Joined(data), "new data");
  EXPECT_EQ(head.data_offset(), 8192u);
  EXPECT_EQ(head.digest(), "sha256:ab");
}

TEST(ReadResponsePiecesTest, EveryTruncationAndByteFlipAgreesWithProtobuf) {
  const std::string bytes = FirstMessage().SerializeAsString();
  for (size_t size = 0; size < bytes.size(); ++size) {
    ExpectSameAsProtobuf(bytes.substr(0, size), {size / 2});
  }
  for (size_t at = 0; at < bytes.size(); ++at) {
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      std::string bad = bytes;
      bad[at] = static_cast<char>(bad[at] ^ flip);
      ExpectSameAsProtobuf(bad, {at / 3, at});
    }
  }
}

TEST(ReadResponsePiecesTest, RandomBytesAgreeWithProtobuf) {
  std::mt19937 random(1);
  for (int round = 0; round < 20000; ++round) {
    std::string bytes(random() % 24, '\0');
    for (char& c : bytes) c = static_cast<char>(random());
    ExpectSameAsProtobuf(bytes, {bytes.size() / 3});
  }
}

TEST(ReadResponsePiecesTest, UnknownGroupsAreSkippedAsProtobufSkipsThem) {
  const std::string bytes = FirstMessage().SerializeAsString();
  // Field 12, start group (wire type 3), a nested group of field 13 holding
  // a varint, then the end tags; and the same with no end tag.
  const std::string group = {
      static_cast<char>(12 << 3 | 3), static_cast<char>(13 << 3 | 3),
      static_cast<char>(1 << 3 | 0),  '\x7f',
      static_cast<char>(13 << 3 | 4), static_cast<char>(12 << 3 | 4)};
  for (const std::string& message :
       {group + bytes, bytes + group, group.substr(0, 5) + bytes}) {
    for (size_t cut = 0; cut <= message.size(); ++cut) {
      ExpectSameAsProtobuf(message, {cut});
    }
  }
}

}  // namespace
}  // namespace verity
