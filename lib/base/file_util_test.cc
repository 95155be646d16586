// Tests the file helpers: status codes, durable writes, writes past the page
// cache, listing and recursive removal that never follows symlinks.

#include "lib/base/file_util.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/testing/fsverity_cli.h"

namespace verity {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string FreshDir(absl::string_view name) {
  return FreshTestDir(absl::StrCat("file_util_test_", name));
}

TEST(FileUtilTest, ErrnoStatusCodes) {
  EXPECT_EQ(ErrnoStatus(ENOSPC, "write", "f").code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ErrnoStatus(EDQUOT, "write", "f").code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ErrnoStatus(ENOENT, "open", "f").code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ErrnoStatus(EEXIST, "open", "f").code(),
            absl::StatusCode::kAlreadyExists);
  const absl::Status io = ErrnoStatus(EIO, "read", "/x/y");
  EXPECT_EQ(io.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(io.message(), HasSubstr("read /x/y"));
}

TEST(FileUtilTest, JoinPath) {
  EXPECT_EQ(JoinPath("a", "b"), "a/b");
  EXPECT_EQ(JoinPath("a/", "b"), "a/b");
  EXPECT_EQ(JoinPath("/", "b"), "/b");
}

TEST(FileUtilTest, DurableWritesAndReads) {
  const std::string dir = FreshDir("writes");
  const std::string path = dir + "/file";
  ASSERT_TRUE(WriteNewFileDurably(path, "one").ok());
  EXPECT_EQ(WriteNewFileDurably(path, "two").code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(ReadSmallFile(path, 3).value(), "one");
  EXPECT_EQ(ReadSmallFile(path, 2).status().code(),
            absl::StatusCode::kOutOfRange);
  ASSERT_TRUE(ReplaceFileDurably(dir + "/temp", path, "replaced").ok());
  EXPECT_EQ(ReadSmallFile(path, 100).value(), "replaced");
  EXPECT_THAT(ListDir(dir).value(), ElementsAre("file"));
  EXPECT_EQ(ReadSmallFile(dir + "/missing", 1).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(FileUtilTest, ReadsFilesLargerThanTheFirstBufferUpToTheLimit) {
  const std::string dir = FreshDir("large");
  const std::string path = dir + "/file";
  std::string contents;
  for (int i = 0; contents.size() < 300000; ++i) contents += std::to_string(i);
  ASSERT_TRUE(WriteNewFileDurably(path, contents).ok());
  EXPECT_EQ(ReadSmallFile(path, size_t{16} << 20).value(), contents);
  EXPECT_EQ(ReadSmallRegularFile(path, contents.size()).value(), contents);
  EXPECT_EQ(ReadSmallFile(path, contents.size() - 1).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(ReadSmallFile(path, 131072).status().code(),
            absl::StatusCode::kOutOfRange);
}

TEST(FileUtilTest, PreadUpToStopsAtEndOfFile) {
  const std::string path = FreshDir("pread") + "/file";
  ASSERT_TRUE(WriteNewFileDurably(path, "0123456789").ok());
  const absl::StatusOr<UniqueFd> fd = OpenFile(path, O_RDONLY);
  ASSERT_TRUE(fd.ok()) << fd.status();
  std::vector<uint8_t> out(8);
  EXPECT_EQ(PreadUpTo(fd->get(), 4, absl::MakeSpan(out), path).value(), 6u);
  EXPECT_EQ(std::string(out.begin(), out.begin() + 6), "456789");
}

TEST(FileUtilTest, MakeDirReportsCreation) {
  const std::string dir = FreshDir("mkdir");
  EXPECT_TRUE(MakeDir(dir + "/new").value());
  EXPECT_FALSE(MakeDir(dir + "/new").value());
  ASSERT_TRUE(WriteNewFileDurably(dir + "/file", "").ok());
  EXPECT_EQ(MakeDir(dir + "/file").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(MakeDirs(dir + "/x/y/z").ok());
  EXPECT_TRUE(MakeDirs(dir + "/x/y/z").ok());
}

TEST(FileUtilTest, RemoveRecursivelyDoesNotFollowSymlinks) {
  const std::string dir = FreshDir("remove");
  const std::string keep = FreshDir("remove_keep");
  ASSERT_TRUE(WriteNewFileDurably(keep + "/precious", "p").ok());
  ASSERT_TRUE(MakeDirs(dir + "/tree/a/b").ok());
  ASSERT_TRUE(WriteNewFileDurably(dir + "/tree/a/b/f", "f").ok());
  ASSERT_TRUE(WriteNewFileDurably(dir + "/tree/g", "g").ok());
  ASSERT_EQ(symlink(keep.c_str(), (dir + "/tree/a/link").c_str()), 0);
  ASSERT_TRUE(RemoveRecursively(dir + "/tree").ok());
  EXPECT_TRUE(ListDir(dir).value().empty());
  EXPECT_THAT(ListDir(keep).value(), ElementsAre("precious"));
  EXPECT_TRUE(RemoveRecursively(dir + "/tree").ok());  // already gone
  ASSERT_TRUE(WriteNewFileDurably(dir + "/file", "").ok());
  EXPECT_TRUE(RemoveRecursively(dir + "/file").ok());
}

TEST(FileUtilTest, ReadSmallRegularFileRefusesOtherFiles) {
  const std::string dir = FreshDir("regular");
  ASSERT_TRUE(WriteNewFileDurably(dir + "/file", "text").ok());
  EXPECT_EQ(ReadSmallRegularFile(dir + "/file", 4).value(), "text");
  EXPECT_EQ(ReadSmallRegularFile(dir + "/file", 3).status().code(),
            absl::StatusCode::kOutOfRange);
  // A FIFO without a writer: open(2) without O_NONBLOCK would wait forever.
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  ASSERT_EQ(symlink("file", (dir + "/link").c_str()), 0);
  ASSERT_TRUE(MakeDir(dir + "/dir").ok());
  for (const char* name : {"fifo", "link", "dir"}) {
    EXPECT_EQ(ReadSmallRegularFile(dir + "/" + name, 100).status().code(),
              absl::StatusCode::kFailedPrecondition)
        << name;
  }
  EXPECT_EQ(ReadSmallRegularFile(dir + "/missing", 1).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(FileUtilTest, PageAlignedBuffer) {
  std::vector<uint8_t> storage;
  const absl::Span<uint8_t> buffer = PageAlignedBuffer(10000, &storage);
  EXPECT_EQ(buffer.size(), 10000u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % 4096, 0u);
}

// Which of the file's pages the page cache holds (mincore of a mapping).
std::vector<bool> ResidentPages(int fd, size_t size) {
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  EXPECT_NE(map, MAP_FAILED);
  std::vector<unsigned char> in((size + 4095) / 4096);
  EXPECT_EQ(mincore(map, size, in.data()), 0);
  munmap(map, size);
  return std::vector<bool>(in.begin(), in.end());
}

TEST(FileUtilTest, WriteNewFileDirectSkipsThePageCacheForWholePages) {
  const std::string dir = FreshDir("direct");
  std::vector<uint8_t> storage;
  const absl::Span<uint8_t> data = PageAlignedBuffer(3 * 4096 + 100, &storage);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i);
  // Aligned memory, and the same bytes one byte off alignment.
  std::vector<uint8_t> shifted(data.size() + 1);
  std::copy(data.begin(), data.end(), shifted.begin() + 1);
  const absl::Span<const uint8_t> unaligned(shifted.data() + 1, data.size());
  int written = 0;
  for (const absl::Span<const uint8_t> bytes :
       {absl::Span<const uint8_t>(data), unaligned}) {
    const std::string path = JoinPath(dir, absl::StrCat("f", written++));
    absl::StatusOr<UniqueFd> fd =
        OpenFile(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_TRUE(fd.ok()) << fd.status();
    ASSERT_TRUE(WriteNewFileDirect(fd->get(), bytes, path).ok());
    EXPECT_EQ(fcntl(fd->get(), F_GETFL) & O_DIRECT, 0);
    absl::StatusOr<std::string> back = ReadSmallFile(path, 1 << 20);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, std::string(bytes.begin(), bytes.end()));
  }
  // Where the file system takes O_DIRECT, the aligned write's whole pages
  // never entered the page cache (read back above with the other file open:
  // check before reading instead).
  const std::string probe = JoinPath(dir, "probe");
  absl::StatusOr<UniqueFd> direct =
      OpenFile(probe, O_WRONLY | O_CREAT | O_DIRECT, 0600);
  if (!direct.ok()) GTEST_SKIP() << "no O_DIRECT here: " << direct.status();
  const std::string path = JoinPath(dir, "fresh");
  absl::StatusOr<UniqueFd> fd = OpenFile(path, O_RDWR | O_CREAT | O_EXCL, 0600);
  ASSERT_TRUE(fd.ok()) << fd.status();
  ASSERT_TRUE(WriteNewFileDirect(fd->get(), data, path).ok());
  EXPECT_THAT(ResidentPages(fd->get(), data.size()),
              ElementsAre(false, false, false, true));
  // Read back likewise: the whole pages still not in the page cache; the
  // same from a misaligned place, through it.
  std::vector<uint8_t> in_storage;
  const absl::Span<uint8_t> in = PageAlignedBuffer(data.size(), &in_storage);
  absl::StatusOr<size_t> read = PreadUpToDirect(fd->get(), 0, in, path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, data.size());
  EXPECT_TRUE(std::equal(in.begin(), in.end(), data.begin()));
  EXPECT_EQ(fcntl(fd->get(), F_GETFL) & O_DIRECT, 0);
  EXPECT_THAT(ResidentPages(fd->get(), data.size()),
              ElementsAre(false, false, false, true));
  read = PreadUpToDirect(fd->get(), 4096, in.subspan(1, 5000), path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, 5000u);
  EXPECT_TRUE(
      std::equal(in.begin() + 1, in.begin() + 5001, data.begin() + 4096));
  // A read past the end stops there.
  read = PreadUpToDirect(fd->get(), 2 * 4096, in, path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, 4096u + 100);
}

}  // namespace
}  // namespace verity
