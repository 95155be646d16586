// Test support shared by the store's and the dispatcher's tests: fresh store
// roots, generated data, whole-blob puts and reads, a log capture.

#ifndef VERITYD_SERVER_STORE_FILE_TESTING_FILE_STORE_H_
#define VERITYD_SERVER_STORE_FILE_TESTING_FILE_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "lib/testing/test_blob.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_params.h"
#include "server/store/file/file_store.h"
#include "server/store/testing/blob_reads.h"
#include "server/store/verified_blob.h"

namespace verity::server {

// A new empty directory under $TEST_TMPDIR, named after the running test
// and `suffix`; whatever was there is removed first.
std::string FreshTestDir(absl::string_view suffix = "");

// Puts `data` in pieces of `chunk` bytes (odd by default, so pieces straddle
// blocks) and commits.
absl::StatusOr<PutResult> PutBytes(
    FileStore* store, absl::string_view data, const MerkleParams& params = {},
    absl::string_view name = "",
    const std::optional<ParsedDigest>& expected = std::nullopt,
    size_t chunk = 7001, bool declare_size = false);

absl::StatusOr<std::string> ReadAllData(const Blob& blob);

absl::StatusOr<std::string> ReadAllTree(const Blob& blob);

absl::StatusOr<std::string> ReadWholeFile(const std::string& path);
absl::Status WriteWholeFile(const std::string& path, absl::string_view data);

// ParseDigest for text the test knows is valid.
ParsedDigest DigestFromText(absl::string_view text);

// <root>/blobs/<alg>/<hh>/<hex> for a digest text.
std::string BlobDirFor(const std::string& root, absl::string_view digest_text);

// The entries of `path` (empty if it cannot be listed).
std::vector<std::string> EntriesOf(const std::string& path);

// Collects log lines. Thread-safe; must outlive the sinks it hands out.
class LogCapture {
 public:
  // The sink takes mu_ for each line.
  std::function<void(absl::string_view)> Sink();
  // True if some line contains `text`.
  bool Contains(absl::string_view text) const ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<std::string> lines() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  std::vector<std::string> lines_ ABSL_GUARDED_BY(mu_);
};

// A store in a fresh root per test, logging into log_.
class FileStoreFixture : public ::testing::Test {
 protected:
  void SetUp() override;

  FileStoreOptions Options();
  // Closes the store (if open) and opens it again; fails the test on error.
  void Reopen();
  // Puts `data` and returns its digest text; fails the test on error.
  std::string MustPut(absl::string_view data, absl::string_view name = "",
                      const MerkleParams& params = {});
  std::string tmp_dir() const { return root_ + "/tmp"; }
  // Flips one bit of byte `offset` of the stored data of `digest_text`, as a
  // failing disk would.
  void FlipStoredDataBit(absl::string_view digest_text, uint64_t offset);

  std::string root_;
  uint64_t max_blob_bytes_ = uint64_t{4} << 30;
  int fec_roots_ = 0;
  uint64_t record_max_bytes_ = kMaxRecordDataBytes;
  FileSystem* file_system_ = nullptr;  // nullptr: the real one
  LogCapture log_;
  std::unique_ptr<FileStore> store_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_FILE_TESTING_FILE_STORE_H_
