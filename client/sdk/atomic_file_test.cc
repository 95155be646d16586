// The target appears only on Commit(), with exactly the content written; any
// other ending leaves no file behind.

#include "client/sdk/atomic_file.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "lib/base/file_util.h"
#include "lib/hash/hash.h"

namespace verity::client {
namespace {

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/atomic_file_test_XXXXXX";
    ASSERT_NE(mkdtemp(&dir_[0]), nullptr);
  }

  std::vector<std::string> Files() const {
    absl::StatusOr<std::vector<std::string>> names = ListDir(dir_);
    EXPECT_TRUE(names.ok()) << names.status();
    return names.ok() ? *std::move(names) : std::vector<std::string>();
  }

  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream contents;
    contents << in.rdbuf();
    return contents.str();
  }

  std::string dir_;
};

TEST_F(AtomicFileTest, RefusesToReplaceWhatIsNotARegularFile) {
  // A FIFO stands for every non-regular file (/dev/null above all): the
  // rename would replace it rather than write to it.
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  absl::StatusOr<std::unique_ptr<AtomicFileWriter>> writer =
      AtomicFileWriter::Create(fifo);
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Files(), std::vector<std::string>{"fifo"});
}

TEST_F(AtomicFileTest, CommitPublishesTheContent) {
  const std::string path = dir_ + "/out";
  auto writer = AtomicFileWriter::Create(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE((*writer)->Write(AsBytes("hello ")).ok());
  ASSERT_TRUE((*writer)->Write(AsBytes("world")).ok());
  const std::vector<std::string> before = Files();
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].rfind(".out.verity-", 0), 0u) << before[0];
  EXPECT_EQ(dir_ + "/" + before[0], (*writer)->temp_path());
  ASSERT_TRUE((*writer)->Commit().ok());
  EXPECT_EQ(Read(path), "hello world");
  EXPECT_EQ(Files(), std::vector<std::string>{"out"});
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  const mode_t mask = umask(0);
  umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
  writer->reset();  // destroying after a commit removes nothing
  EXPECT_EQ(Read(path), "hello world");
}

TEST_F(AtomicFileTest, WriteAtFillsOutOfOrderAndConcurrently) {
  const std::string path = dir_ + "/out";
  auto writer = AtomicFileWriter::Create(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  std::vector<std::thread> threads;
  for (int part = 2; part >= 0; --part) {
    threads.emplace_back([&, part] {
      std::string bytes(100000, static_cast<char>('a' + part));
      EXPECT_TRUE((*writer)->WriteAt(part * 100000, AsBytes(bytes)).ok());
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_TRUE((*writer)->Commit().ok());
  EXPECT_EQ(Read(path), std::string(100000, 'a') + std::string(100000, 'b') +
                            std::string(100000, 'c'));
  EXPECT_EQ((*writer)->WriteAt(0, AsBytes("late")).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(AtomicFileTest, AbandoningLeavesNoFile) {
  const std::string path = dir_ + "/out";
  {
    auto writer = AtomicFileWriter::Create(path);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Write(AsBytes("partial")).ok());
  }
  EXPECT_TRUE(Files().empty());
}

TEST_F(AtomicFileTest, AbandoningKeepsTheOldContent) {
  const std::string path = dir_ + "/out";
  std::ofstream(path) << "old";
  {
    auto writer = AtomicFileWriter::Create(path);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Write(AsBytes("new")).ok());
  }
  EXPECT_EQ(Read(path), "old");
  EXPECT_EQ(Files(), std::vector<std::string>{"out"});
}

TEST_F(AtomicFileTest, AFailedCommitLeavesNoFile) {
  // Renaming over a non-empty directory, made after Create(), fails.
  const std::string path = dir_ + "/subdir";
  auto writer = AtomicFileWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  ASSERT_EQ(mkdir(path.c_str(), 0755), 0);
  std::ofstream(path + "/inside") << "x";
  ASSERT_TRUE((*writer)->Write(AsBytes("data")).ok());
  EXPECT_FALSE((*writer)->Commit().ok());
  writer->reset();
  EXPECT_EQ(Files(), std::vector<std::string>{"subdir"});
}

TEST_F(AtomicFileTest, BadTargets) {
  EXPECT_EQ(AtomicFileWriter::Create("").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AtomicFileWriter::Create(dir_ + "/").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AtomicFileWriter::Create(dir_ + "/missing/out").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(AtomicFileWriter::Create(dir_).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace verity::client
