// PutPipeline against a fake sink that records every call: what reaches the
// sink and in which order, the size limit, name and digest checks, and that
// a failure Aborts the sink once and is returned by every later call.

#include "server/store/put_pipeline.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/hash/hash.h"
#include "lib/testing/test_blob.h"
#include "lib/trust/name_statement.h"

namespace verity::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// What a FakeSink saw, kept by the test: the pipeline owns the sink.
struct SinkRecord {
  std::vector<std::string> calls;  // "Append", "Stage", "Publish", "Abort"
  std::string content;             // the bytes appended, in order
  std::optional<SealedBlob> staged;
  std::optional<SealedBlob> published;
};

// Fails the calls it is told to; records every call.
class FakeSink final : public BlobSink {
 public:
  explicit FakeSink(SinkRecord* record) : record_(record) {}

  absl::Status append_error = absl::OkStatus();
  absl::Status stage_error = absl::OkStatus();
  absl::Status publish_error = absl::OkStatus();

  absl::Status Append(absl::Span<const uint8_t> data) override {
    record_->calls.push_back("Append");
    if (!append_error.ok()) return append_error;
    record_->content.append(reinterpret_cast<const char*>(data.data()),
                            data.size());
    return absl::OkStatus();
  }
  absl::Status Stage(const SealedBlob& blob) override {
    record_->calls.push_back("Stage");
    record_->staged = blob;
    return stage_error;
  }
  absl::StatusOr<PutResult> Publish(const SealedBlob& blob) override {
    record_->calls.push_back("Publish");
    record_->published = blob;
    if (!publish_error.ok()) return publish_error;
    PutResult result;
    result.info.digest = blob.digest_text;
    result.info.descriptor = blob.tree.descriptor;
    result.info.tree_size = blob.tree.tree.size();
    return result;
  }
  void Abort() override { record_->calls.push_back("Abort"); }

 private:
  SinkRecord* const record_;
};

class PutPipelineTest : public ::testing::Test {
 protected:
  // A pipeline over a fresh FakeSink, which sink_ points at until the
  // pipeline goes.
  std::unique_ptr<PutPipeline> Begin(PutPipelineOptions options = {}) {
    record_ = SinkRecord{};
    auto sink = std::make_unique<FakeSink>(&record_);
    sink_ = sink.get();
    return std::make_unique<PutPipeline>(MerkleParams{}, std::move(options),
                                         std::move(sink));
  }

  SinkRecord record_;
  FakeSink* sink_ = nullptr;
};

TEST_F(PutPipelineTest, ContentIsHashedThenStagedThenPublished) {
  const TestBlob blob = MakeRandomTestBlob(20000, MerkleParams{}, 1);
  std::unique_ptr<PutPipeline> put = Begin();
  ASSERT_TRUE(put->Append(AsBytes(blob.data.substr(0, 7001))).ok());
  ASSERT_TRUE(put->Append(AsBytes(blob.data.substr(7001))).ok());
  EXPECT_EQ(put->size(), blob.data.size());
  const absl::StatusOr<PutResult> result = put->Commit(blob.digest, "a/name");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->info.digest, blob.digest_text);
  EXPECT_THAT(record_.calls,
              ElementsAre("Append", "Append", "Stage", "Publish"));
  EXPECT_TRUE(record_.content == blob.data);
  for (const std::optional<SealedBlob>* seen :
       {&record_.staged, &record_.published}) {
    ASSERT_TRUE(seen->has_value());
    EXPECT_EQ((*seen)->digest, blob.digest);
    EXPECT_EQ((*seen)->digest_text, blob.digest_text);
    EXPECT_EQ((*seen)->tree.descriptor, blob.tree.descriptor);
    EXPECT_TRUE((*seen)->tree.tree == blob.tree.tree);
    EXPECT_EQ((*seen)->name.name, "a/name");
  }
  // Committed: the Put is over, and the sink hears nothing more, not even
  // an Abort when the writer goes.
  EXPECT_EQ(put->Append(AsBytes("x")).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(put->Commit(std::nullopt, "").status().code(),
            absl::StatusCode::kFailedPrecondition);
  put.reset();
  EXPECT_THAT(record_.calls,
              ElementsAre("Append", "Append", "Stage", "Publish"));
}

TEST_F(PutPipelineTest, TheSizeLimitEndsThePutBeforeTheSinkSeesMore) {
  PutPipelineOptions options;
  options.max_bytes = 10;
  std::unique_ptr<PutPipeline> put = Begin(options);
  ASSERT_TRUE(put->Append(AsBytes("123456")).ok());
  const absl::Status over = put->Append(AsBytes("78901"));
  EXPECT_EQ(over.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(over.message(), HasSubstr("10 bytes"));
  EXPECT_EQ(record_.content, "123456");
  EXPECT_EQ(put->size(), 6u);
  // Sticky, and the sink is aborted once, at once.
  EXPECT_EQ(put->Append(AsBytes("7")), over);
  EXPECT_EQ(put->Commit(std::nullopt, "").status(), over);
  put.reset();
  EXPECT_THAT(record_.calls, ElementsAre("Append", "Abort"));

  // Up to the limit exactly is fine.
  put = Begin(options);
  ASSERT_TRUE(put->Append(AsBytes("1234567890")).ok());
  EXPECT_TRUE(put->Commit(std::nullopt, "").ok());
  EXPECT_EQ(put->Append(AsBytes("")).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(PutPipelineTest, ContentOfAnotherSizeThanDeclaredStoresNothing) {
  PutPipelineOptions options;
  options.size = 10;
  std::unique_ptr<PutPipeline> put = Begin(options);
  ASSERT_TRUE(put->Append(AsBytes("123456")).ok());
  const absl::Status longer = put->Append(AsBytes("78901"));
  EXPECT_EQ(longer.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(longer.message(), HasSubstr("content_size"));
  EXPECT_EQ(record_.content, "123456");
  put.reset();
  EXPECT_THAT(record_.calls, ElementsAre("Append", "Abort"));

  put = Begin(options);
  ASSERT_TRUE(put->Append(AsBytes("123456789")).ok());
  const absl::Status shorter = put->Commit(std::nullopt, "").status();
  EXPECT_EQ(shorter.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(shorter.message(), HasSubstr("9 bytes, not the 10"));
  put.reset();
  EXPECT_THAT(record_.calls, ElementsAre("Append", "Abort"));

  put = Begin(options);
  ASSERT_TRUE(put->Append(AsBytes("1234567890")).ok());
  EXPECT_TRUE(put->Commit(std::nullopt, "").ok());

  EXPECT_TRUE(CheckPutSize(std::nullopt, 10).ok());
  EXPECT_TRUE(CheckPutSize(10, 10).ok());
  EXPECT_EQ(CheckPutSize(11, 10).code(), absl::StatusCode::kResourceExhausted);
}

TEST_F(PutPipelineTest, ABadNameStoresNothing) {
  for (const std::string name : {"/abs", "a//b", "../up", "dir/"}) {
    SCOPED_TRACE(name);
    std::unique_ptr<PutPipeline> put = Begin();
    ASSERT_TRUE(put->Append(AsBytes("content")).ok());
    const absl::Status bad = put->Commit(std::nullopt, name).status();
    EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(put->Commit(std::nullopt, "").status(), bad);
    EXPECT_EQ(put->Append(AsBytes("x")), bad);
    put.reset();
    EXPECT_THAT(record_.calls, ElementsAre("Append", "Abort"));
  }
}

TEST_F(PutPipelineTest, TheStatementAndSignatureReachTheSink) {
  const TestBlob blob = MakeTestBlob("content", MerkleParams{});
  std::unique_ptr<PutPipeline> put = Begin();
  ASSERT_TRUE(put->Append(AsBytes(blob.data)).ok());
  PutCommit commit;
  commit.name.name = "n";
  commit.name.statement = "a statement";
  commit.fsverity_signature = "a signature";
  ASSERT_TRUE(put->Commit(commit).ok());
  ASSERT_TRUE(record_.published.has_value());
  EXPECT_EQ(record_.published->name.statement, "a statement");
  EXPECT_EQ(record_.published->fsverity_signature, "a signature");
}

TEST_F(PutPipelineTest, AnOversizedStatementOrSignatureStoresNothing) {
  PutCommit statement;
  statement.name.name = "n";
  statement.name.statement = std::string(kMaxNameStatementSize + 1, 's');
  PutCommit signature;
  signature.fsverity_signature =
      std::string(kMaxFsveritySignatureSize + 1, 's');
  for (const PutCommit* commit : {&statement, &signature}) {
    std::unique_ptr<PutPipeline> put = Begin();
    ASSERT_TRUE(put->Append(AsBytes("content")).ok());
    EXPECT_EQ(put->Commit(*commit).status().code(),
              absl::StatusCode::kInvalidArgument);
    put.reset();
    EXPECT_THAT(record_.calls, ElementsAre("Append", "Abort"));
  }
}

TEST_F(PutPipelineTest, AnExpectedDigestMismatchStoresNothing) {
  const TestBlob blob = MakeTestBlob("content", MerkleParams{});
  const TestBlob other = MakeTestBlob("other", MerkleParams{});
  // Expected at Commit, at BeginPut, or at both with one of them wrong.
  const struct {
    std::optional<ParsedDigest> at_begin, at_commit;
  } cases[] = {
      {std::nullopt, other.digest},
      {other.digest, std::nullopt},
      {blob.digest, other.digest},
      {other.digest, blob.digest},
  };
  for (const auto& c : cases) {
    PutPipelineOptions options;
    options.expected = c.at_begin;
    std::unique_ptr<PutPipeline> put = Begin(options);
    ASSERT_TRUE(put->Append(AsBytes(blob.data)).ok());
    const absl::Status wrong = put->Commit(c.at_commit, "name").status();
    EXPECT_EQ(wrong.code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(wrong.message(), HasSubstr(blob.digest_text));
    EXPECT_THAT(wrong.message(), HasSubstr(other.digest_text));
    EXPECT_EQ(put->Commit(c.at_commit, "name").status(), wrong);
    put.reset();
    EXPECT_THAT(record_.calls, ElementsAre("Append", "Abort"));
  }
  // The right digest, given at both.
  PutPipelineOptions options;
  options.expected = blob.digest;
  std::unique_ptr<PutPipeline> put = Begin(options);
  ASSERT_TRUE(put->Append(AsBytes(blob.data)).ok());
  EXPECT_TRUE(put->Commit(blob.digest, "").ok());
}

TEST_F(PutPipelineTest, ASinkErrorEndsThePutAndStaysTheAnswer) {
  const absl::Status full = absl::ResourceExhaustedError("disk full");
  std::unique_ptr<PutPipeline> put = Begin();
  ASSERT_TRUE(put->Append(AsBytes("first")).ok());
  sink_->append_error = full;
  EXPECT_EQ(put->Append(AsBytes("second")), full);
  EXPECT_EQ(put->size(), 5u);
  sink_->append_error = absl::OkStatus();
  EXPECT_EQ(put->Append(AsBytes("third")), full);
  EXPECT_EQ(put->Commit(std::nullopt, "").status(), full);
  put.reset();
  EXPECT_THAT(record_.calls, ElementsAre("Append", "Append", "Abort"));
}

TEST_F(PutPipelineTest, AFailedStageIsNeverPublished) {
  const absl::Status eio = absl::InternalError("fsync: EIO");
  std::unique_ptr<PutPipeline> put = Begin();
  ASSERT_TRUE(put->Append(AsBytes("content")).ok());
  sink_->stage_error = eio;
  EXPECT_EQ(put->Commit(std::nullopt, "").status(), eio);
  sink_->stage_error = absl::OkStatus();
  EXPECT_EQ(put->Commit(std::nullopt, "").status(), eio);
  put.reset();
  EXPECT_THAT(record_.calls, ElementsAre("Append", "Stage", "Abort"));
}

TEST_F(PutPipelineTest, AFailedPublishAbortsAndStaysTheAnswer) {
  const absl::Status unavailable = absl::UnavailableError("503");
  std::unique_ptr<PutPipeline> put = Begin();
  ASSERT_TRUE(put->Append(AsBytes("content")).ok());
  sink_->publish_error = unavailable;
  EXPECT_EQ(put->Commit(std::nullopt, "n").status(), unavailable);
  EXPECT_EQ(put->Append(AsBytes("x")), unavailable);
  put.reset();
  EXPECT_THAT(record_.calls,
              ElementsAre("Append", "Stage", "Publish", "Abort"));
}

TEST_F(PutPipelineTest, AnAbandonedPutAbortsTheSinkOnce) {
  std::unique_ptr<PutPipeline> put = Begin();
  ASSERT_TRUE(put->Append(AsBytes("content")).ok());
  put.reset();
  EXPECT_THAT(record_.calls, ElementsAre("Append", "Abort"));
  // An empty Put, too, is a blob: committed without any Append.
  put = Begin();
  const absl::StatusOr<PutResult> empty = put->Commit(std::nullopt, "");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->info.digest, MakeTestBlob("", MerkleParams{}).digest_text);
  EXPECT_THAT(record_.calls, ElementsAre("Stage", "Publish"));
}

TEST_F(PutPipelineTest, NamesTheExecutorItWasGiven) {
  Executor executor(CompletionThreadOptions("test"));
  EXPECT_EQ(Begin()->executor(), nullptr);
  PutPipelineOptions options;
  options.executor = &executor;
  EXPECT_EQ(Begin(options)->executor(), &executor);
}

TEST(ValidatePutParamsTest, BlockSizesTheStoreServes) {
  MerkleParams params;
  for (const uint32_t size :
       {kMinServedBlockSize, 4096u, kMaxServedBlockSize}) {
    params.block_size = size;
    EXPECT_TRUE(ValidatePutParams(params).ok()) << size;
  }
  for (const uint32_t size :
       {kMinServedBlockSize / 2, kMaxServedBlockSize * 2, uint32_t{3000}}) {
    params.block_size = size;
    EXPECT_EQ(ValidatePutParams(params).code(),
              absl::StatusCode::kInvalidArgument)
        << size;
  }
}

}  // namespace
}  // namespace verity::server
