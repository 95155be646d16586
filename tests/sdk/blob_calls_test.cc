// The SDK's Put, Stat, List and Delete against a real verityd, and its
// connections over TLS and mutual TLS.

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/sdk/sdk_fixture.h"
#include "tests/testing/self_signed_cert.h"
#include "tests/testing/test_server.h"
#include "verity/client.h"

namespace verity::testing {
namespace {

using ::absl::StatusCode;

// A source that hands out `data` in pieces of at most `piece` bytes.
sdk::ByteSource SourceOf(const std::string& data, size_t piece) {
  auto at = std::make_shared<size_t>(0);
  return [&data, piece, at](absl::Span<uint8_t> buffer) {
    const size_t n = std::min({piece, buffer.size(), data.size() - *at});
    std::copy_n(data.data() + *at, n, buffer.data());
    *at += n;
    return absl::StatusOr<size_t>(n);
  };
}

class BlobCallsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = TestServer::Start();
    client_ =
        *sdk::Client::Create(FastRetryOptions(server_->verityd().address()));
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<sdk::Client> client_;
};

TEST_F(BlobCallsTest, PutStreamThenFetch) {
  const std::string data = RandomBytes(3000000, 1);
  sdk::PutOptions options;
  options.name = "dir/streamed";
  options.chunk_bytes = 100000;
  absl::StatusOr<sdk::PutResult> put =
      client_->PutStream(SourceOf(data, 77777), options);
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_EQ(put->info.digest.ToString(), DigestOf(data));
  EXPECT_EQ(put->info.size, data.size());
  EXPECT_FALSE(put->already_present);
  EXPECT_EQ(put->info.names, std::vector<std::string>{"dir/streamed"});
  EXPECT_TRUE(*client_->ReadRange(put->info.digest, 0, data.size()) == data);
  EXPECT_TRUE(client_->PutStream(SourceOf(data, 5000), {})->already_present);
}

TEST_F(BlobCallsTest, PutFileWithParamsAndExpectedDigest) {
  const std::string data = RandomBytes(200000, 2);
  const std::string path = NewTempDir() + "/file";
  std::ofstream(path, std::ios::binary) << data;
  sdk::PutOptions options;
  options.hash_algorithm = sdk::DigestAlgorithm::kSha512;
  options.block_size = 1024;
  options.salt = "salt";
  options.hash_threads = 2;
  MerkleParams params;
  params.hash_algorithm = HashAlgorithm::kSha512;
  params.block_size = 1024;
  params.salt = "salt";
  const sdk::Digest want = *sdk::Digest::Parse(DigestOf(data, params));
  options.expected_digest = want;
  absl::StatusOr<sdk::PutResult> put = client_->PutFile(path, options);
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_EQ(put->info.digest, want);
  EXPECT_EQ(put->info.block_size, 1024u);
  EXPECT_EQ(put->info.salt, "salt");
  // A wrong expected digest stores nothing, from a file or a stream.
  options.expected_digest = *sdk::Digest::Parse(DigestOf("other", params));
  EXPECT_EQ(client_->PutFile(path, options).status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(client_->PutStream(SourceOf(data, 4096), options).status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(client_->ListAll()->size(), 1u);
  options.block_size = 100;
  EXPECT_EQ(client_->PutFile(path, options).status().code(),
            StatusCode::kInvalidArgument);
  options.block_size = 4096;
  options.chunk_bytes = 0;
  EXPECT_EQ(client_->PutFile(path, options).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(client_->PutStream(SourceOf(data, 10), options).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(BlobCallsTest, AFailingSourceStoresNothing) {
  sdk::ByteSource broken = [](absl::Span<uint8_t>) -> absl::StatusOr<size_t> {
    return absl::DataLossError("disk read error");
  };
  EXPECT_EQ(client_->PutStream(broken, {}).status().code(),
            StatusCode::kDataLoss);
  EXPECT_TRUE(client_->ListAll()->empty());
}

TEST_F(BlobCallsTest, StatListAndDelete) {
  std::vector<std::string> digests;
  for (uint32_t i = 0; i < 5; ++i) {
    const StoredBlob blob = PutRandomBlob(*server_, 1000 * i, i + 1);
    digests.push_back(blob.digest.ToString());
  }
  std::sort(digests.begin(), digests.end());
  const std::string named = RandomBytes(5000, 9);
  sdk::PutOptions options;
  options.name = "a/name";
  const sdk::Digest digest =
      client_->PutStream(SourceOf(named, 4096), options)->info.digest;
  EXPECT_EQ(client_->StatName("a/name")->digest, digest);
  EXPECT_EQ(client_->Stat(digest)->size, 5000u);

  absl::StatusOr<sdk::ListPage> page = client_->List("", 2);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->blobs.size(), 2u);
  EXPECT_FALSE(page->next_page_token.empty());
  absl::StatusOr<std::vector<sdk::BlobInfo>> all = client_->ListAll();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 6u);

  ASSERT_TRUE(client_->DeleteName("a/name").ok());
  EXPECT_EQ(client_->StatName("a/name").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(client_->Stat(digest)->names.empty());
  ASSERT_TRUE(client_->Delete(digest).ok());
  EXPECT_EQ(client_->Stat(digest).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(client_->ReadRange(digest, 0, 1).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(client_->Delete(digest).code(), StatusCode::kNotFound);
}

// FindMissing answers in the request's order, each once, in batches of any
// size; the server refuses a malformed digest and more than 10,000 at once.
TEST_F(BlobCallsTest, FindMissing) {
  const sdk::Digest a = PutRandomBlob(*server_, 1000, 1).digest;
  const sdk::Digest b = PutRandomBlob(*server_, 5000, 2).digest;
  const sdk::Digest x = *sdk::Digest::Parse(DigestOf(RandomBytes(10, 3)));
  const sdk::Digest y = *sdk::Digest::Parse(DigestOf(RandomBytes(10, 4)));
  absl::StatusOr<std::vector<sdk::Digest>> missing =
      client_->FindMissing({a, y, x, b, y, a});
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_EQ(*missing, (std::vector<sdk::Digest>{y, x}));
  EXPECT_TRUE(client_->FindMissing({})->empty());
  // 25,000 distinct digests, three batches; only the stored two are held.
  std::vector<sdk::Digest> many = {a};
  for (int i = 0; i < 25000; ++i) {
    many.push_back(*sdk::Digest::Parse(absl::StrCat(
        "sha256:", std::string(58, '0'), absl::Hex(i, absl::kZeroPad6))));
  }
  many.push_back(b);
  missing = client_->FindMissing(many);
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_EQ(missing->size(), 25000u);
  EXPECT_EQ(missing->front(), many[1]);

  v1::FindMissingRequest request;
  request.add_digests("sha256:nothex");
  v1::FindMissingResponse response;
  grpc::ClientContext context;
  EXPECT_EQ(
      server_->stub().FindMissing(&context, request, &response).error_code(),
      grpc::StatusCode::INVALID_ARGUMENT);
  request.clear_digests();
  for (int i = 0; i < 10001; ++i) request.add_digests(a.ToString());
  grpc::ClientContext context2;
  EXPECT_EQ(
      server_->stub().FindMissing(&context2, request, &response).error_code(),
      grpc::StatusCode::INVALID_ARGUMENT);
}

class TlsClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = NewTempDir();
    for (const char* who : {"server", "client", "stranger"}) {
      absl::StatusOr<PemKeyPair> pem = MakeSelfSignedCert(who);
      ASSERT_TRUE(pem.ok()) << pem.status();
      std::ofstream(Path(who, "crt")) << pem->cert_pem;
      std::ofstream(Path(who, "key")) << pem->key_pem;
      pems_[who] = *pem;
    }
    server::ServerOptions options;
    options.tls_cert = Path("server", "crt");
    options.tls_key = Path("server", "key");
    options.tls_client_ca = Path("client", "crt");
    server_ = TestServer::Start(options);
  }

  std::string Path(const std::string& who, const std::string& ext) const {
    return absl::StrCat(dir_, "/", who, ".", ext);
  }

  std::unique_ptr<sdk::Client> Client(const char* identity) {
    sdk::ClientOptions options = FastRetryOptions(server_->verityd().address());
    options.retry.max_attempts = 2;
    sdk::TlsOptions& tls = options.tls.emplace();
    tls.root_certs_pem = pems_["server"].cert_pem;
    if (identity != nullptr) {
      tls.cert_chain_pem = pems_[identity].cert_pem;
      tls.private_key_file = Path(identity, "key");  // inline or from a file
    }
    return *sdk::Client::Create(options);
  }

  std::string dir_;
  std::map<std::string, PemKeyPair> pems_;
  std::unique_ptr<TestServer> server_;
};

TEST_F(TlsClientTest, MutualTlsNeedsATrustedClientCertificate) {
  const std::string data = RandomBytes(70000, 3);
  std::unique_ptr<sdk::Client> client = Client("client");
  absl::StatusOr<sdk::PutResult> put =
      client->PutStream(SourceOf(data, 4096), {});
  ASSERT_TRUE(put.ok()) << put.status();
  sdk::FetchOptions parallel;
  parallel.parallel_streams = 3;
  EXPECT_TRUE(*client->ReadRange(put->info.digest, 0, data.size(), parallel) ==
              data);
  EXPECT_EQ(Client(nullptr)->Stat(put->info.digest).status().code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(
      Client("stranger")->ReadRange(put->info.digest, 0, 1).status().code(),
      StatusCode::kUnavailable);
}

// The per-connection call rate (--max_call_rate) refuses calls beyond it with
// RESOURCE_EXHAUSTED; the SDK backs off and retries reads and Stats, so a
// client calling faster than the rate is slowed down, not refused. Without
// retries the same calls are refused: the limit is real.
TEST(BlobCallsRateTest, CallRateRefusalsAreRetriedAfterABackoff) {
  server::ServerOptions server_options;
  server_options.service.max_call_rate = 5;
  const std::unique_ptr<TestServer> server = TestServer::Start(server_options);
  sdk::ClientOptions options;
  options.target = server->verityd().address();
  const std::unique_ptr<sdk::Client> client = *sdk::Client::Create(options);
  const std::string data = RandomBytes(10000, 7);
  // A Put is one attempt: made while the connection's budget is full.
  absl::StatusOr<sdk::PutResult> put =
      client->PutStream(SourceOf(data, 4096), {});
  ASSERT_TRUE(put.ok()) << put.status();
  for (int i = 0; i < 12; ++i) {
    absl::StatusOr<std::string> read =
        client->ReadRange(put->info.digest, 0, data.size());
    ASSERT_TRUE(read.ok()) << "read " << i << ": " << read.status();
    EXPECT_TRUE(*read == data);
    absl::StatusOr<sdk::BlobInfo> info = client->Stat(put->info.digest);
    ASSERT_TRUE(info.ok()) << "stat " << i << ": " << info.status();
  }
  // 25 calls at 5 a second: reads were refused and started again.
  EXPECT_GT(client->Stats().retries, 0u);
  options.retry.max_attempts = 1;
  const std::unique_ptr<sdk::Client> impatient = *sdk::Client::Create(options);
  std::map<StatusCode, int> codes;
  for (int i = 0; i < 20; ++i) {
    ++codes[impatient->Stat(put->info.digest).status().code()];
  }
  EXPECT_GE(codes[StatusCode::kResourceExhausted], 10);
}

// A BatchUpdate refused for the call rate is retried the same way, and
// stores every blob once it is admitted; without retries, the same calls are
// refused.
TEST(BlobCallsRateTest, BatchUpdateRefusalsAreRetried) {
  server::ServerOptions server_options;
  server_options.service.max_call_rate = 5;
  const std::unique_ptr<TestServer> server = TestServer::Start(server_options);
  sdk::ClientOptions options;
  options.target = server->verityd().address();
  std::vector<sdk::BatchUpdateBlob> blobs;
  for (uint64_t i = 0; i < 12; ++i) {
    const std::string data = RandomBytes(3000 + i, 20 + i);
    blobs.push_back(
        sdk::BatchUpdateBlob{*sdk::Digest::Parse(DigestOf(data)), data});
  }
  // 12 calls at 5 a second, each stored once admitted.
  const std::unique_ptr<sdk::Client> client = *sdk::Client::Create(options);
  for (const sdk::BatchUpdateBlob& blob : blobs) {
    absl::StatusOr<std::vector<absl::Status>> stored =
        client->BatchUpdate({blob});
    ASSERT_TRUE(stored.ok()) << stored.status();
    EXPECT_TRUE((*stored)[0].ok()) << (*stored)[0];
  }
  for (const sdk::BatchUpdateBlob& blob : blobs) {
    EXPECT_TRUE(*client->ReadRange(blob.digest, 0, blob.data.size()) ==
                blob.data);
  }
  options.retry.max_attempts = 1;
  const std::unique_ptr<sdk::Client> impatient = *sdk::Client::Create(options);
  std::map<StatusCode, int> codes;
  for (const sdk::BatchUpdateBlob& blob : blobs) {
    ++codes[impatient->BatchUpdate({blob}).status().code()];
  }
  EXPECT_GE(codes[StatusCode::kResourceExhausted], 5);
}

}  // namespace
}  // namespace verity::testing
