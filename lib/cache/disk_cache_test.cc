#include "lib/cache/disk_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "lib/base/bytes.h"
#include "lib/base/file_util.h"
#include "lib/testing/fsverity_cli.h"
#include "lib/testing/test_blob.h"

namespace verity {
namespace {

std::string KeyOf(uint64_t index) {
  return "sha256-" + std::string(64, 'a') + ".data." + std::to_string(index);
}

// An entry to write: its key and bytes.
struct Entry {
  std::string key;
  std::string bytes;
};

std::shared_ptr<const Entry> EntryOf(uint64_t index, uint64_t size) {
  return std::make_shared<Entry>(Entry{KeyOf(index), MakeData(size, index)});
}

void Write(DiskCache& cache, std::shared_ptr<const Entry> entry) {
  cache.Write(entry->key, AsBytes(entry->bytes), entry);
}

std::string FreshTestDir() { return verity::FreshTestDir("disk_cache"); }

// The names in `dir`; none if it cannot be listed.
std::vector<std::string> EntriesOf(const std::string& dir) {
  absl::StatusOr<std::vector<std::string>> entries = ListDir(dir);
  return entries.ok() ? *std::move(entries) : std::vector<std::string>{};
}

// Waits (bounded) until the writer thread has written `key`.
bool AwaitWritten(DiskCache& cache, const std::string& key) {
  for (int i = 0; i < 2000; ++i) {
    if (cache.Contains(key)) return true;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return false;
}

// Waits (bounded) until `dir` is empty: a forgotten slab's file goes when its
// last holder lets go, and the writer thread may still hold one it just wrote.
bool AwaitNoFiles(const std::string& dir) {
  for (int i = 0; i < 2000; ++i) {
    if (EntriesOf(dir).empty()) return true;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return false;
}

std::string Read(DiskCache& cache, const std::string& key, uint64_t offset,
                 uint64_t size) {
  std::string out(size, '\0');
  if (!cache.Read(key, offset, AsMutableBytes(&out))) return "<miss>";
  return out;
}

TEST(DiskCacheTest, NeedsADirectory) {
  EXPECT_EQ(DiskCache::Open({}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A directory others can write into is refused, and so is a lock file
// planted as a symlink (not followed).
TEST(DiskCacheTest, NeedsADirectoryOfItsOwn) {
  DiskCacheOptions options;
  options.dir = FreshTestDir();
  ASSERT_TRUE(MakeDirs(options.dir).ok());
  ASSERT_EQ(chmod(options.dir.c_str(), 0777), 0);
  EXPECT_EQ(DiskCache::Open(options).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_EQ(chmod(options.dir.c_str(), 0755), 0);
  const std::string elsewhere = options.dir + "-elsewhere";
  ASSERT_EQ(symlink(elsewhere.c_str(), (options.dir + "/lock").c_str()), 0);
  EXPECT_EQ(DiskCache::Open(options).status().code(),
            absl::StatusCode::kFailedPrecondition);
  struct stat st;
  EXPECT_NE(lstat(elsewhere.c_str(), &st), 0);
}

TEST(DiskCacheTest, WrittenSlabsReadBackAtAnyOffset) {
  DiskCacheOptions options;
  options.dir = FreshTestDir();
  auto cache = DiskCache::Open(options);
  ASSERT_TRUE(cache.ok()) << cache.status();
  const auto slab = EntryOf(3, 10000);
  EXPECT_FALSE((*cache)->Contains(slab->key));
  EXPECT_EQ(Read(**cache, slab->key, 0, 10), "<miss>");
  Write(**cache, slab);
  ASSERT_TRUE(AwaitWritten(**cache, slab->key));
  EXPECT_EQ(Read(**cache, slab->key, 0, 10000), slab->bytes);
  EXPECT_EQ(Read(**cache, slab->key, 4097, 100), slab->bytes.substr(4097, 100));
  EXPECT_EQ((*cache)->bytes(), 10000u);
  EXPECT_EQ((*cache)->write_failures(), 0u);
}

TEST(DiskCacheTest, StartsEmptyWhateverWasLeftBehind) {
  DiskCacheOptions options;
  options.dir = FreshTestDir();
  ASSERT_TRUE(MakeDirs(options.dir + "/slabs").ok());
  ASSERT_TRUE(WriteNewFileDurably(options.dir + "/slabs/stale", "x").ok());
  auto cache = DiskCache::Open(options);
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_TRUE(EntriesOf(options.dir + "/slabs").empty());
}

TEST(DiskCacheTest, EvictsLeastRecentlyUsedAndDeletesTheirFiles) {
  DiskCacheOptions options;
  options.dir = FreshTestDir();
  options.max_bytes = 3000;
  auto cache = DiskCache::Open(options);
  ASSERT_TRUE(cache.ok()) << cache.status();
  for (uint64_t i = 0; i < 5; ++i) {
    Write(**cache, EntryOf(i, 1000));
    ASSERT_TRUE(AwaitWritten(**cache, KeyOf(i)));
  }
  EXPECT_FALSE((*cache)->Contains(KeyOf(0)));
  EXPECT_FALSE((*cache)->Contains(KeyOf(1)));
  EXPECT_TRUE((*cache)->Contains(KeyOf(4)));
  EXPECT_LE((*cache)->bytes(), 3000u);
  EXPECT_EQ(EntriesOf(options.dir + "/slabs").size(), 3u);
}

TEST(DiskCacheTest, ForgetDeletesTheFile) {
  DiskCacheOptions options;
  options.dir = FreshTestDir();
  auto cache = DiskCache::Open(options);
  ASSERT_TRUE(cache.ok()) << cache.status();
  Write(**cache, EntryOf(1, 500));
  ASSERT_TRUE(AwaitWritten(**cache, KeyOf(1)));
  (*cache)->Forget(KeyOf(1));
  EXPECT_FALSE((*cache)->Contains(KeyOf(1)));
  EXPECT_TRUE(AwaitNoFiles(options.dir + "/slabs"));
}

// A write queued before a Forget of its slab must not bring the slab back
// (the stale slab of a repair, review D1): the last of many queued writes is
// still waiting when its slab is forgotten.
TEST(DiskCacheTest, AWriteQueuedBeforeAForgetDoesNotLand) {
  DiskCacheOptions options;
  options.dir = FreshTestDir();
  auto cache = DiskCache::Open(options);
  ASSERT_TRUE(cache.ok()) << cache.status();
  constexpr uint64_t kSlabs = 64;
  for (uint64_t i = 0; i < kSlabs; ++i) Write(**cache, EntryOf(i, 64 << 10));
  (*cache)->Forget(KeyOf(kSlabs - 1));
  // Written afterwards, so written after every earlier one.
  Write(**cache, EntryOf(kSlabs, 100));
  ASSERT_TRUE(AwaitWritten(**cache, KeyOf(kSlabs)));
  EXPECT_FALSE((*cache)->Contains(KeyOf(kSlabs - 1)));
  EXPECT_EQ(Read(**cache, KeyOf(kSlabs - 1), 0, 10), "<miss>");
}

TEST(DiskCacheTest, AShortFileIsAMissAndForgotten) {
  DiskCacheOptions options;
  options.dir = FreshTestDir();
  auto cache = DiskCache::Open(options);
  ASSERT_TRUE(cache.ok()) << cache.status();
  Write(**cache, EntryOf(2, 800));
  ASSERT_TRUE(AwaitWritten(**cache, KeyOf(2)));
  const std::vector<std::string> files = EntriesOf(options.dir + "/slabs");
  ASSERT_EQ(files.size(), 1u);
  ASSERT_EQ(truncate((options.dir + "/slabs/" + files[0]).c_str(), 100), 0);
  EXPECT_EQ(Read(**cache, KeyOf(2), 0, 800), "<miss>");
  EXPECT_FALSE((*cache)->Contains(KeyOf(2)));
}

TEST(DiskCacheTest, AFullQueueDropsSlabsAndCountsThem) {
  DiskCacheOptions options;
  options.dir = FreshTestDir();
  options.max_pending_bytes = 0;
  auto cache = DiskCache::Open(options);
  ASSERT_TRUE(cache.ok()) << cache.status();
  Write(**cache, EntryOf(1, 100));
  EXPECT_EQ((*cache)->write_failures(), 1u);
  EXPECT_FALSE((*cache)->Contains(KeyOf(1)));
}

TEST(DiskCacheTest, AFailedWriteIsCountedAndLeavesNothing) {
  DiskCacheOptions options;
  options.dir = FreshTestDir();
  auto cache = DiskCache::Open(options);
  ASSERT_TRUE(cache.ok()) << cache.status();
  ASSERT_TRUE(RemoveRecursively(options.dir + "/slabs").ok());
  Write(**cache, EntryOf(1, 100));
  for (int i = 0; i < 2000 && (*cache)->write_failures() == 0; ++i) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_EQ((*cache)->write_failures(), 1u);
  EXPECT_FALSE((*cache)->Contains(KeyOf(1)));
}

// With check_reads, a file changed on the disk (same length, one byte
// flipped) is a miss, counted and forgotten; an unchanged one reads back whole
// and in part.
TEST(DiskCacheTest, CheckedReadsRefuseAFileChangedOnTheDisk) {
  DiskCacheOptions options;
  options.dir = FreshTestDir();
  options.check_reads = true;
  auto cache = DiskCache::Open(options);
  ASSERT_TRUE(cache.ok()) << cache.status();
  const auto kept = EntryOf(1, 9000);
  const auto changed = EntryOf(2, 9000);
  Write(**cache, kept);
  Write(**cache, changed);
  ASSERT_TRUE(AwaitWritten(**cache, kept->key));
  ASSERT_TRUE(AwaitWritten(**cache, changed->key));
  EXPECT_EQ(Read(**cache, kept->key, 0, 9000), kept->bytes);
  EXPECT_EQ(Read(**cache, kept->key, 4000, 10), kept->bytes.substr(4000, 10));
  for (const std::string& name : EntriesOf(options.dir + "/slabs")) {
    if (name.find(changed->key) != 0) continue;
    std::string bytes = changed->bytes;
    bytes[5000] ^= 1;
    const std::string path = options.dir + "/slabs/" + name;
    ASSERT_EQ(unlink(path.c_str()), 0);
    ASSERT_TRUE(WriteNewFileDurably(path, bytes).ok());
  }
  EXPECT_EQ(Read(**cache, changed->key, 0, 10), "<miss>");
  EXPECT_EQ((*cache)->changed_files(), 1u);
  EXPECT_FALSE((*cache)->Contains(changed->key));
  EXPECT_TRUE((*cache)->Contains(kept->key));
}

// With check_reads, a read reads and checks only the pieces that hold its
// range: a byte changed in one piece fails the reads that need that piece
// (counted, the entry forgotten) and no other.
TEST(DiskCacheTest, CheckedReadsReadOnlyThePiecesOfTheirRange) {
  constexpr uint64_t kPiece = DiskCache::kCheckedPieceBytes;
  DiskCacheOptions options;
  options.dir = FreshTestDir();
  options.check_reads = true;
  auto cache = DiskCache::Open(options);
  ASSERT_TRUE(cache.ok()) << cache.status();
  const auto entry = EntryOf(1, 16 * kPiece + 100);  // a short last piece
  Write(**cache, entry);
  ASSERT_TRUE(AwaitWritten(**cache, entry->key));
  for (const std::string& name : EntriesOf(options.dir + "/slabs")) {
    std::string bytes = entry->bytes;
    bytes[10 * kPiece + 7] ^= 1;
    const std::string path = options.dir + "/slabs/" + name;
    ASSERT_EQ(unlink(path.c_str()), 0);
    ASSERT_TRUE(WriteNewFileDurably(path, bytes).ok());
  }
  // Within one piece, across two, whole pieces, the short last piece.
  for (const auto& [offset, size] : std::vector<std::pair<uint64_t, uint64_t>>{
           {kPiece + 5, 100},
           {2 * kPiece - 10, 20},
           {3 * kPiece, 2 * kPiece},
           {16 * kPiece + 50, 50},
           {11 * kPiece, 5 * kPiece + 100}}) {
    EXPECT_EQ(Read(**cache, entry->key, offset, size),
              entry->bytes.substr(offset, size))
        << offset;
  }
  EXPECT_EQ((*cache)->changed_files(), 0u);
  // The changed piece, at its first byte or within a longer range.
  EXPECT_EQ(Read(**cache, entry->key, 9 * kPiece, 2 * kPiece), "<miss>");
  EXPECT_EQ((*cache)->changed_files(), 1u);
  EXPECT_FALSE((*cache)->Contains(entry->key));
}

// Two caches never share a directory (each would empty the other's files);
// the directory is free again once the first is closed.
TEST(DiskCacheTest, ADirectoryInUseIsRefused) {
  DiskCacheOptions options;
  options.dir = FreshTestDir();
  auto first = DiskCache::Open(options);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = DiskCache::Open(options);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition)
      << second.status();
  first->reset();
  second = DiskCache::Open(options);
  EXPECT_TRUE(second.ok()) << second.status();
}

TEST(DiskCacheTest, AwaitWritesReturnsOnceEveryQueuedWriteLanded) {
  DiskCacheOptions options;
  options.dir = FreshTestDir();
  auto cache = DiskCache::Open(options);
  ASSERT_TRUE(cache.ok()) << cache.status();
  for (uint64_t i = 0; i < 32; ++i) Write(**cache, EntryOf(i, 256 << 10));
  (*cache)->AwaitWrites();
  for (uint64_t i = 0; i < 32; ++i) EXPECT_TRUE((*cache)->Contains(KeyOf(i)));
  (*cache)->AwaitWrites();  // nothing queued: returns at once
}

}  // namespace
}  // namespace verity
