// Implements the fault matrix's fixture and checks.

#include "server/store/file/testing/file_store_fault.h"

#include <errno.h>

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/hash/hash.h"
#include "lib/testing/test_blob.h"
#include "lib/tree/merkle_builder.h"
#include "server/store/verified_blob.h"

namespace verity::server {

std::string DigestTextOf(absl::string_view data) {
  const absl::StatusOr<MerkleTree> tree =
      BuildMerkleTree(MerkleParams{}, AsBytes(data));
  EXPECT_TRUE(tree.ok()) << tree.status();
  if (!tree.ok()) return "";
  return FormatDigest(tree->descriptor.hash_algorithm, AsBytes(tree->digest));
}

absl::StatusCode CodeOfErrno(int error) {
  return error == ENOSPC ? absl::StatusCode::kResourceExhausted
                         : absl::StatusCode::kInternal;
}

std::string DataInTheShardOf(absl::string_view data) {
  // "sha256:" and two hex digits.
  const std::string shard = DigestTextOf(data).substr(0, 9);
  for (uint64_t seed = 1000;; ++seed) {
    std::string other = MakeData(3000, seed);
    if (other != data && DigestTextOf(other).substr(0, 9) == shard) {
      return other;
    }
  }
}

void FaultStoreTest::SetUp() { StartOver(""); }

std::string ShapeName(const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "Record" : "Directory";
}

void FaultStoreTest::StartOver(absl::string_view suffix) {
  store_.reset();
  fs_.Reset();
  acked_.clear();
  acked_names_.clear();
  root_ = FreshTestDir(suffix);
  Open();
  ASSERT_TRUE(fs_.TrackDurability(root_).ok());
}

void FaultStoreTest::Open() {
  log_mark_ = log_.lines().size();
  FileStoreOptions options;
  options.root = root_;
  options.log = log_.Sink();
  options.file_system = &fs_;
  absl::StatusOr<std::unique_ptr<FileStore>> store = FileStore::Open(options);
  ASSERT_TRUE(store.ok()) << store.status();
  store_ = *std::move(store);
}

void FaultStoreTest::PowerCut() {
  store_.reset();
  fs_.Reset();
  ASSERT_TRUE(fs_.DropUnsynced().ok());
  Open();
}

void FaultStoreTest::Restart() {
  store_.reset();
  fs_.Reset();
  Open();
}

absl::StatusOr<PutResult> FaultStoreTest::Put(absl::string_view data,
                                              absl::string_view name) {
  absl::StatusOr<PutResult> put =
      PutBytes(store_.get(), data, {}, name, std::nullopt, 7001, as_records_);
  if (put.ok()) {
    acked_[put->info.digest] = std::string(data);
    if (!name.empty()) acked_names_[std::string(name)] = put->info.digest;
  }
  return put;
}

absl::Status FaultStoreTest::PutBatch(const std::vector<std::string>& datas) {
  std::vector<BatchPut> blobs;
  for (const std::string& data : datas) {
    blobs.push_back(
        BatchPut{MerkleParams{}, DigestFromText(DigestTextOf(data)), data});
  }
  const std::vector<absl::StatusOr<PutResult>> results =
      store_->PutBatch(blobs);
  absl::Status first;
  for (size_t i = 0; i < datas.size(); ++i) {
    if (results[i].ok()) {
      acked_[results[i]->info.digest] = datas[i];
    } else if (first.ok()) {
      first = results[i].status();
    }
  }
  return first;
}

std::string FaultStoreTest::MustPut(absl::string_view data,
                                    absl::string_view name) {
  const absl::StatusOr<PutResult> put = Put(data, name);
  EXPECT_TRUE(put.ok()) << put.status();
  return put.ok() ? put->info.digest : "";
}

void FaultStoreTest::Forget(absl::string_view data) {
  const std::string text = DigestTextOf(data);
  acked_.erase(text);
  for (auto it = acked_names_.begin(); it != acked_names_.end();) {
    it = it->second == text ? acked_names_.erase(it) : std::next(it);
  }
}

void FaultStoreTest::RecordSteps(int steps) {
  // In test.xml: how many cases each loop of a test ran.
  RecordProperty(absl::StrCat("steps_", ++loops_), steps);
}

absl::StatusOr<std::string> FaultStoreTest::ReadBack(
    const std::string& digest_text) {
  absl::StatusOr<std::shared_ptr<const Blob>> blob =
      store_->OpenBlob(DigestFromText(digest_text));
  if (!blob.ok()) return blob.status();
  absl::StatusOr<std::shared_ptr<VerifiedBlob>> verified =
      VerifiedBlob::Create(*std::move(blob));
  if (!verified.ok()) return verified.status();
  std::string data;
  const absl::Status read = ReadVerified(
      **verified, 0, (*verified)->geometry().data_block_count(), &data);
  if (!read.ok()) return read;
  return data;
}

void FaultStoreTest::ExpectAcknowledgedIntact() {
  for (const auto& [text, data] : acked_) {
    const absl::StatusOr<std::string> back = ReadBack(text);
    EXPECT_TRUE(back.ok()) << text << ": " << back.status();
    if (back.ok()) {
      EXPECT_TRUE(*back == data) << text << " reads back wrong";
    }
  }
  for (const auto& [name, text] : acked_names_) {
    const absl::StatusOr<ParsedDigest> resolved = store_->ResolveName(name);
    EXPECT_TRUE(resolved.ok()) << name << ": " << resolved.status();
    if (resolved.ok()) {
      EXPECT_EQ(resolved->ToString(), text) << name;
    }
  }
}

bool FaultStoreTest::ExpectWholeOrAbsent(absl::string_view data) {
  const std::string text = DigestTextOf(data);
  const absl::StatusOr<std::string> back = ReadBack(text);
  const absl::StatusOr<std::vector<BlobInfo>> listed = store_->List("", 1000);
  EXPECT_TRUE(listed.ok());
  bool in_list = false;
  for (const BlobInfo& info : listed.value_or(std::vector<BlobInfo>{})) {
    in_list |= info.digest == text;
  }
  const absl::StatusCode stat =
      store_->Stat(DigestFromText(text)).status().code();
  if (absl::IsNotFound(back.status())) {
    EXPECT_FALSE(in_list) << text << " is listed but absent";
    EXPECT_EQ(stat, absl::StatusCode::kNotFound) << text;
    return false;
  }
  EXPECT_TRUE(back.ok()) << text << " is partly there: " << back.status();
  if (back.ok()) {
    EXPECT_TRUE(*back == data) << text << " reads back wrong";
  }
  EXPECT_TRUE(in_list) << text << " is served but not listed";
  EXPECT_EQ(stat, absl::StatusCode::kOk) << text;
  return true;
}

void FaultStoreTest::ExpectConsistent(bool restarted, size_t quarantined) {
  const absl::StatusOr<std::vector<BlobInfo>> listed = store_->List("", 1000);
  ASSERT_TRUE(listed.ok()) << listed.status();
  for (const BlobInfo& info : *listed) {
    const absl::StatusOr<std::string> back = ReadBack(info.digest);
    EXPECT_TRUE(back.ok()) << info.digest << " is listed: " << back.status();
  }
  EXPECT_EQ(store_->blob_count(), listed->size());
  EXPECT_LE(EntriesOf(root_ + "/quarantine").size(), quarantined);
  const std::vector<std::string> lines = log_.lines();
  for (size_t i = log_mark_; i < lines.size(); ++i) {
    EXPECT_FALSE(absl::StrContains(lines[i], "quarantined")) << lines[i];
  }
  if (restarted) {
    EXPECT_TRUE(EntriesOf(root_ + "/tmp").empty()) << "temp files leaked";
  }
}

int FaultStoreTest::CrashAtEachStep(const std::function<void()>& setup,
                                    const std::function<absl::Status()>& op,
                                    const std::function<void()>& check) {
  for (int step = 1; step < 1000; ++step) {
    StartOver("");
    setup();
    const int before = fs_.calls();
    fs_.CrashAtCall(step);
    const absl::Status status = op();
    const bool crashed = fs_.crashed();
    SCOPED_TRACE(absl::StrCat("crash before step ", step, " (",
                              fs_.CallName(before + step),
                              "): ", status.ToString()));
    if (!crashed) {
      EXPECT_TRUE(status.ok()) << status;
    }
    PowerCut();
    check();
    ExpectAcknowledgedIntact();
    ExpectConsistent(true);
    if (!crashed || ::testing::Test::HasFailure()) {
      RecordSteps(step);
      return step;
    }
  }
  ADD_FAILURE() << "the operation never ended";
  return 0;
}

int FaultStoreTest::FailAtEachStep(Fault fault,
                                   const std::function<void()>& setup,
                                   const std::function<absl::Status()>& op,
                                   const std::function<void()>& check) {
  for (int step = 1; step < 1000; ++step) {
    StartOver("");
    setup();
    const int hits = fs_.faults_hit();
    fault.nth = step;
    fs_.Inject(fault);
    const absl::Status status = op();
    const bool hit = fs_.faults_hit() > hits;
    fs_.Reset();  // the checks run on a sound disk
    SCOPED_TRACE(absl::StrCat("step ", step, " fails (", fs_.last_hit(),
                              "): ", status.ToString()));
    if (!status.ok()) {
      EXPECT_EQ(status.code(), CodeOfErrno(fault.error));
    }
    check();
    ExpectAcknowledgedIntact();
    ExpectConsistent(false);
    PowerCut();
    check();
    ExpectAcknowledgedIntact();
    ExpectConsistent(true);
    if (!hit || ::testing::Test::HasFailure()) {
      RecordSteps(step);
      return step;
    }
  }
  ADD_FAILURE() << "the operation never ended";
  return 0;
}

}  // namespace verity::server
