// Tests FileStore::Open on existing roots: what survives a reopen, what is
// quarantined, cleaned or dropped, and which roots are refused.

#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/file_util.h"
#include "lib/hash/hash.h"
#include "server/store/file/file_store.h"
#include "server/store/file/testing/file_store.h"
#include "server/store/name_index.h"

namespace verity::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

using BlobStoreRecoveryTest = FileStoreFixture;

absl::StatusCode OpenCode(const std::string& root) {
  FileStoreOptions options;
  options.root = root;
  options.log = [](absl::string_view) {};
  return FileStore::Open(options).status().code();
}

TEST_F(BlobStoreRecoveryTest, CreatesTheLayout) {
  EXPECT_EQ(ReadWholeFile(root_ + "/VERSION").value(), "verityd-store 2\n");
  EXPECT_THAT(EntriesOf(root_),
              UnorderedElementsAre("LOCK", "VERSION", "blobs", "names", "log",
                                   "quarantine", "tmp", "upkeep"));
  EXPECT_THAT(EntriesOf(root_ + "/blobs"), ElementsAre("sha256", "sha512"));
}

TEST_F(BlobStoreRecoveryTest, CreatesAMissingRootWithParents) {
  const std::string root = FreshTestDir() + "/a/b/store";
  EXPECT_EQ(OpenCode(root), absl::StatusCode::kOk);
  EXPECT_EQ(ReadWholeFile(root + "/VERSION").value(), kStoreVersionText);
}

TEST_F(BlobStoreRecoveryTest, ReopenKeepsBlobsAndNames) {
  MerkleParams sha512;
  sha512.hash_algorithm = HashAlgorithm::kSha512;
  sha512.salt = "s";
  const std::string a = MustPut(MakeData(100000, 1), "a/first");
  const std::string b = MustPut(MakeData(3, 2), "b", sha512);
  MustPut(MakeData(3, 2), "b2", sha512);
  const std::string c = MustPut("");
  NameWrite logged{"logged", "a logged statement"};
  logged.log_index = 42;
  ASSERT_TRUE(store_->SetName(DigestFromText(c), logged).ok());
  const uint64_t bytes = store_->stored_bytes();
  Reopen();
  EXPECT_EQ(store_->blob_count(), 3u);
  EXPECT_EQ(store_->stored_bytes(), bytes);
  EXPECT_EQ(ReadAllData(*store_->OpenBlob(DigestFromText(a)).value()).value(),
            MakeData(100000, 1));
  EXPECT_EQ(store_->Stat(DigestFromText(b))->names,
            (std::vector<std::string>{"b", "b2"}));
  EXPECT_EQ(store_->Stat(DigestFromText(b))->descriptor.salt, "s");
  EXPECT_TRUE(store_->OpenBlob(DigestFromText(c)).ok());
  EXPECT_EQ(store_->ResolveName("a/first")->digest, DigestFromText(a).digest);
  EXPECT_EQ(store_->LookupName("logged")->log_index, 42u);
  EXPECT_EQ(store_->LookupName("logged")->statement, "a logged statement");
  EXPECT_THAT(log_.lines(), IsEmpty());
}

TEST_F(BlobStoreRecoveryTest, DamagedBlobsAreQuarantinedAtOpen) {
  const std::string descriptor = MustPut(MakeData(5000, 3), "d");
  const std::string data = MustPut(MakeData(5000, 4));
  const std::string tree = MustPut(MakeData(9000, 5));
  const std::string fine = MustPut(MakeData(5000, 6));
  store_.reset();
  std::string bytes =
      ReadWholeFile(BlobDirFor(root_, descriptor) + "/descriptor").value();
  bytes[20] ^= 1;
  ASSERT_TRUE(
      WriteWholeFile(BlobDirFor(root_, descriptor) + "/descriptor", bytes)
          .ok());
  ASSERT_EQ(truncate((BlobDirFor(root_, data) + "/data").c_str(), 4000), 0);
  ASSERT_EQ(unlink((BlobDirFor(root_, tree) + "/tree").c_str()), 0);
  Reopen();

  for (const std::string& text : {descriptor, data, tree}) {
    const absl::Status open = store_->OpenBlob(DigestFromText(text)).status();
    EXPECT_EQ(open.code(), absl::StatusCode::kDataLoss) << text;
    EXPECT_THAT(open.message(), HasSubstr("quarantined"));
    EXPECT_TRUE(log_.Contains(absl::StrCat("quarantined ", text)));
  }
  EXPECT_TRUE(log_.Contains("does not hash to the digest"));
  EXPECT_TRUE(log_.Contains("data file is 4000 bytes"));
  EXPECT_TRUE(log_.Contains("no tree file"));
  EXPECT_EQ(store_->blob_count(), 1u);
  EXPECT_TRUE(store_->OpenBlob(DigestFromText(fine)).ok());
  EXPECT_THAT(EntriesOf(root_ + "/quarantine"), ::testing::SizeIs(3));
  // Names of quarantined blobs stay; so does the quarantine across opens.
  EXPECT_TRUE(store_->ResolveName("d").ok());
  Reopen();
  EXPECT_EQ(store_->OpenBlob(DigestFromText(data)).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_TRUE(store_->ResolveName("d").ok());

  // A re-put serves it again and drops the damaged copy.
  const absl::StatusOr<PutResult> again =
      PutBytes(store_.get(), MakeData(5000, 3));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_THAT(again->info.names, ElementsAre("d"));
  EXPECT_EQ(ReadAllData(*store_->OpenBlob(DigestFromText(descriptor)).value())
                .value(),
            MakeData(5000, 3));
  EXPECT_THAT(EntriesOf(root_ + "/quarantine"), ::testing::SizeIs(2));
}

TEST_F(BlobStoreRecoveryTest, FilesOfTheWrongTypeAreQuarantined) {
  const std::string linked = MustPut(MakeData(100, 9));
  const std::string replaced = MustPut(MakeData(100, 10));
  store_.reset();
  // A data file swapped for a symlink to an identical copy still does not
  // count: blobs are only ever plain files.
  const std::string data = BlobDirFor(root_, linked) + "/data";
  ASSERT_EQ(rename(data.c_str(), (root_ + "/copy").c_str()), 0);
  ASSERT_EQ(symlink((root_ + "/copy").c_str(), data.c_str()), 0);
  const std::string dir = BlobDirFor(root_, replaced);
  ASSERT_TRUE(RemoveRecursively(dir).ok());
  ASSERT_TRUE(WriteWholeFile(dir, "not a directory").ok());
  Reopen();
  for (const std::string& text : {linked, replaced}) {
    EXPECT_EQ(store_->OpenBlob(DigestFromText(text)).status().code(),
              absl::StatusCode::kDataLoss)
        << text;
  }
  EXPECT_EQ(store_->blob_count(), 0u);
  // Re-putting replaces the file in quarantine/ too.
  EXPECT_TRUE(PutBytes(store_.get(), MakeData(100, 10)).ok());
  EXPECT_THAT(EntriesOf(root_ + "/quarantine"), ::testing::SizeIs(1));
}

TEST_F(BlobStoreRecoveryTest, OpenEmptiesTmp) {
  store_.reset();
  ASSERT_TRUE(WriteWholeFile(tmp_dir() + "/junk", "junk").ok());
  // A Put cut short: staging directory with part of its data.
  ASSERT_TRUE(MakeDirs(tmp_dir() + "/put-7/deeper").ok());
  ASSERT_TRUE(WriteWholeFile(tmp_dir() + "/put-7/data", "partial").ok());
  ASSERT_EQ(symlink("/", (tmp_dir() + "/put-7/root-link").c_str()), 0);
  Reopen();
  EXPECT_THAT(EntriesOf(tmp_dir()), IsEmpty());
  EXPECT_EQ(store_->blob_count(), 0u);
}

TEST_F(BlobStoreRecoveryTest, NamesOfMissingBlobsAreDropped) {
  MustPut("kept", "kept");
  const std::string gone =
      FormatDigest(HashAlgorithm::kSha256, AsBytes(std::string(32, '\x42')));
  store_.reset();
  const std::string names = root_ + "/names";
  ASSERT_TRUE(WriteWholeFile(names + "/" + NameFileName("orphan"),
                             EncodeNameFile(gone, "orphan"))
                  .ok());
  ASSERT_TRUE(WriteWholeFile(names + "/" + NameFileName("other"),
                             EncodeNameFile(gone, "misfiled"))
                  .ok());
  ASSERT_TRUE(WriteWholeFile(names + "/garbage", "no newline").ok());
  Reopen();
  EXPECT_THAT(EntriesOf(names), ElementsAre(NameFileName("kept")));
  EXPECT_EQ(store_->ResolveName("orphan").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(store_->ResolveName("kept").ok());
  EXPECT_TRUE(log_.Contains("which is gone"));
  EXPECT_TRUE(log_.Contains("not the hash of the name"));
  EXPECT_TRUE(log_.Contains("lacks a newline"));
}

// Found by tests/fuzz (store_recovery): a FIFO under names/ made Open wait
// forever for a writer.
TEST_F(BlobStoreRecoveryTest, NameEntriesThatAreNotFilesAreDropped) {
  MustPut("kept", "kept");
  store_.reset();
  const std::string names = root_ + "/names";
  ASSERT_EQ(mkfifo((names + "/fifo").c_str(), 0600), 0);
  ASSERT_EQ(symlink(NameFileName("kept").c_str(), (names + "/link").c_str()),
            0);
  Reopen();
  EXPECT_THAT(EntriesOf(names), ElementsAre(NameFileName("kept")));
  EXPECT_TRUE(store_->ResolveName("kept").ok());
  EXPECT_TRUE(log_.Contains("is not a regular file"));
}

TEST_F(BlobStoreRecoveryTest, VersionThatIsAFifoIsRefused) {
  store_.reset();
  ASSERT_EQ(unlink((root_ + "/VERSION").c_str()), 0);
  ASSERT_EQ(mkfifo((root_ + "/VERSION").c_str(), 0600), 0);
  EXPECT_EQ(OpenCode(root_), absl::StatusCode::kFailedPrecondition);
}

TEST_F(BlobStoreRecoveryTest, StaleQuarantineCopyOfAServedBlobIsDropped) {
  const std::string text = MustPut(MakeData(100, 7));
  store_.reset();
  const std::string hex = text.substr(text.find(':') + 1);
  ASSERT_TRUE(MakeDirs(root_ + "/quarantine/sha256-" + hex).ok());
  Reopen();
  EXPECT_TRUE(store_->OpenBlob(DigestFromText(text)).ok());
  EXPECT_THAT(EntriesOf(root_ + "/quarantine"), IsEmpty());
}

TEST_F(BlobStoreRecoveryTest, UnexpectedEntriesAreIgnored) {
  const std::string text = MustPut(MakeData(100, 8));
  store_.reset();
  ASSERT_TRUE(MakeDirs(root_ + "/blobs/sha256/zz").ok());
  ASSERT_TRUE(MakeDirs(root_ + "/blobs/sha256/ab/not-a-digest").ok());
  ASSERT_TRUE(MakeDirs(root_ + "/quarantine/whatever").ok());
  Reopen();
  EXPECT_EQ(store_->blob_count(), 1u);
  EXPECT_TRUE(log_.Contains("blobs/sha256/zz"));
  EXPECT_TRUE(log_.Contains("not-a-digest"));
  EXPECT_TRUE(log_.Contains("quarantine/whatever"));
  EXPECT_TRUE(store_->OpenBlob(DigestFromText(text)).ok());
}

// Runs in a forked child: puts blobs until killed, writing each digest to
// `ack_fd` once its Put is acknowledged.
[[noreturn]] void PutUntilKilled(const std::string& root, int ack_fd) {
  FileStoreOptions options;
  options.root = root;
  absl::StatusOr<std::unique_ptr<FileStore>> store = FileStore::Open(options);
  if (!store.ok()) _exit(1);
  for (uint64_t i = 0;; ++i) {
    const absl::StatusOr<PutResult> put =
        PutBytes(store->get(), MakeData(1000 + i * 7919 % 200000, i), {},
                 absl::StrCat("n", i));
    if (!put.ok()) _exit(2);
    const std::string line = absl::StrCat(i, " ", put->info.digest, "\n");
    if (write(ack_fd, line.data(), line.size()) !=
        static_cast<ssize_t>(line.size())) {
      _exit(3);
    }
  }
}

TEST_F(BlobStoreRecoveryTest, SigkillMidPutLosesNoAcknowledgedPut) {
  store_.reset();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    PutUntilKilled(root_, fds[1]);
  }
  close(fds[1]);
  std::string acks;
  char buffer[4096];
  // Kill it mid-stream, after some Puts were acknowledged.
  while (std::count(acks.begin(), acks.end(), '\n') < 20) {
    const ssize_t n = read(fds[0], buffer, sizeof(buffer));
    ASSERT_GT(n, 0) << "the child died early";
    acks.append(buffer, static_cast<size_t>(n));
  }
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status));
  for (ssize_t n; (n = read(fds[0], buffer, sizeof(buffer))) > 0;) {
    acks.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);

  Reopen();
  const std::vector<std::string> lines =
      absl::StrSplit(acks, '\n', absl::SkipEmpty());
  for (const std::string& line : lines) {
    const std::vector<std::string> fields = absl::StrSplit(line, ' ');
    ASSERT_EQ(fields.size(), 2u) << line;
    const uint64_t i = std::stoull(fields[0]);
    const absl::StatusOr<std::shared_ptr<const Blob>> blob =
        store_->OpenBlob(DigestFromText(fields[1]));
    ASSERT_TRUE(blob.ok()) << blob.status();
    EXPECT_EQ(ReadAllData(**blob).value(),
              MakeData(1000 + i * 7919 % 200000, i));
    EXPECT_TRUE(store_->ResolveName(absl::StrCat("n", i)).ok());
  }
  // The Put cut short left nothing visible, nothing damaged.
  EXPECT_GE(store_->blob_count(), lines.size());
  EXPECT_LE(store_->blob_count(), lines.size() + 1);
  EXPECT_THAT(EntriesOf(root_ + "/quarantine"), IsEmpty());
  EXPECT_THAT(EntriesOf(tmp_dir()), IsEmpty());
  EXPECT_THAT(log_.lines(), IsEmpty());
}

TEST_F(BlobStoreRecoveryTest, SecondOpenOfAnOpenStoreIsRefused) {
  EXPECT_EQ(OpenCode(root_), absl::StatusCode::kFailedPrecondition);
  store_.reset();
  EXPECT_EQ(OpenCode(root_), absl::StatusCode::kOk);
}

TEST_F(BlobStoreRecoveryTest, OtherVersionIsRefused) {
  store_.reset();
  ASSERT_TRUE(WriteWholeFile(root_ + "/VERSION", "verityd-store 3\n").ok());
  EXPECT_EQ(OpenCode(root_), absl::StatusCode::kFailedPrecondition);
}

TEST_F(BlobStoreRecoveryTest, NonEmptyRootWithoutVersionIsRefused) {
  const std::string root = FreshTestDir("_foreign");
  ASSERT_TRUE(WriteWholeFile(root + "/precious", "data").ok());
  EXPECT_EQ(OpenCode(root), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(EntriesOf(root), ElementsAre("precious"));
}

TEST_F(BlobStoreRecoveryTest, RootThatIsAFileIsRefused) {
  const std::string file = FreshTestDir("_file") + "/file";
  ASSERT_TRUE(WriteWholeFile(file, "x").ok());
  EXPECT_NE(OpenCode(file), absl::StatusCode::kOk);
  EXPECT_NE(OpenCode(""), absl::StatusCode::kOk);
}

}  // namespace
}  // namespace verity::server
