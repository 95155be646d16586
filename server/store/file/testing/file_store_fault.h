// Test support for the file store's fault matrix: a store over a
// FaultFileSystem, power cuts and restarts, and the checks every case makes
// (what was acknowledged survives and verifies; nothing is partly visible).

#ifndef VERITYD_SERVER_STORE_FILE_TESTING_FILE_STORE_FAULT_H_
#define VERITYD_SERVER_STORE_FILE_TESTING_FILE_STORE_FAULT_H_

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "lib/tree/descriptor.h"
#include "server/store/file/file_store.h"
#include "server/store/file/testing/fault_file_system.h"
#include "server/store/file/testing/file_store.h"

namespace verity::server {

// The digest text the store gives `data` (default params).
std::string DigestTextOf(absl::string_view data);

// The code a call failing with `error` must return.
absl::StatusCode CodeOfErrno(int error);

// Test data whose blob lands in the same shard as `data`'s.
std::string DataInTheShardOf(absl::string_view data);

// A store in a fresh root over fs_, whose durability fs_ tracks.
class FaultStoreTest : public ::testing::Test {
 protected:
  void SetUp() override;

  // A fresh root and store, with nothing acknowledged; for each step of a
  // loop over steps.
  void StartOver(absl::string_view suffix);
  // The process dies: the store closes, the disk keeps only what was
  // fsync'd, faults are cleared and a new store opens on what survived.
  void PowerCut();
  // Closes the store and opens it again; nothing is lost.
  void Restart();
  // PutBytes into store_, recording an acknowledged Put; with as_records_,
  // the Put says its size, and a small blob is stored as one record.
  absl::StatusOr<PutResult> Put(absl::string_view data,
                                absl::string_view name = "");
  // Store::PutBatch of `datas` into store_, recording each blob stored;
  // the first failure, else OK.
  absl::Status PutBatch(const std::vector<std::string>& datas);
  // A Put that must succeed.
  std::string MustPut(absl::string_view data, absl::string_view name = "");
  void Forget(absl::string_view data);

  // SQLite's crash test: for step = 1, 2, ...: a fresh store and `setup`,
  // then `op` with the process stopped just before its step-th file call,
  // then a power cut, `check` and the common checks. Ends after the first
  // step that `op` runs through; returns how many steps it has.
  int CrashAtEachStep(const std::function<void()>& setup,
                      const std::function<absl::Status()>& op,
                      const std::function<void()>& check);
  // The same with the step-th call of `op` (matching `fault`'s op and path)
  // failing with `fault.error`: `op` returns its code or succeeds; the
  // common checks hold at once, and after a power cut with `check`.
  int FailAtEachStep(Fault fault, const std::function<void()>& setup,
                     const std::function<absl::Status()>& op,
                     const std::function<void()>& check);

  // Records in test.xml how many steps a loop ran (steps_1, steps_2, ...).
  void RecordSteps(int steps);

  // Every acknowledged blob opens and verifies, and every acknowledged name
  // resolves to its blob.
  void ExpectAcknowledgedIntact();
  // `data`'s blob is served whole and verifies, or is absent from OpenBlob,
  // Stat and List alike. Returns true if it is served.
  bool ExpectWholeOrAbsent(absl::string_view data);
  // Everything listed opens and verifies, at most `quarantined` blobs are
  // in quarantine/ and the last Open quarantined none (no partial blob), and
  // after a restart tmp/ is empty.
  void ExpectConsistent(bool restarted, size_t quarantined = 0);
  // Reads all of the blob `digest_text`, verified; DATA_LOSS on a mismatch.
  absl::StatusOr<std::string> ReadBack(const std::string& digest_text);

  std::string root_;
  bool as_records_ = false;
  FaultFileSystem fs_;
  LogCapture log_;
  std::unique_ptr<FileStore> store_;
  std::map<std::string, std::string> acked_;        // digest text: data
  std::map<std::string, std::string> acked_names_;  // name: digest text

 private:
  void Open();

  size_t log_mark_ = 0;  // log lines before the last Open
  int loops_ = 0;
};

// FaultStoreTest over both shapes of a small blob: a directory of files
// (false), or one record (true, as_records_).
class ShapedFaultStoreTest : public FaultStoreTest,
                             public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    as_records_ = GetParam();
    FaultStoreTest::SetUp();
  }
};

// "Directory" or "Record": the name INSTANTIATE_TEST_SUITE_P gives a shape.
std::string ShapeName(const ::testing::TestParamInfo<bool>& info);

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_FILE_TESTING_FILE_STORE_FAULT_H_
