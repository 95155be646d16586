// SerializeReadResponse must produce exactly protobuf's bytes, and must not
// copy the data it is given.

#include "server/rpc/read_response_wire.h"

#include <grpcpp/support/slice.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace verity::server {
namespace {

v1::ReadResponse Head() {
  v1::ReadResponse head;
  head.set_digest("sha256:00ff");
  head.mutable_fsverity_descriptor()->set_data_size(12345);
  v1::TreeBlock* block = head.add_tree_blocks();
  block->set_index(7);
  block->set_data(std::string(4096, 't'));
  head.set_data_offset(1 << 20);
  return head;
}

std::vector<grpc::Slice> SlicesOf(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(buffer.Dump(&slices).ok());
  return slices;
}

std::string BytesOf(const grpc::ByteBuffer& buffer) {
  std::string bytes;
  for (const grpc::Slice& slice : SlicesOf(buffer)) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return bytes;
}

TEST(SerializeReadResponseTest, IsProtobufsSerialization) {
  for (size_t size : {size_t{1}, size_t{127}, size_t{128}, size_t{300000}}) {
    std::string data(size, '\0');
    for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>(i * 31);
    v1::ReadResponse whole = Head();
    whole.set_data(data);
    EXPECT_EQ(BytesOf(SerializeReadResponse(Head(), data)),
              whole.SerializeAsString())
        << size;
  }
}

TEST(SerializeReadResponseTest, LeavesEmptyDataOut) {
  EXPECT_EQ(BytesOf(SerializeReadResponse(Head(), "")),
            Head().SerializeAsString());
}

TEST(SerializeReadResponseTest, SendsTheDataBufferItself) {
  std::string data(1 << 20, 'd');
  const char* bytes = data.data();
  const grpc::ByteBuffer buffer =
      SerializeReadResponse(Head(), std::move(data));
  const std::vector<grpc::Slice> slices = SlicesOf(buffer);
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(reinterpret_cast<const char*>(slices[1].begin()), bytes);
  EXPECT_EQ(slices[1].size(), size_t{1} << 20);
}

}  // namespace
}  // namespace verity::server
