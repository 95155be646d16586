// verityd over a failing disk, end to end: a real server on 127.0.0.1:0 whose
// file store calls a FaultFileSystem, the client's verifying reader on the
// other side. The gRPC codes a client sees for a full disk, EIO, fsync and
// rename failures, and a power cut before every step of a Put through the
// server.

#include <errno.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/testing/test_blob.h"
#include "server/store/file/testing/fault_file_system.h"
#include "tests/testing/test_server.h"

namespace verity::testing {
namespace {

using ::absl::StatusCode;
using ::verity::server::Fault;
using ::verity::server::FaultFileSystem;
using ::verity::server::FileOp;

// Quarantine on: an I/O error must not pass for corruption.
server::ServerOptions OptionsOver(FaultFileSystem* fs) {
  server::ServerOptions options;
  options.store.root = NewTempDir() + "/store";
  options.store.file_system = fs;
  options.service.on_corruption = server::OnCorruption::kQuarantine;
  return options;
}

StatusCode StatCode(TestServer& server, const std::string& digest) {
  grpc::ClientContext context;
  v1::StatRequest request;
  request.set_digest(digest);
  v1::BlobInfo info;
  return static_cast<StatusCode>(
      server.stub().Stat(&context, request, &info).error_code());
}

void ExpectReadsBack(TestServer& server, const std::string& data) {
  const ReadResult read = ReadBlob(server.stub(), DigestOf(data));
  EXPECT_TRUE(read.status.ok()) << read.status;
  EXPECT_TRUE(read.data == data);
}

TEST(StoreFaultTest, FullDiskIsResourceExhausted) {
  FaultFileSystem fs;
  auto server = TestServer::Start(OptionsOver(&fs));
  const std::string data = RandomBytes(300000, 1);
  fs.Inject(Fault{FileOp::kWrite, 2, true, "", ENOSPC});
  const absl::Status put = PutBlob(server->stub(), data).status();
  EXPECT_EQ(put.code(), StatusCode::kResourceExhausted) << put;
  fs.Reset();
  EXPECT_EQ(StatCode(*server, DigestOf(data)), StatusCode::kNotFound);
  ASSERT_TRUE(PutBlob(server->stub(), data).ok());
  ExpectReadsBack(*server, data);
}

TEST(StoreFaultTest, FailedFsyncOrRenameFailsThePutAndShowsNothing) {
  for (const FileOp op : {FileOp::kFsync, FileOp::kRename}) {
    SCOPED_TRACE(server::FileOpName(op));
    FaultFileSystem fs;
    auto server = TestServer::Start(OptionsOver(&fs));
    const std::string data = RandomBytes(50000, 2);
    fs.Inject(Fault{op, 1, false, "", EIO});
    const absl::Status put = PutBlob(server->stub(), data).status();
    EXPECT_EQ(put.code(), StatusCode::kInternal) << put;
    fs.Reset();
    EXPECT_EQ(StatCode(*server, DigestOf(data)), StatusCode::kNotFound);
    ASSERT_TRUE(PutBlob(server->stub(), data).ok());
    ExpectReadsBack(*server, data);
  }
}

TEST(StoreFaultTest, EioOnReadIsInternalAndQuarantinesNothing) {
  FaultFileSystem fs;
  auto server = TestServer::Start(OptionsOver(&fs));
  const std::string data = RandomBytes(100000, 3);
  ASSERT_TRUE(PutBlob(server->stub(), data).ok());
  fs.Inject(Fault{FileOp::kPread, 0, false, " data", EIO});
  const ReadResult read = ReadBlob(server->stub(), DigestOf(data));
  EXPECT_EQ(read.status.code(), StatusCode::kInternal) << read.status;
  EXPECT_TRUE(read.data.empty());
  fs.Reset();
  EXPECT_EQ(StatCode(*server, DigestOf(data)), StatusCode::kOk);
  ExpectReadsBack(*server, data);
}

TEST(StoreFaultTest, PowerCutAtEveryStepOfAPutKeepsWhatWasAcknowledged) {
  const std::string old_data = RandomBytes(20000, 4);
  const std::string new_data = RandomBytes(150000, 5);
  for (int step = 1;; ++step) {
    SCOPED_TRACE(absl::StrCat("crash before step ", step));
    FaultFileSystem fs;
    server::ServerOptions options = OptionsOver(&fs);
    auto server = TestServer::Start(options);
    ASSERT_TRUE(PutBlob(server->stub(), old_data, {}, "old").ok());
    ASSERT_TRUE(fs.TrackDurability(options.store.root).ok());
    fs.CrashAtCall(step);
    const absl::Status put =
        PutBlob(server->stub(), new_data, {}, "new").status();
    const bool crashed = fs.crashed();
    server.reset();
    fs.Reset();
    ASSERT_TRUE(fs.DropUnsynced().ok());
    server = TestServer::Start(options);
    ExpectReadsBack(*server, old_data);
    const ReadResult read = ReadBlob(server->stub(), DigestOf(new_data));
    if (!read.status.ok()) {
      EXPECT_FALSE(put.ok()) << "an acknowledged Put was lost";
      EXPECT_EQ(read.status.code(), StatusCode::kNotFound) << read.status;
      EXPECT_TRUE(read.data.empty());
    } else {
      EXPECT_TRUE(read.data == new_data);
    }
    ASSERT_TRUE(PutBlob(server->stub(), new_data, {}, "new").ok());
    ExpectReadsBack(*server, new_data);
    if (!crashed || HasFailure()) {
      EXPECT_TRUE(put.ok()) << put;
      RecordProperty("steps", step);
      break;
    }
  }
}

}  // namespace
}  // namespace verity::testing
