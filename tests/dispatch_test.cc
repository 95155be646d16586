// Verification dispatch end to end, through a real server: where reads of
// each size and class are verified, and that every --dispatch mode sends
// byte-identical responses.

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/base/priority_class.h"
#include "server/dispatch/dispatch_policy.h"
#include "tests/testing/test_server.h"

namespace verity::server {
namespace {

using testing::TestServer;

constexpr size_t kBlobSize = (3 << 20) + 777;

struct Raw {
  grpc::Status status;
  std::string data;       // the data fields, concatenated
  std::string responses;  // every response, serialized
};

v1::ReadRequest RequestFor(const std::string& digest, uint64_t offset,
                           uint64_t length, PriorityClass priority_class,
                           bool have_whole_tree) {
  v1::ReadRequest request;
  request.set_digest(digest);
  request.set_offset(offset);
  request.set_length(length);
  request.set_priority_class(
      static_cast<v1::PriorityClass>(Index(priority_class)));
  request.set_have_whole_tree(have_whole_tree);
  return request;
}

// One Read as a client with the whole tree already (so the server sends only
// data), at `priority_class`.
Raw RawRead(v1::Verity::Stub& stub, const std::string& digest, uint64_t offset,
            uint64_t length, PriorityClass priority_class,
            bool have_whole_tree = true) {
  const v1::ReadRequest request =
      RequestFor(digest, offset, length, priority_class, have_whole_tree);
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReader<v1::ReadResponse>> reader =
      stub.Read(&context, request);
  Raw raw;
  v1::ReadResponse response;
  while (reader->Read(&response)) {
    raw.data += response.data();
    raw.responses += response.SerializeAsString();
  }
  raw.status = reader->Finish();
  return raw;
}

std::unique_ptr<TestServer> StartWith(DispatchMode mode,
                                      const std::string& limits = "") {
  server::ServerOptions options;
  options.dispatch = mode;
  options.inline_limit_bytes = limits;
  // Placement by size and cache state is what is tested here. The budget
  // charges wall time, which a loaded machine (or a sanitizer) stretches past
  // 2 ms for a single 4 KiB read; its own tests are in server/dispatch/.
  options.inline_budget.budget = options.inline_budget.window;
  // Every mode sends the same messages: chunks of one size, whatever the pace.
  options.service.max_read_chunk_bytes = options.service.read_chunk_bytes;
  return TestServer::Start(options);
}

class DispatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = testing::RandomBytes(kBlobSize, 5);
    digest_ = testing::DigestOf(data_);
  }

  // Puts the blob, then reads it once so that its whole tree is cached.
  void PutAndWarm(TestServer& server) {
    ASSERT_TRUE(testing::PutBlob(server.stub(), data_).ok());
    ASSERT_TRUE(
        RawRead(server.stub(), digest_, 0, 0, PriorityClass::kBe).status.ok());
  }

  uint64_t Placed(TestServer& server, DispatchPath path, PriorityClass c,
                  DispatchReason reason) {
    return server.verityd().dispatch_metrics().placements(path, c, reason);
  }

  std::string data_;
  std::string digest_;
};

TEST_F(DispatchTest, SmallUrgentReadsGoInlineLargeAndIdleToThePool) {
  std::unique_ptr<TestServer> server = StartWith(DispatchMode::kAdaptive);
  PutAndWarm(*server);
  for (PriorityClass c :
       {PriorityClass::kRt, PriorityClass::kBe, PriorityClass::kNone}) {
    Raw small = RawRead(server->stub(), digest_, 8192, 4096, c);
    ASSERT_TRUE(small.status.ok()) << small.status.error_message();
    EXPECT_EQ(small.data, data_.substr(8192, 4096));
    EXPECT_EQ(
        Placed(*server, DispatchPath::kInline, c, DispatchReason::kWithinLimit),
        1)
        << PriorityClassName(c);
  }
  for (PriorityClass c : kAllPriorityClasses) {
    Raw large = RawRead(server->stub(), digest_, 4096, 512 << 10, c);
    ASSERT_TRUE(large.status.ok()) << large.status.error_message();
    EXPECT_EQ(large.data, data_.substr(4096, 512 << 10));
  }
  Raw idle = RawRead(server->stub(), digest_, 0, 4096, PriorityClass::kIdle);
  ASSERT_TRUE(idle.status.ok());
  EXPECT_EQ(Placed(*server, DispatchPath::kPool, PriorityClass::kRt,
                   DispatchReason::kSize),
            1);
  // The warm-up, one 512 KiB read and one 4 KiB read.
  EXPECT_EQ(Placed(*server, DispatchPath::kPool, PriorityClass::kIdle,
                   DispatchReason::kSize),
            2);
  EXPECT_EQ(Placed(*server, DispatchPath::kInline, PriorityClass::kIdle,
                   DispatchReason::kWithinLimit),
            0);
  EXPECT_GE(server->verityd().dispatch_metrics().queue_wait_count(
                PriorityClass::kIdle),
            2);
}

// One ReadSmall call, as RawRead's request.
Raw RawReadSmall(v1::Verity::Stub& stub, const std::string& digest,
                 uint64_t offset, uint64_t length,
                 PriorityClass priority_class) {
  const v1::ReadRequest request =
      RequestFor(digest, offset, length, priority_class, true);
  grpc::ClientContext context;
  v1::ReadResponse response;
  Raw raw;
  raw.status = stub.ReadSmall(&context, request, &response);
  raw.data = response.data();
  raw.responses = response.SerializeAsString();
  return raw;
}

// ReadSmall's read is placed by the rules a Read's chunk is: inline when
// small and urgent, on the pool when large or idle.
TEST_F(DispatchTest, SmallReadsArePlacedAsReadsAre) {
  std::unique_ptr<TestServer> server =
      StartWith(DispatchMode::kAdaptive, "rt=65536,be=65536,none=65536");
  PutAndWarm(*server);
  // How `read` changed the placements of class `c` on `path`.
  auto placed_by = [&](PriorityClass c, DispatchPath path,
                       DispatchReason reason,
                       const std::function<void()>& read) {
    const uint64_t before = Placed(*server, path, c, reason);
    read();
    return Placed(*server, path, c, reason) - before;
  };
  for (PriorityClass c : kAllPriorityClasses) {
    SCOPED_TRACE(PriorityClassName(c));
    const bool idle = c == PriorityClass::kIdle;
    auto small = [&] {
      Raw raw = RawReadSmall(server->stub(), digest_, 8192, 4096, c);
      ASSERT_TRUE(raw.status.ok()) << raw.status.error_message();
      EXPECT_EQ(raw.data, data_.substr(8192, 4096));
    };
    auto large = [&] {
      Raw raw = RawReadSmall(server->stub(), digest_, 0, 256 << 10, c);
      ASSERT_TRUE(raw.status.ok()) << raw.status.error_message();
      EXPECT_EQ(raw.data, data_.substr(0, 256 << 10));
    };
    EXPECT_EQ(placed_by(c, DispatchPath::kInline, DispatchReason::kWithinLimit,
                        small),
              idle ? 0u : 1u);
    EXPECT_EQ(placed_by(c, DispatchPath::kPool, DispatchReason::kSize, small),
              idle ? 1u : 0u);
    EXPECT_EQ(placed_by(c, DispatchPath::kPool, DispatchReason::kSize, large),
              1u);
  }
}

TEST_F(DispatchTest, ColdTreeFallsBackToThePool) {
  std::unique_ptr<TestServer> server = StartWith(DispatchMode::kAdaptive);
  ASSERT_TRUE(testing::PutBlob(server->stub(), data_).ok());
  server->Restart();  // nothing verified in memory
  Raw cold = RawRead(server->stub(), digest_, 4096, 4096, PriorityClass::kRt);
  ASSERT_TRUE(cold.status.ok()) << cold.status.error_message();
  EXPECT_EQ(cold.data, data_.substr(4096, 4096));
  EXPECT_EQ(Placed(*server, DispatchPath::kInline, PriorityClass::kRt,
                   DispatchReason::kWithinLimit),
            1);
  EXPECT_EQ(Placed(*server, DispatchPath::kPool, PriorityClass::kRt,
                   DispatchReason::kCacheMiss),
            1);
  // Now cached: the same read stays inline.
  ASSERT_TRUE(RawRead(server->stub(), digest_, 4096, 4096, PriorityClass::kRt)
                  .status.ok());
  EXPECT_EQ(Placed(*server, DispatchPath::kPool, PriorityClass::kRt,
                   DispatchReason::kCacheMiss),
            1);
}

TEST_F(DispatchTest, InlineLimitFlagOverridesCalibration) {
  std::unique_ptr<TestServer> server =
      StartWith(DispatchMode::kAdaptive, "rt=1048576,be=0");
  PutAndWarm(*server);
  ASSERT_TRUE(RawRead(server->stub(), digest_, 0, 512 << 10, PriorityClass::kRt)
                  .status.ok());
  ASSERT_TRUE(RawRead(server->stub(), digest_, 0, 4096, PriorityClass::kBe)
                  .status.ok());
  EXPECT_EQ(Placed(*server, DispatchPath::kInline, PriorityClass::kRt,
                   DispatchReason::kWithinLimit),
            1);
  EXPECT_EQ(Placed(*server, DispatchPath::kPool, PriorityClass::kBe,
                   DispatchReason::kSize),
            2);
}

TEST_F(DispatchTest, BadDispatchFlagsRefuseToStart) {
  server::ServerOptions options;
  options.store.root = testing::NewTempDir();
  options.listen = "127.0.0.1:0";
  options.inline_limit_bytes = "rt=lots";
  absl::StatusOr<std::unique_ptr<server::Verityd>> server =
      server::Verityd::Start(options);
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(DispatchTest, EveryModeSendsTheSameBytes) {
  struct Case {
    uint64_t offset;
    uint64_t length;
    PriorityClass priority_class;
    bool have_whole_tree;
  };
  const std::vector<Case> cases = {
      {0, 4096, PriorityClass::kRt, false},
      {4096 * 300, 8192, PriorityClass::kRt, true},
      {12345, 100000, PriorityClass::kBe, false},
      {0, 0, PriorityClass::kIdle, false},
      {kBlobSize - 5000, 5000, PriorityClass::kNone, false},
      {1 << 20, 512 << 10, PriorityClass::kBe, true},
  };
  std::vector<std::string> first;
  for (DispatchMode mode : {DispatchMode::kAdaptive, DispatchMode::kInline,
                            DispatchMode::kPool, DispatchMode::kPoolUnbound}) {
    SCOPED_TRACE(DispatchModeName(mode));
    std::unique_ptr<TestServer> server = StartWith(mode);
    ASSERT_TRUE(testing::PutBlob(server->stub(), data_).ok());
    std::vector<std::string> responses;
    for (const Case& c : cases) {
      Raw raw = RawRead(server->stub(), digest_, c.offset, c.length,
                        c.priority_class, c.have_whole_tree);
      ASSERT_TRUE(raw.status.ok()) << raw.status.error_message();
      const uint64_t length = c.length == 0 ? kBlobSize : c.length;
      EXPECT_EQ(raw.data.substr(c.offset % 4096, length),
                data_.substr(c.offset, length));
      responses.push_back(raw.responses);
      // The client's own verification agrees too.
      testing::ReadResult verified =
          testing::ReadBlob(server->stub(), digest_, c.offset, c.length);
      ASSERT_TRUE(verified.status.ok()) << verified.status;
      EXPECT_TRUE(verified.data == data_.substr(c.offset, length));
    }
    if (first.empty()) {
      first = responses;
    } else {
      EXPECT_TRUE(responses == first);
    }
  }
}

}  // namespace
}  // namespace verity::server
