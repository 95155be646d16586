// Implements the blob store test helpers.

#include "server/store/file/testing/file_store.h"

#include <fcntl.h>
#include <stdlib.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"

namespace verity::server {

std::string FreshTestDir(absl::string_view suffix) {
  const char* tmp = getenv("TEST_TMPDIR");
  const testing::TestInfo* test =
      testing::UnitTest::GetInstance()->current_test_info();
  const std::string name = absl::StrReplaceAll(
      absl::StrCat(test->test_suite_name(), ".", test->name(), suffix),
      {{"/", "_"}});
  const std::string dir =
      JoinPath(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", name);
  EXPECT_TRUE(RemoveRecursively(dir).ok());
  EXPECT_TRUE(MakeDirs(dir).ok());
  return dir;
}

absl::StatusOr<PutResult> PutBytes(FileStore* store, absl::string_view data,
                                   const MerkleParams& params,
                                   absl::string_view name,
                                   const std::optional<ParsedDigest>& expected,
                                   size_t chunk, bool declare_size) {
  ASSIGN_OR_RETURN(
      const std::unique_ptr<PutWriter> writer,
      store->BeginPut(
          params, expected,
          declare_size ? std::optional<uint64_t>(data.size()) : std::nullopt));
  for (size_t offset = 0; offset < data.size(); offset += chunk) {
    RETURN_IF_ERROR(writer->Append(AsBytes(data.substr(offset, chunk))));
  }
  return writer->Commit(expected, name);
}

namespace {

// A read of a file store's blob, which is always here.
absl::Status ReadHere(const Blob& blob, BlobPart part, uint64_t offset,
                      absl::Span<uint8_t> out) {
  std::optional<absl::Status> read = blob.TryReadNow(part, offset, out);
  if (!read.has_value()) {
    return absl::FailedPreconditionError("a file store's blob not here");
  }
  return *read;
}

}  // namespace

absl::StatusOr<std::string> ReadAllData(const Blob& blob) {
  std::string data(blob.geometry().data_size(), '\0');
  RETURN_IF_ERROR(ReadHere(blob, BlobPart::kData, 0, AsMutableBytes(&data)));
  return data;
}

absl::StatusOr<std::string> ReadAllTree(const Blob& blob) {
  std::string tree(blob.geometry().tree_size(), '\0');
  RETURN_IF_ERROR(ReadHere(blob, BlobPart::kTree, 0, AsMutableBytes(&tree)));
  return tree;
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  return ReadSmallFile(path, size_t{64} << 20);
}

absl::Status WriteWholeFile(const std::string& path, absl::string_view data) {
  ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, O_WRONLY | O_CREAT | O_TRUNC));
  RETURN_IF_ERROR(WriteAll(fd.get(), AsBytes(data), path));
  return fd.Close(path);
}

ParsedDigest DigestFromText(absl::string_view text) {
  absl::StatusOr<ParsedDigest> digest = ParseDigest(text);
  EXPECT_TRUE(digest.ok()) << digest.status();
  return digest.ok() ? *std::move(digest) : ParsedDigest{};
}

std::string BlobDirFor(const std::string& root, absl::string_view digest_text) {
  const std::vector<absl::string_view> parts = absl::StrSplit(digest_text, ':');
  return absl::StrCat(root, "/blobs/", parts[0], "/", parts[1].substr(0, 2),
                      "/", parts[1]);
}

std::vector<std::string> EntriesOf(const std::string& path) {
  absl::StatusOr<std::vector<std::string>> entries = ListDir(path);
  return entries.ok() ? *std::move(entries) : std::vector<std::string>{};
}

std::function<void(absl::string_view)> LogCapture::Sink() {
  return [this](absl::string_view line) {
    absl::MutexLock lock(&mu_);
    lines_.emplace_back(line);
  };
}

bool LogCapture::Contains(absl::string_view text) const {
  absl::MutexLock lock(&mu_);
  return std::any_of(lines_.begin(), lines_.end(),
                     [text](const std::string& line) {
                       return absl::StrContains(line, text);
                     });
}

std::vector<std::string> LogCapture::lines() const {
  absl::MutexLock lock(&mu_);
  return lines_;
}

void FileStoreFixture::SetUp() {
  root_ = FreshTestDir();
  Reopen();
}

FileStoreOptions FileStoreFixture::Options() {
  FileStoreOptions options;
  options.root = root_;
  options.max_blob_bytes = max_blob_bytes_;
  options.fec_roots = fec_roots_;
  options.record_max_bytes = record_max_bytes_;
  options.file_system = file_system_;
  options.log = log_.Sink();
  return options;
}

void FileStoreFixture::Reopen() {
  store_.reset();
  absl::StatusOr<std::unique_ptr<FileStore>> store = FileStore::Open(Options());
  ASSERT_TRUE(store.ok()) << store.status();
  store_ = *std::move(store);
}

std::string FileStoreFixture::MustPut(absl::string_view data,
                                      absl::string_view name,
                                      const MerkleParams& params) {
  const absl::StatusOr<PutResult> put =
      PutBytes(store_.get(), data, params, name);
  EXPECT_TRUE(put.ok()) << put.status();
  return put.ok() ? put->info.digest : "";
}

void FileStoreFixture::FlipStoredDataBit(absl::string_view digest_text,
                                         uint64_t offset) {
  const std::string path = BlobDirFor(root_, digest_text) + "/data";
  absl::StatusOr<std::string> bytes = ReadWholeFile(path);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  (*bytes)[offset] ^= 0x01;
  ASSERT_TRUE(WriteWholeFile(path, *bytes).ok());
}

}  // namespace verity::server
