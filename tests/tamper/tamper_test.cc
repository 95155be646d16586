// Every way the tamper proxy corrupts a Read stream must end the read in
// DATA_LOSS, and every byte released must be genuine and come from before
// the damage: through client::ReadVerified and through the SDK, with one
// stream and with four.

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/tamper/stream_layout.h"
#include "tests/tamper/tamper_cases.h"
#include "tests/tamper/tamper_proxy.h"
#include "tests/tamper/tamper_readers.h"
#include "tests/testing/test_server.h"

namespace verity::tamper {
namespace {

using Writes = std::vector<std::pair<uint64_t, std::string>>;

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name = Describe(info.param);
  std::replace_if(
      name.begin(), name.end(), [](char ch) { return !std::isalnum(ch); }, '_');
  return name;
}

// The released bytes in range order; a gap or an overlap fails the test.
std::string InOrder(Writes writes) {
  std::sort(writes.begin(), writes.end());
  std::string all;
  for (const auto& [offset, data] : writes) {
    EXPECT_EQ(offset, all.size()) << "a gap or overlap in what was released";
    all += data;
  }
  return all;
}

// The security property: whatever was released is the blob's content at its
// place, however many streams delivered it.
void ExpectGenuine(const std::string& want, const Writes& writes) {
  for (const auto& [at, data] : writes) {
    EXPECT_TRUE(at <= want.size() && want.compare(at, data.size(), data) == 0)
        << data.size() << " corrupt bytes released at range offset " << at;
  }
}

bool AnyApplied(const std::vector<TamperOutcome>& outcomes) {
  return std::any_of(outcomes.begin(), outcomes.end(),
                     [](const TamperOutcome& o) { return o.applied; });
}

class TamperTest : public ::testing::TestWithParam<Case> {
 protected:
  // The blobs are put once; every case reads them through its own proxy.
  static void SetUpTestSuite() {
    server_ = testing::TestServer::Start().release();
    for (int id = 0; id < kBlobCount; ++id) {
      const BlobSpec& spec = Blob(static_cast<BlobId>(id));
      content_[id] = testing::RandomBytes(spec.size, 100 + id);
      digest_[id] = Put(content_[id], ParamsOf(spec));
      // Same size and parameters: only the digest tells them apart.
      other_digest_[id] =
          Put(testing::RandomBytes(spec.size, 200 + id), ParamsOf(spec));
    }
  }
  static void TearDownTestSuite() { delete server_; }

  static std::string Put(const std::string& content,
                         const MerkleParams& params) {
    absl::StatusOr<v1::PutResponse> put =
        testing::PutBlob(server_->stub(), content, params);
    return put.ok() ? put->info().digest() : "";
  }

  // A proxy in front of the server, tampering as the case says.
  static std::unique_ptr<TamperProxy> StartProxy(const Case& c) {
    TamperProxyOptions options;
    options.upstream = server_->verityd().address();
    options.tamper = c.tamper;
    options.tamper.other_digest = other_digest_[c.blob];
    absl::StatusOr<std::unique_ptr<TamperProxy>> proxy =
        TamperProxy::Start(options);
    EXPECT_TRUE(proxy.ok()) << proxy.status();
    return proxy.ok() ? *std::move(proxy) : nullptr;
  }

  static testing::TestServer* server_;
  static std::string content_[kBlobCount];
  static std::string digest_[kBlobCount];
  static std::string other_digest_[kBlobCount];
};

testing::TestServer* TamperTest::server_ = nullptr;
std::string TamperTest::content_[kBlobCount];
std::string TamperTest::digest_[kBlobCount];
std::string TamperTest::other_digest_[kBlobCount];

TEST_P(TamperTest, RefusedWithNoBadByteReleased) {
  const Case& c = GetParam();
  const BlobSpec& spec = Blob(c.blob);
  ASSERT_FALSE(digest_[c.blob].empty() || other_digest_[c.blob].empty());
  std::unique_ptr<TamperProxy> proxy = StartProxy(c);
  ASSERT_NE(proxy, nullptr);
  const uint64_t offset = c.whole ? 0 : spec.offset;
  const uint64_t length = c.whole ? 0 : spec.length;
  const std::string want =
      content_[c.blob].substr(offset, c.whole ? spec.size : length);

  const Released got =
      ReadThrough(c.reader, proxy->address(), digest_[c.blob], offset, length);
  const std::vector<TamperOutcome> outcomes = proxy->outcomes();
  ASSERT_FALSE(outcomes.empty()) << "no Read went through the proxy";
  if (c.tamper.kind == TamperKind::kNone || !AnyApplied(outcomes)) {
    // Parts of a parallel read may all be too small for the mode; then
    // nothing was damaged and the read must simply succeed.
    ASSERT_TRUE(c.tamper.kind == TamperKind::kNone ||
                c.reader == Reader::kSdkParallel)
        << "the mode found nothing to damage";
    ASSERT_TRUE(got.status.ok()) << got.status;
    EXPECT_TRUE(InOrder(got.writes) == want);
    return;
  }
  EXPECT_EQ(got.status.code(), absl::StatusCode::kDataLoss)
      << got.status << " after: " << outcomes[0].what;
  ExpectGenuine(want, got.writes);
  if (c.reader == Reader::kSdkParallel) return;
  // One stream: nothing of the damaged block or after it was released, not
  // even genuine bytes the stream did not prove.
  ASSERT_EQ(outcomes.size(), 1u);
  const uint64_t released = InOrder(got.writes).size();
  EXPECT_LE(offset + released, std::max(offset, outcomes[0].first_bad))
      << outcomes[0].what << "; released [" << offset << ", +" << released
      << ")";
}

INSTANTIATE_TEST_SUITE_P(AllModes, TamperTest, ::testing::ValuesIn(AllCases()),
                         CaseName);

// The cases above assume these trees; a change of the specs must not quietly
// test fewer levels.
TEST(TamperCasesTest, BlobsHaveTheTreesTheCasesAssume) {
  for (int id = 0; id < kBlobCount; ++id) {
    const BlobSpec& spec = Blob(static_cast<BlobId>(id));
    absl::StatusOr<TreeGeometry> geometry =
        TreeGeometry::Create(ParamsOf(spec), spec.size);
    ASSERT_TRUE(geometry.ok()) << geometry.status();
    EXPECT_EQ(geometry->num_levels(), spec.levels) << spec.name;
  }
  EXPECT_GE(Blob(kLarge).levels, 2);
}

}  // namespace
}  // namespace verity::tamper
