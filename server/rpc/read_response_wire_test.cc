// SerializeReadResponse must produce exactly protobuf's bytes, must not copy
// the data it is given, and must give a pooled buffer back to its pool once
// gRPC releases the message.

#include "server/rpc/read_response_wire.h"

#include <grpcpp/support/slice.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>
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

Buffer BufferOf(const std::string& bytes) {
  Buffer buffer = Buffer::Allocate(bytes.size());
  if (!bytes.empty()) std::memcpy(buffer.data(), bytes.data(), bytes.size());
  return buffer;
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
    EXPECT_EQ(BytesOf(SerializeReadResponse(Head(), BufferOf(data))),
              whole.SerializeAsString())
        << size;
  }
}

TEST(SerializeReadResponseTest, LeavesEmptyDataOut) {
  EXPECT_EQ(BytesOf(SerializeReadResponse(Head(), Buffer())),
            Head().SerializeAsString());
}

TEST(SerializeReadResponseTest, SendsTheDataBufferItself) {
  Buffer data = BufferOf(std::string(1 << 20, 'd'));
  const uint8_t* bytes = data.data();
  const grpc::ByteBuffer buffer =
      SerializeReadResponse(Head(), std::move(data));
  const std::vector<grpc::Slice> slices = SlicesOf(buffer);
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(slices[1].begin(), bytes);
  EXPECT_EQ(slices[1].size(), size_t{1} << 20);
}

TEST(SerializeReadResponseTest, ReturnsThePooledBufferWhenReleased) {
  BufferPoolOptions options;
  options.max_buffer_bytes = 1 << 20;
  options.max_idle_bytes = 4 << 20;
  std::shared_ptr<BufferPool> pool = BufferPool::Create(options);
  Buffer data = pool->Take(300000);
  std::memset(data.data(), 'x', data.size());
  std::weak_ptr<BufferPool> watch = pool;
  {
    grpc::ByteBuffer message = SerializeReadResponse(Head(), std::move(data));
    pool.reset();  // the message's buffer keeps the pool
    ASSERT_FALSE(watch.expired());
    EXPECT_EQ(watch.lock()->stats().idle_bytes, 0u);
    grpc::ByteBuffer copy(message);  // shares the slices
    message.Clear();
    EXPECT_EQ(watch.lock()->stats().idle_bytes, 0u);  // still referenced
    v1::ReadResponse whole = Head();
    whole.set_data(std::string(300000, 'x'));
    EXPECT_EQ(BytesOf(copy), whole.SerializeAsString());
    ASSERT_FALSE(watch.expired());
  }
  // The last reference went: the buffer went back, and then the pool too.
  EXPECT_TRUE(watch.expired());
}

TEST(SerializeReadResponseTest, ReturnsTheBufferToALivePool) {
  BufferPoolOptions options;
  options.max_buffer_bytes = 1 << 20;
  options.max_idle_bytes = 4 << 20;
  std::shared_ptr<BufferPool> pool = BufferPool::Create(options);
  Buffer data = pool->Take(1000);
  const uint8_t* memory = data.data();
  std::memset(data.data(), 'y', data.size());
  { grpc::ByteBuffer message = SerializeReadResponse(Head(), std::move(data)); }
  EXPECT_EQ(pool->stats().idle_bytes, pool->options().min_buffer_bytes);
  EXPECT_EQ(pool->Take(1000).data(), memory);
}

}  // namespace
}  // namespace verity::server
