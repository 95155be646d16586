// The SDK's sinks: MemorySink writes in place within its bounds, FileSink
// publishes only on Finish, CallbackSink insists on order.

#include "verity/sink.h"

#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/base/file_util.h"
#include "lib/hash/hash.h"

namespace verity::sdk {
namespace {

using ::absl::StatusCode;

TEST(MemorySinkTest, WritesInPlace) {
  MemorySink sink;
  EXPECT_TRUE(sink.SupportsRandomAccess());
  ASSERT_TRUE(sink.Start(10).ok());
  ASSERT_TRUE(sink.Write(5, AsBytes("fghij")).ok());
  ASSERT_TRUE(sink.Write(0, AsBytes("abcde")).ok());
  ASSERT_TRUE(sink.Finish().ok());
  EXPECT_EQ(sink.data(), "abcdefghij");
  EXPECT_EQ(sink.Release(), "abcdefghij");
}

TEST(MemorySinkTest, RefusesOverrunsAndOversizedRanges) {
  MemorySink sink(8);
  EXPECT_EQ(sink.Start(9).code(), StatusCode::kResourceExhausted);
  ASSERT_TRUE(sink.Start(8).ok());
  EXPECT_EQ(sink.Write(6, AsBytes("abc")).code(), StatusCode::kInternal);
  EXPECT_EQ(sink.Write(9, AsBytes("")).code(), StatusCode::kInternal);
  ASSERT_TRUE(sink.Write(0, AsBytes("abc")).ok());
  sink.Abort();
  EXPECT_EQ(sink.data(), "");
}

class FileSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/sink_test_XXXXXX";
    ASSERT_NE(mkdtemp(&dir_[0]), nullptr);
    path_ = dir_ + "/out";
  }

  std::vector<std::string> Files() const {
    absl::StatusOr<std::vector<std::string>> names = ListDir(dir_);
    EXPECT_TRUE(names.ok()) << names.status();
    return names.ok() ? *std::move(names) : std::vector<std::string>();
  }

  std::string Contents() const {
    std::ifstream in(path_, std::ios::binary);
    std::ostringstream contents;
    contents << in.rdbuf();
    return contents.str();
  }

  std::string dir_;
  std::string path_;
};

TEST_F(FileSinkTest, FinishPublishes) {
  auto sink = FileSink::Create(path_);
  ASSERT_TRUE(sink.ok()) << sink.status();
  ASSERT_TRUE((*sink)->Start(6).ok());
  ASSERT_TRUE((*sink)->Write(3, AsBytes("def")).ok());
  ASSERT_TRUE((*sink)->Write(0, AsBytes("abc")).ok());
  EXPECT_NE(Files(), std::vector<std::string>{"out"});  // still temporary
  ASSERT_TRUE((*sink)->Finish().ok());
  EXPECT_EQ(Contents(), "abcdef");
  EXPECT_EQ(Files(), std::vector<std::string>{"out"});
}

TEST_F(FileSinkTest, AbortKeepsTheOldFileAndRemovesTheTemporary) {
  std::ofstream(path_) << "old";
  auto sink = FileSink::Create(path_);
  ASSERT_TRUE(sink.ok());
  ASSERT_TRUE((*sink)->Write(0, AsBytes("new")).ok());
  (*sink)->Abort();
  EXPECT_EQ(Contents(), "old");
  EXPECT_EQ(Files(), std::vector<std::string>{"out"});
  EXPECT_EQ((*sink)->Finish().code(), StatusCode::kFailedPrecondition);
}

TEST_F(FileSinkTest, DestroyingUnfinishedLeavesNothing) {
  {
    auto sink = FileSink::Create(path_);
    ASSERT_TRUE(sink.ok());
    ASSERT_TRUE((*sink)->Write(0, AsBytes("partial")).ok());
  }
  EXPECT_TRUE(Files().empty());
  EXPECT_FALSE(FileSink::Create(dir_ + "/no/such/dir/out").ok());
}

TEST(CallbackSinkTest, PassesChunksInOrder) {
  std::string got;
  CallbackSink sink([&got](absl::Span<const uint8_t> data) {
    got.append(data.begin(), data.end());
    return absl::OkStatus();
  });
  EXPECT_FALSE(sink.SupportsRandomAccess());
  ASSERT_TRUE(sink.Write(0, AsBytes("ab")).ok());
  ASSERT_TRUE(sink.Write(2, AsBytes("cd")).ok());
  EXPECT_EQ(sink.Write(7, AsBytes("x")).code(), StatusCode::kInternal);
  EXPECT_EQ(got, "abcd");
}

TEST(CallbackSinkTest, CallbackErrorsAreReturned) {
  CallbackSink sink([](absl::Span<const uint8_t>) {
    return absl::ResourceExhaustedError("disk full");
  });
  EXPECT_EQ(sink.Write(0, AsBytes("x")).code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace verity::sdk
