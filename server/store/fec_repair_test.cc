// FEC in the file store: the parity a Put writes is veritysetup's, and a read
// that meets bad blocks repairs them from it. The repair matrix: 1 to `roots`
// bad blocks per RS group in the data, in the tree and in both, a partial
// last block, the top tree block; roots + 1; a damaged parity byte; a
// truncated parity file. Every read is byte-exact or DATA_LOSS, never a
// wrong byte, and the store reads back whole after a restart.

#include "server/store/fec_repair.h"

#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/fec/dm_verity_fec.h"
#include "lib/testing/fsverity_cli.h"
#include "server/store/file/testing/fault_file_system.h"
#include "server/store/file/testing/file_store.h"
#include "server/store/testing/remote_blob.h"

namespace verity::server {
namespace {

constexpr uint32_t kBlock = 4096;
constexpr char kVeritysetup[] = "/usr/sbin/veritysetup";

class FecRepairTest : public FileStoreFixture {
 protected:
  // Each blob a directory, whose fec file veritysetup reads; records are
  // repaired alike (file_store_record_test).
  void SetUp() override {
    fec_roots_ = 4;
    record_max_bytes_ = 0;
    FileStoreFixture::SetUp();
  }

  // Puts `data` and keeps its files as they were stored. `declare_size`:
  // the Put says the content's size, and the FEC area is encoded as the
  // content arrives (else it is read back at the end).
  void PutBlob(const std::string& data, bool declare_size = true) {
    data_ = data;
    const absl::StatusOr<PutResult> put =
        PutBytes(store_.get(), data_, {}, "", std::nullopt, 7001, declare_size);
    ASSERT_TRUE(put.ok()) << put.status();
    digest_ = put->info.digest;
    dir_ = BlobDirFor(root_, digest_);
    for (const char* file : {"data", "tree", "fec"}) {
      absl::StatusOr<std::string> bytes =
          ReadWholeFile(absl::StrCat(dir_, "/", file));
      ASSERT_TRUE(bytes.ok()) << file << ": " << bytes.status();
      pristine_[file] = *bytes;
    }
  }

  std::shared_ptr<VerifiedBlob> Open() {
    absl::StatusOr<std::shared_ptr<const Blob>> blob =
        store_->OpenBlob(DigestFromText(digest_));
    EXPECT_TRUE(blob.ok()) << blob.status();
    absl::StatusOr<std::shared_ptr<VerifiedBlob>> verified =
        VerifiedBlob::Create(*blob);
    EXPECT_TRUE(verified.ok()) << verified.status();
    return *verified;
  }

  uint64_t data_blocks() const { return (data_.size() + kBlock - 1) / kBlock; }

  // Flips a byte of block `block` (FEC numbering) in its file.
  void Corrupt(uint64_t block) {
    const bool data = block < data_blocks();
    const std::string path = absl::StrCat(dir_, data ? "/data" : "/tree");
    absl::StatusOr<std::string> bytes = ReadWholeFile(path);
    ASSERT_TRUE(bytes.ok());
    const uint64_t at = (data ? block : block - data_blocks()) * kBlock + 17;
    ASSERT_LT(at, bytes->size());
    (*bytes)[at] ^= 0x5a;
    ASSERT_TRUE(WriteWholeFile(path, *bytes).ok());
  }

  // The data with Corrupt()'s flips in data blocks `blocks`.
  std::string Corrupted(const std::vector<uint64_t>& blocks) const {
    std::string data = data_;
    for (uint64_t block : blocks) data[block * kBlock + 17] ^= 0x5a;
    return data;
  }

  // Puts every file back as stored.
  void Restore() {
    for (const auto& [file, bytes] : pristine_) {
      ASSERT_TRUE(WriteWholeFile(absl::StrCat(dir_, "/", file), bytes).ok());
    }
  }

  bool FilesArePristine() {
    for (const auto& [file, bytes] : pristine_) {
      absl::StatusOr<std::string> now =
          ReadWholeFile(absl::StrCat(dir_, "/", file));
      if (!now.ok() || *now != bytes) return false;
    }
    return true;
  }

  // Reads the whole blob verified, repairing the group of each bad block met
  // and reading again, as the dispatcher does. Adds the blocks rebuilt to
  // `*repaired`.
  absl::StatusOr<std::string> ReadRepairing(VerifiedBlob& blob, int* repaired) {
    const uint64_t blocks = blob.geometry().data_block_count();
    std::string out;
    for (int attempt = 0; attempt < 32; ++attempt) {
      absl::Status status = ReadVerified(blob, 0, blocks, &out);
      if (status.ok()) return out;
      EXPECT_TRUE(out.empty());  // nothing unverified comes out
      const std::optional<uint64_t> bad = BadBlockOf(status);
      if (!bad.has_value()) return status;
      absl::StatusOr<int> rebuilt = RepairFecGroup(blob, *bad);
      if (!rebuilt.ok()) return rebuilt.status();
      if (*rebuilt == 0) return status;
      *repaired += *rebuilt;
    }
    return absl::InternalError("no progress");
  }

  std::string data_;
  std::string digest_;
  std::string dir_;
  std::map<std::string, std::string> pristine_;
};

// Without a salt and with one block size, an fs-verity tree is a dm-verity
// hash area, so veritysetup reproduces the stored parity and accepts it,
// whether it was encoded as the content came or read back.
TEST_F(FecRepairTest, StoredParityIsVeritysetups) {
  if (access(kVeritysetup, X_OK) != 0) {
    FAIL() << kVeritysetup << " is missing: install cryptsetup-bin";
  }
  for (const auto& [roots, declare_size] :
       std::vector<std::pair<int, bool>>{{2, true}, {2, false}, {4, true}}) {
    SCOPED_TRACE(
        absl::StrCat(roots, declare_size ? " streamed" : " read back"));
    fec_roots_ = roots;
    Reopen();
    // 300 blocks: 3 level-0 tree blocks and the top one; 2 or 3 RS groups.
    PutBlob(MakeData(static_cast<uint64_t>(300 + roots) * kBlock,
                     2 * roots + declare_size),
            declare_size);
    const std::string data = absl::StrCat(dir_, "/data");
    const std::string hash = absl::StrCat(TestTempDir(), "/vs-hash");
    const std::string fec = absl::StrCat(TestTempDir(), "/vs-fec");
    unlink(hash.c_str());
    unlink(fec.c_str());
    const std::string options = absl::StrCat(
        " --no-superblock --salt=- --data-block-size=4096 "
        "--hash-block-size=4096 --fec-roots=",
        roots, " ");
    absl::StatusOr<std::string> formatted = RunShellCommand(absl::StrCat(
        kVeritysetup, " format", options, "--fec-device=", ShellQuote(fec), " ",
        ShellQuote(data), " ", ShellQuote(hash), " 2>&1"));
    ASSERT_TRUE(formatted.ok()) << formatted.status();
    EXPECT_TRUE(*ReadWholeFile(fec) == pristine_["fec"]) << roots << " roots";
    EXPECT_TRUE(*ReadWholeFile(hash) == pristine_["tree"]);
    // veritysetup verify, with our tree and our parity.
    const std::string root =
        absl::BytesToHexString(Open()->blob().descriptor().root_hash);
    absl::StatusOr<std::string> verified = RunShellCommand(absl::StrCat(
        kVeritysetup, " verify", options, "--fec-device=",
        ShellQuote(absl::StrCat(dir_, "/fec")), " ", ShellQuote(data), " ",
        ShellQuote(absl::StrCat(dir_, "/tree")), " ", root, " 2>&1"));
    EXPECT_TRUE(verified.ok()) << verified.status();
  }
}

TEST_F(FecRepairTest, NoParityWithoutRoots) {
  fec_roots_ = 0;
  Reopen();
  data_ = MakeData(10 * kBlock, 1);
  digest_ = MustPut(data_);
  EXPECT_EQ(
      access(absl::StrCat(BlobDirFor(root_, digest_), "/fec").c_str(), F_OK),
      -1);
  EXPECT_EQ(Open()->blob().fec_roots(), 0);
}

TEST_F(FecRepairTest, RepairsUpToRootsBadBlocksPerGroup) {
  // 701 data blocks (the last partial), 6 level-0 tree blocks and the top
  // one: 708 blocks in 3 RS groups of k = 251. Member j of group r is block
  // r + 3j: data for j < 234 (block 700, the partial one, is group 1's
  // j = 233), then the tree: the top block is group 2's j = 233, level-0
  // block b is block 702 + b.
  PutBlob(MakeData(700 * kBlock + 1000, 7));
  ASSERT_EQ(Open()->blob().fec_roots(), 4);
  struct Case {
    uint64_t group;
    std::vector<int> members;
  };
  std::vector<Case> cases;
  for (uint64_t r = 0; r < 3; ++r) {
    // Data blocks under none of group r's level-0 tree blocks (j = 234 and
    // 235: see BadTreeBlockAndABlockUnderItInOneGroup).
    const int away = r == 2 ? 10 : 100;
    const int other = r == 0 ? 200 : 3;
    for (const std::vector<int>& members :
         std::vector<std::vector<int>>{{0},
                                       {10, 20},
                                       {1, 50, 101},
                                       {5, 6, 7, 8},
                                       {234},
                                       {234, away},
                                       {234, 235, away},
                                       {other, 234, 235, away}}) {
      cases.push_back({r, members});
    }
  }
  cases.push_back({1, {233}});       // the partial last data block
  cases.push_back({2, {233}});       // the top tree block
  cases.push_back({2, {233, 234}});  // and a level-0 block under it
  cases.push_back({2, {233, 234, 235}});
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat("group ", c.group, ", ", c.members.size(),
                              " bad, first member ", c.members[0]));
    Restore();
    for (int j : c.members) Corrupt(c.group + 3 * j);
    int repaired = 0;
    std::shared_ptr<VerifiedBlob> blob = Open();
    absl::StatusOr<std::string> read = ReadRepairing(*blob, &repaired);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_TRUE(*read == data_);
    EXPECT_EQ(repaired, static_cast<int>(c.members.size()));
    EXPECT_TRUE(FilesArePristine());
  }
  // A restart reads the repaired blob with no repair.
  Reopen();
  std::string out;
  EXPECT_TRUE(ReadVerified(*Open(), 0, data_blocks(), &out).ok());
  EXPECT_TRUE(out == data_);
}

// Through a blob whose every read is counted: a target that checks good is
// the only block read (with its tree path), and a repair reads no block
// twice and no verified tree block at all, though in a blob of one RS group
// every tree block is both a member and on the members' paths.
TEST_F(FecRepairTest, TheTargetFirstAndNoBlockReadTwice) {
  // 200 data blocks; the top tree block is block 200, the level-0 blocks
  // over data blocks 0-127 and 128-199 are 201 and 202.
  PutBlob(MakeData(200 * kBlock, 12));
  auto remote = std::make_shared<RemoteBlob>(Open()->blob().shared_from_this());
  const auto fresh = [&remote] {
    remote->ResetCounts();
    return *VerifiedBlob::Create(remote);
  };
  std::shared_ptr<VerifiedBlob> blob = fresh();
  ASSERT_EQ(blob->blob().fec_roots(), 4);
  EXPECT_EQ(*RepairFecGroup(*blob, 7), 0);
  EXPECT_EQ(remote->reads(BlobPart::kData), 1);
  EXPECT_EQ(remote->reads_at(BlobPart::kData, 7 * kBlock), 1);
  EXPECT_EQ(remote->reads(BlobPart::kTree), 2);
  EXPECT_EQ(remote->reads(BlobPart::kFec), 0);

  // A bad data block that a read found, its path verified by that read.
  Corrupt(7);
  blob = fresh();
  std::string out;
  ASSERT_FALSE(ReadVerified(*blob, 7, 8, &out).ok());
  remote->ResetCounts();
  EXPECT_EQ(*RepairFecGroup(*blob, 7), 1);
  EXPECT_EQ(remote->most_reads_of_one_place(), 1);
  EXPECT_EQ(remote->reads(BlobPart::kData), 200);
  EXPECT_EQ(remote->reads(BlobPart::kTree), 1);  // 202, for 128-199
  EXPECT_EQ(remote->reads(BlobPart::kFec), 1);
  EXPECT_TRUE(FilesArePristine());

  // A bad tree block, nothing verified before.
  Corrupt(201);
  blob = fresh();
  EXPECT_EQ(*RepairFecGroup(*blob, 201), 1);
  EXPECT_EQ(remote->most_reads_of_one_place(), 1);
  EXPECT_EQ(remote->reads(BlobPart::kTree), 3);
  EXPECT_TRUE(FilesArePristine());
}

TEST_F(FecRepairTest, MoreBadBlocksThanRootsIsDataLoss) {
  PutBlob(MakeData(700 * kBlock, 8));
  for (int j : {0, 1, 2, 3, 4}) Corrupt(3 * j);
  int repaired = 0;
  std::shared_ptr<VerifiedBlob> blob = Open();
  absl::StatusOr<std::string> read = ReadRepairing(*blob, &repaired);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(read.status().message().find("5 bad blocks in its RS group"),
            absl::string_view::npos)
      << read.status();
  EXPECT_EQ(repaired, 0);
  // The bad blocks stay as they were: nothing was written over them.
  EXPECT_TRUE(*ReadWholeFile(absl::StrCat(dir_, "/data")) ==
              Corrupted({0, 3, 6, 9, 12}));
}

// The limit of using blocks that cannot be checked as they are: a bad tree
// block and a bad data block under it in one group rebuild a wrong tree
// block, which its check refuses. (In a blob of 128 groups or more, no group
// holds two data blocks under one level-0 tree block.)
TEST_F(FecRepairTest, BadTreeBlockAndABlockUnderItInOneGroup) {
  PutBlob(MakeData(700 * kBlock, 11));
  // 700 data blocks, then the top tree block (700) and level-0 block b at
  // 701 + b; 3 groups.
  Corrupt(702);  // group 0: level-0 tree block 1, over data blocks 128-255
  Corrupt(129);  // group 0: a data block under it
  int repaired = 0;
  std::shared_ptr<VerifiedBlob> blob = Open();
  absl::StatusOr<std::string> read = ReadRepairing(*blob, &repaired);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(repaired, 0);
}

// The parity is not trusted: a damaged byte of it rebuilds a wrong block,
// which its check refuses.
TEST_F(FecRepairTest, DamagedParityNeverRebuildsAWrongByte) {
  PutBlob(MakeData(700 * kBlock, 9));
  const std::string fec_path = absl::StrCat(dir_, "/fec");
  std::string fec = pristine_["fec"];
  fec[100 * 4] ^= 0x01;  // group 0, byte 100, the first parity row
  ASSERT_TRUE(WriteWholeFile(fec_path, fec).ok());
  Corrupt(3 * 9);  // group 0, member 9
  int repaired = 0;
  std::shared_ptr<VerifiedBlob> blob = Open();
  absl::StatusOr<std::string> read = ReadRepairing(*blob, &repaired);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(read.status().message().find("fails its check"),
            absl::string_view::npos)
      << read.status();
  EXPECT_EQ(repaired, 0);
  EXPECT_TRUE(*ReadWholeFile(absl::StrCat(dir_, "/data")) == Corrupted({27}));
}

// A repair whose write-back fails serves nothing and leaves the block as it
// was; the next read repairs it.
TEST_F(FecRepairTest, AFailedWriteBackServesNothing) {
  FaultFileSystem fs;
  file_system_ = &fs;
  Reopen();
  PutBlob(MakeData(300 * kBlock, 12));
  for (const Fault& fault : {Fault{FileOp::kPwrite, 0, false, "/data", EIO},
                             Fault{FileOp::kFsync, 0, false, "/data", EIO}}) {
    SCOPED_TRACE(FileOpName(fault.op));
    Restore();
    Corrupt(5);
    fs.Inject(fault);
    int repaired = 0;
    std::shared_ptr<VerifiedBlob> blob = Open();
    absl::StatusOr<std::string> read = ReadRepairing(*blob, &repaired);
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInternal)
        << read.status();
    fs.Reset();
    if (fault.op == FileOp::kPwrite) {
      EXPECT_TRUE(*ReadWholeFile(absl::StrCat(dir_, "/data")) ==
                  Corrupted({5}));
    }
    read = ReadRepairing(*Open(), &repaired);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_TRUE(*read == data_);
    EXPECT_TRUE(FilesArePristine());
  }
}

// A parity file of the wrong size is not used: the blob reads as without
// FEC, good blocks served, bad ones DATA_LOSS.
TEST_F(FecRepairTest, TruncatedParityIsNotUsed) {
  PutBlob(MakeData(700 * kBlock, 10));
  ASSERT_TRUE(WriteWholeFile(absl::StrCat(dir_, "/fec"),
                             pristine_["fec"].substr(0, 5000))
                  .ok());
  Reopen();
  std::shared_ptr<VerifiedBlob> blob = Open();
  EXPECT_EQ(blob->blob().fec_roots(), 0);
  std::string out;
  ASSERT_TRUE(ReadVerified(*blob, 0, data_blocks(), &out).ok());
  EXPECT_TRUE(out == data_);
  Corrupt(5);
  blob = Open();
  EXPECT_EQ(ReadVerified(*blob, 0, data_blocks(), &out).code(),
            absl::StatusCode::kDataLoss);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace verity::server
