// verityd end to end, in process: a real server on 127.0.0.1:0 over a real
// store, the client's verifying reader on the other side. Round trips, ranges,
// restart, corruption, bad input.

#include <grpcpp/generic/generic_stub.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "client/sdk/grpc_status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/testing/test_blob.h"
#include "tests/testing/test_server.h"

namespace verity::testing {
namespace {

using ::absl::StatusCode;
using ::testing::HasSubstr;

TEST(ServerTest, RoundTripSizesAlgorithmsAndSalt) {
  auto server = TestServer::Start();
  for (const MerkleParams& params :
       {MerkleParams(), TestParams(HashAlgorithm::kSha256, 4096, "salt"),
        TestParams(HashAlgorithm::kSha512, 4096,
                   "pepper-32-bytes-long-exactly!!!!"),
        TestParams(HashAlgorithm::kSha256, 1024, "")}) {
    for (size_t size : {0, 1, 4095, 4096, 4097, (3 << 20) + 123}) {
      const std::string data = RandomBytes(size, static_cast<uint32_t>(size));
      absl::StatusOr<v1::PutResponse> put =
          PutBlob(server->stub(), data, params);
      ASSERT_TRUE(put.ok()) << put.status();
      const std::string digest = DigestOf(data, params);
      EXPECT_EQ(put->info().digest(), digest) << size;
      ReadResult read = ReadBlob(server->stub(), digest);
      ASSERT_TRUE(read.status.ok()) << read.status << " size " << size;
      EXPECT_TRUE(read.data == data) << size;
    }
  }
}

TEST(ServerTest, RangeReadsAtUnalignedOffsets) {
  auto server = TestServer::Start();
  const std::string data = RandomBytes(3 * 1024 * 1024 + 17, 5);
  ASSERT_TRUE(PutBlob(server->stub(), data).ok());
  const std::string digest = DigestOf(data);
  const std::vector<std::pair<uint64_t, uint64_t>> ranges = {
      {0, 1},
      {1, 10},
      {4095, 2},
      {5000, 70000},
      {1 << 20, 1},
      {12345, 1 << 21},
      {data.size() - 1, 1},
      {100, 0},
      {data.size(), 0}};
  for (const auto& [offset, length] : ranges) {
    ReadResult read = ReadBlob(server->stub(), digest, offset, length);
    ASSERT_TRUE(read.status.ok()) << read.status << " at " << offset;
    const std::string want =
        length == 0 ? data.substr(offset) : data.substr(offset, length);
    EXPECT_TRUE(read.data == want) << offset << "+" << length;
  }
}

TEST(ServerTest, SameContentIsStoredOnceAndNamesResolve) {
  auto server = TestServer::Start();
  const std::string data = RandomBytes(10000, 1);
  auto first = PutBlob(server->stub(), data, {}, "dir/first.bin");
  auto second = PutBlob(server->stub(), data, {}, "second");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_FALSE(first->already_present());
  EXPECT_TRUE(second->already_present());
  ReadResult by_name = ReadBlob(server->stub(), "", 0, 0, "dir/first.bin");
  ASSERT_TRUE(by_name.status.ok()) << by_name.status;
  EXPECT_TRUE(by_name.data == data);

  grpc::ClientContext context;
  v1::StatRequest stat;
  stat.set_name("second");
  v1::BlobInfo info;
  ASSERT_TRUE(server->stub().Stat(&context, stat, &info).ok());
  EXPECT_EQ(info.digest(), DigestOf(data));
  EXPECT_THAT(info.names(), ::testing::ElementsAre("dir/first.bin", "second"));
  EXPECT_EQ(info.fsverity_descriptor().data_size(), 10000u);
}

TEST(ServerTest, RestartKeepsEveryBlob) {
  auto server = TestServer::Start();
  std::vector<std::string> blobs;
  for (int i = 0; i < 20; ++i) {
    blobs.push_back(RandomBytes(1000 * i, i));
    ASSERT_TRUE(
        PutBlob(server->stub(), blobs.back(), {}, absl::StrCat("n", i)).ok());
  }
  server->Restart();
  for (int i = 0; i < 20; ++i) {
    ReadResult read = ReadBlob(server->stub(), DigestOf(blobs[i]));
    ASSERT_TRUE(read.status.ok()) << read.status;
    EXPECT_TRUE(read.data == blobs[i]);
    ReadResult by_name =
        ReadBlob(server->stub(), "", 0, 0, absl::StrCat("n", i));
    EXPECT_TRUE(by_name.status.ok()) << by_name.status;
  }
  grpc::ClientContext context;
  v1::ListRequest list;
  list.set_page_size(7);
  v1::ListResponse page;
  ASSERT_TRUE(server->stub().List(&context, list, &page).ok());
  EXPECT_EQ(page.blobs_size(), 7);
  EXPECT_FALSE(page.next_page_token().empty());
}

TEST(ServerTest, ListPagesThroughEverything) {
  auto server = TestServer::Start();
  for (int i = 0; i < 25; ++i)
    ASSERT_TRUE(PutBlob(server->stub(), RandomBytes(10, i)).ok());
  std::vector<std::string> seen;
  std::string token;
  do {
    grpc::ClientContext context;
    v1::ListRequest list;
    list.set_page_size(10);
    list.set_page_token(token);
    v1::ListResponse page;
    ASSERT_TRUE(server->stub().List(&context, list, &page).ok());
    for (const auto& blob : page.blobs()) seen.push_back(blob.digest());
    token = page.next_page_token();
  } while (!token.empty());
  EXPECT_EQ(seen.size(), 25u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
}

// The corruption tests run with FEC off (a bad block is DATA_LOSS) and on
// (the same flips are repaired, and the blob reads whole, then and after a
// restart).
class CorruptionTest : public ::testing::TestWithParam<int> {
 protected:
  server::ServerOptions Options() {
    server::ServerOptions options;
    options.store.fec_roots = GetParam();
    return options;
  }
  bool fec() const { return GetParam() != 0; }

  // With FEC on: `data` reads back whole, the repair was counted, and the
  // files are whole again (a restart reads them with no repair).
  void ExpectRepaired(TestServer& server, const std::string& data,
                      const std::string& file, uint64_t offset, char original) {
    const std::string digest = DigestOf(data);
    ReadResult read = ReadBlob(server.stub(), digest);
    EXPECT_TRUE(read.status.ok()) << read.status;
    EXPECT_TRUE(read.data == data);
    const auto& metrics = server.verityd().dispatch_metrics();
    EXPECT_GE(metrics.fec_repaired_blocks(), 1u);
    EXPECT_EQ(metrics.fec_repair_failures(), 0u);
    std::ifstream in(BlobDir(server, digest) + file, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(offset));
    EXPECT_EQ(in.get(), static_cast<unsigned char>(original));
    server.Restart();
    read = ReadBlob(server.stub(), digest);
    EXPECT_TRUE(read.status.ok()) << read.status;
    EXPECT_TRUE(read.data == data);
    EXPECT_EQ(server.verityd().dispatch_metrics().fec_repaired_blocks(), 0u);
  }
};

INSTANTIATE_TEST_SUITE_P(FecOffAndOn, CorruptionTest, ::testing::Values(0, 2),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param == 0
                                      ? std::string("FecOff")
                                      : absl::StrCat("FecRoots", info.param);
                         });

// Corruption in the data file: the read fails with DATA_LOSS naming the blob
// and offset, and every byte the client received is a verified byte of the true
// content, none of the bad block; with FEC, the block is repaired.
TEST_P(CorruptionTest, FlippedDataBitIsDataLossAndNeverSent) {
  auto server = TestServer::Start(Options());
  const std::string data = RandomBytes(300 * 4096, 9);
  ASSERT_TRUE(PutBlob(server->stub(), data).ok());
  const std::string digest = DigestOf(data);
  const uint64_t bad = 200 * 4096 + 77;
  FlipBit(BlobDir(*server, digest) + "/data", bad);
  if (fec()) {
    ExpectRepaired(*server, data, "/data", bad, data[bad]);
    return;
  }
  ReadResult read = ReadBlob(server->stub(), digest);
  EXPECT_EQ(read.status.code(), StatusCode::kDataLoss) << read.status;
  EXPECT_THAT(std::string(read.status.message()), HasSubstr(digest));
  EXPECT_THAT(std::string(read.status.message()), HasSubstr("offset 819200"));
  EXPECT_LE(read.data.size(), 200u * 4096);
  EXPECT_TRUE(read.data == data.substr(0, read.data.size()));
  // A range that avoids the bad block still reads.
  ReadResult before = ReadBlob(server->stub(), digest, 0, 4096 * 100);
  EXPECT_TRUE(before.status.ok()) << before.status;
}

// A stream's chunks start at 256 KiB and never pass 2 MiB (the window grows
// while the client keeps up: ChunkWindow), and they are consecutive whole
// blocks covering the range.
TEST(ServerTest, ReadChunksStayWithinTheirWindow) {
  auto server = TestServer::Start();
  const std::string data = RandomBytes((24 << 20) + 100, 12);
  ASSERT_TRUE(PutBlob(server->stub(), data).ok());
  grpc::ClientContext context;
  v1::ReadRequest request;
  request.set_digest(DigestOf(data));
  auto reader = server->stub().Read(&context, request);
  std::vector<uint64_t> sizes;
  uint64_t next = 0;
  for (v1::ReadResponse msg; reader->Read(&msg);) {
    if (msg.data().empty()) continue;
    EXPECT_EQ(msg.data_offset(), next);
    EXPECT_TRUE(msg.data() == data.substr(next, msg.data().size()));
    next += msg.data().size();
    sizes.push_back(msg.data().size());
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_EQ(next, data.size());
  ASSERT_FALSE(sizes.empty());
  EXPECT_EQ(sizes.front(), 256u << 10);
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    EXPECT_EQ(sizes[i] % 4096, 0u) << i;
    EXPECT_GE(sizes[i], 256u << 10) << i;
    EXPECT_LE(sizes[i], 2u << 20) << i;
  }
}

TEST_P(CorruptionTest, FlippedTreeBitIsDataLoss) {
  auto server = TestServer::Start(Options());
  const std::string data =
      RandomBytes(1000 * 4096, 10);  // 8 level-0 blocks, 1 top
  ASSERT_TRUE(PutBlob(server->stub(), data).ok());
  const std::string digest = DigestOf(data);
  const std::string tree = BlobDir(*server, digest) + "/tree";
  char original;
  {
    std::ifstream in(tree, std::ios::binary);
    in.seekg(4096 * 3 + 5);
    original = static_cast<char>(in.get());
  }
  FlipBit(tree, 4096 * 3 + 5);  // level 0, block 2
  if (fec()) {
    ExpectRepaired(*server, data, "/tree", 4096 * 3 + 5, original);
    return;
  }
  ReadResult read = ReadBlob(server->stub(), digest);
  EXPECT_EQ(read.status.code(), StatusCode::kDataLoss) << read.status;
  EXPECT_TRUE(read.data == data.substr(0, read.data.size()));
  EXPECT_LE(read.data.size(),
            2u * 128 * 4096);  // nothing under level-0 block 2
}

// With FEC, the flip is repaired and nothing is quarantined.
TEST_P(CorruptionTest, QuarantineStopsServingUntilRePut) {
  server::ServerOptions options = Options();
  options.service.on_corruption = server::OnCorruption::kQuarantine;
  auto server = TestServer::Start(options);
  const std::string data = RandomBytes(20 * 4096, 11);
  ASSERT_TRUE(PutBlob(server->stub(), data).ok());
  const std::string digest = DigestOf(data);
  FlipBit(BlobDir(*server, digest) + "/data", 5 * 4096);
  if (fec()) {
    ExpectRepaired(*server, data, "/data", 5 * 4096, data[5 * 4096]);
    return;
  }
  EXPECT_EQ(ReadBlob(server->stub(), digest).status.code(),
            StatusCode::kDataLoss);
  // Quarantined: even the intact first block is no longer served.
  ReadResult after = ReadBlob(server->stub(), digest, 0, 10);
  EXPECT_FALSE(after.status.ok());
  EXPECT_TRUE(after.data.empty());
  auto reput = PutBlob(server->stub(), data);
  ASSERT_TRUE(reput.ok()) << reput.status();
  EXPECT_FALSE(reput->already_present());
  ReadResult healed = ReadBlob(server->stub(), digest);
  EXPECT_TRUE(healed.status.ok()) << healed.status;
  EXPECT_TRUE(healed.data == data);
}

// The status of a Read stream, or of a ReadSmall call if `small`, of
// `request`.
absl::Status ReadStatus(TestServer& server, const v1::ReadRequest& request,
                        bool small) {
  grpc::ClientContext context;
  v1::ReadResponse response;
  if (small) {
    return client::FromGrpcStatus(
        server.stub().ReadSmall(&context, request, &response));
  }
  auto reader = server.stub().Read(&context, request);
  while (reader->Read(&response)) {
  }
  return client::FromGrpcStatus(reader->Finish());
}

// Read and ReadSmall check a request alike.
TEST(ServerTest, BadReadsGetTheRightCode) {
  auto server = TestServer::Start();
  const std::string data = RandomBytes(5000, 3);
  ASSERT_TRUE(PutBlob(server->stub(), data).ok());
  for (const bool small : {false, true}) {
    SCOPED_TRACE(small ? "ReadSmall" : "Read");
    v1::ReadRequest request;
    request.set_digest(DigestOf(RandomBytes(5000, 4)));
    EXPECT_EQ(ReadStatus(*server, request, small).code(),
              StatusCode::kNotFound);
    request.set_digest("sha256:1234");
    EXPECT_EQ(ReadStatus(*server, request, small).code(),
              StatusCode::kInvalidArgument);
    request.set_digest("md5:" + std::string(32, 'a'));
    EXPECT_EQ(ReadStatus(*server, request, small).code(),
              StatusCode::kInvalidArgument);
    request.set_name("no/such/name");
    EXPECT_EQ(ReadStatus(*server, request, small).code(),
              StatusCode::kNotFound);
    request.set_digest(DigestOf(data));
    request.set_offset(5001);
    EXPECT_EQ(ReadStatus(*server, request, small).code(),
              StatusCode::kOutOfRange);
    request.set_offset(10);
    request.set_length(~uint64_t{0});
    EXPECT_EQ(ReadStatus(*server, request, small).code(),
              StatusCode::kInvalidArgument);
    request.set_length(4991);
    EXPECT_EQ(ReadStatus(*server, request, small).code(),
              StatusCode::kOutOfRange);
    request.set_length(4990);
    EXPECT_EQ(ReadStatus(*server, request, small).code(), StatusCode::kOk);
    // A malformed request is INVALID_ARGUMENT whatever the store holds: an
    // overflowing range beats a missing blob and an offset past the end.
    request.set_offset(6000);
    request.set_length(~uint64_t{0});
    EXPECT_EQ(ReadStatus(*server, request, small).code(),
              StatusCode::kInvalidArgument);
    request.set_digest(DigestOf(RandomBytes(5000, 4)));
    EXPECT_EQ(ReadStatus(*server, request, small).code(),
              StatusCode::kInvalidArgument);
    request.set_digest(DigestOf(data));
    request.set_offset(10);
    request.set_length(4990);
    request.set_priority_class(static_cast<v1::PriorityClass>(7));
    EXPECT_EQ(ReadStatus(*server, request, small).code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(ReadStatus(*server, v1::ReadRequest(), small).code(),
              StatusCode::kInvalidArgument);
  }
}

// Read's and ReadSmall's handlers parse their requests themselves (they are
// raw methods, to send data without copying it): bytes that are no
// ReadRequest are INVALID_ARGUMENT.
TEST(ServerTest, MalformedReadRequestIsInvalidArgument) {
  auto server = TestServer::Start();
  grpc::GenericStub generic(server->channel());
  const std::string garbage = "\x2a\xff\xff\xff";  // field 5, length cut off
  grpc::Slice slice(garbage);
  const grpc::ByteBuffer request(&slice, 1);
  for (const char* method :
       {"/verity.v1.Verity/Read", "/verity.v1.Verity/ReadSmall"}) {
    grpc::ByteBuffer response;
    grpc::ClientContext context;
    absl::Notification done;
    grpc::Status status;
    generic.UnaryCall(&context, method, grpc::StubOptions(), &request,
                      &response, [&](grpc::Status s) {
                        status = std::move(s);
                        done.Notify();
                      });
    done.WaitForNotification();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << method << ": " << status.error_message();
  }
}

TEST(ServerTest, BadPutsStoreNothingAndTheServerStaysUp) {
  server::ServerOptions options;
  options.store.max_blob_bytes = 1 << 20;
  auto server = TestServer::Start(options);
  const std::string data = RandomBytes(5000, 3);
  EXPECT_EQ(PutBlob(server->stub(), data,
                    TestParams(HashAlgorithm::kSha256, 3000, ""))
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      PutBlob(server->stub(), data,
              TestParams(HashAlgorithm::kSha256, 4096, std::string(33, 's')))
          .status()
          .code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(PutBlob(server->stub(), data, {}, "", "sha256:zz").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(PutBlob(server->stub(), data, {}, "../escape").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      PutBlob(server->stub(), data, {}, "", DigestOf("other")).status().code(),
      StatusCode::kDataLoss);
  EXPECT_EQ(
      PutBlob(server->stub(), RandomBytes((1 << 20) + 1, 1)).status().code(),
      StatusCode::kResourceExhausted);
  grpc::ClientContext context;
  v1::ListResponse list;
  ASSERT_TRUE(server->stub().List(&context, v1::ListRequest(), &list).ok());
  EXPECT_EQ(list.blobs_size(), 0);
  EXPECT_EQ(ReadBlob(server->stub(), DigestOf(data)).status.code(),
            StatusCode::kNotFound);
  // The expected digest that matches is accepted.
  EXPECT_TRUE(PutBlob(server->stub(), data, {}, "", DigestOf(data)).ok());
}

// The status a raw Read of `request` ends with, its messages discarded.
grpc::Status RawReadStatus(v1::Verity::Stub& stub,
                           const v1::ReadRequest& request) {
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReader<v1::ReadResponse>> reader =
      stub.Read(&context, request);
  v1::ReadResponse response;
  while (reader->Read(&response)) {
  }
  return reader->Finish();
}

TEST(ServerTest, HeldTreeBlockListsAreBounded) {
  server::ServerOptions options;
  options.service.max_have_tree_blocks = 4;
  auto server = TestServer::Start(options);
  const std::string data = RandomBytes(1 << 20, 5);
  ASSERT_TRUE(PutBlob(server->stub(), data).ok());
  v1::ReadRequest request;
  request.set_digest(DigestOf(data));
  // Indexes outside the tree are ignored, not refused.
  for (uint64_t index : {0, 1, 2, 1000000}) request.add_have_tree_blocks(index);
  EXPECT_TRUE(RawReadStatus(server->stub(), request).ok());
  request.add_have_tree_blocks(3);
  const grpc::Status refused = RawReadStatus(server->stub(), request);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("at most 4"), std::string::npos)
      << refused.error_message();
}

// Puts beyond --max_puts are refused while the others run; once one ends,
// another may start.
TEST(ServerTest, ConcurrentPutsAreBounded) {
  server::ServerOptions options;
  options.service.max_puts = 2;
  auto server = TestServer::Start(options);
  v1::PutRequest header;
  header.mutable_header();  // the default tree parameters
  struct OpenPut {
    grpc::ClientContext context;
    v1::PutResponse response;
    std::unique_ptr<grpc::ClientWriter<v1::PutRequest>> writer;
  };
  OpenPut open[2];
  for (OpenPut& put : open) {
    put.writer = server->stub().Put(&put.context, &put.response);
    ASSERT_TRUE(put.writer->Write(header));
  }
  // Both are admitted when their calls start; give them time to.
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(PutBlob(server->stub(), "third").status().code(),
            StatusCode::kResourceExhausted);
  // Reads are not Puts.
  EXPECT_EQ(ReadBlob(server->stub(), DigestOf("x")).status.code(),
            StatusCode::kNotFound);
  ASSERT_TRUE(open[0].writer->WritesDone());
  EXPECT_TRUE(open[0].writer->Finish().ok());
  EXPECT_TRUE(PutBlob(server->stub(), "third").ok());
  open[1].context.TryCancel();
  open[1].writer->Finish();
}

// Each connection gets --max_call_rate calls a second, a second's worth at
// once; another connection has its own budget.
TEST(ServerTest, CallRatesArePerConnection) {
  server::ServerOptions options;
  options.service.max_call_rate = 5;
  auto server = TestServer::Start(options);
  auto statuses = [&](v1::Verity::Stub& stub) {
    std::map<grpc::StatusCode, int> codes;
    for (int i = 0; i < 20; ++i) {
      grpc::ClientContext context;
      v1::StatRequest request;
      request.set_digest(DigestOf("absent"));
      v1::BlobInfo info;
      ++codes[stub.Stat(&context, request, &info).error_code()];
    }
    return codes;
  };
  std::map<grpc::StatusCode, int> first = statuses(server->stub());
  EXPECT_GE(first[grpc::StatusCode::NOT_FOUND], 5);
  EXPECT_LE(first[grpc::StatusCode::NOT_FOUND], 7);  // refilled meanwhile
  EXPECT_GE(first[grpc::StatusCode::RESOURCE_EXHAUSTED], 13);
  // A channel of its own (no shared subchannel): a new connection.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto other = v1::Verity::NewStub(grpc::CreateCustomChannel(
      server->verityd().address(), grpc::InsecureChannelCredentials(), args));
  EXPECT_GE(statuses(*other)[grpc::StatusCode::NOT_FOUND], 5);
}

// A client that stops taking messages, or stops sending them, loses its
// stream after --stream_idle_timeout, and its slot with it.
TEST(ServerTest, StalledStreamsAreCancelled) {
  server::ServerOptions options;
  options.service.stream_idle_timeout = absl::Milliseconds(300);
  options.service.max_streams = 1;
  auto server = TestServer::Start(options);
  const std::string data = RandomBytes(48 << 20, 6);
  ASSERT_TRUE(PutBlob(server->stub(), data).ok());
  v1::ReadRequest request;
  request.set_digest(DigestOf(data));
  grpc::ClientContext read_context;
  auto reader = server->stub().Read(&read_context, request);
  v1::ReadResponse response;
  ASSERT_TRUE(reader->Read(&response));
  absl::SleepFor(absl::Seconds(1.5));  // what the transport holds fills up
  uint64_t bytes = response.data().size();
  while (reader->Read(&response)) bytes += response.data().size();
  EXPECT_LT(bytes, data.size());
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);

  // A Put that sends its header and then nothing.
  grpc::ClientContext put_context;
  v1::PutResponse put_response;
  auto writer = server->stub().Put(&put_context, &put_response);
  v1::PutRequest header;
  header.mutable_header();
  ASSERT_TRUE(writer->Write(header));
  absl::SleepFor(absl::Seconds(1));
  EXPECT_EQ(writer->Finish().error_code(), grpc::StatusCode::CANCELLED);
  // Both slots are free again: the only stream allowed is admitted.
  EXPECT_TRUE(ReadBlob(server->stub(), DigestOf(data), 0, 4096).status.ok());
}

TEST(ServerTest, DeleteByNameKeepsTheBlobByDigestRemovesIt) {
  auto server = TestServer::Start();
  const std::string data = RandomBytes(5000, 3);
  ASSERT_TRUE(PutBlob(server->stub(), data, {}, "a").ok());
  const std::string digest = DigestOf(data);
  {
    grpc::ClientContext context;
    v1::DeleteRequest request;
    request.set_name("a");
    v1::DeleteResponse response;
    ASSERT_TRUE(server->stub().Delete(&context, request, &response).ok());
  }
  EXPECT_EQ(ReadBlob(server->stub(), "", 0, 0, "a").status.code(),
            StatusCode::kNotFound);
  EXPECT_TRUE(ReadBlob(server->stub(), digest).status.ok());
  {
    grpc::ClientContext context;
    v1::DeleteRequest request;
    request.set_digest(digest);
    v1::DeleteResponse response;
    ASSERT_TRUE(server->stub().Delete(&context, request, &response).ok());
  }
  EXPECT_EQ(ReadBlob(server->stub(), digest).status.code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace verity::testing
