// The SDK's fs-verity signature check against the in-process fake server,
// with signatures made by `fsverity sign`: with pinned certificates a blob
// is delivered only if its signature verifies for the digest fetched; every
// refusal is DATA_LOSS before any byte reaches the sink, never retried.

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "client/testing/fake_verity_service.h"
#include "client/testing/fsverity_signer.h"
#include "client/testing/read_stream_fixture.h"
#include "gtest/gtest.h"
#include "lib/hash/hash.h"
#include "verity/client.h"

namespace verity::sdk {
namespace {

using ::verity::client::FakeVerityServer;
using ::verity::client::FsveritySign;
using ::verity::client::FsveritySigner;
using ::verity::client::MakeFsveritySigner;

MerkleParams Params() { return TestParams(HashAlgorithm::kSha256, 4096); }

// Keys, certificates and signatures, made once for the suite (openssl and
// fsverity run as processes).
struct Signed {
  FsveritySigner pinned, stranger;
  TestBlob a, b;
  std::string a_by_pinned, a_by_stranger, b_by_pinned;
};

const Signed& Suite() {
  static const Signed* suite = [] {
    auto* s = new Signed;
    s->pinned = *MakeFsveritySigner("pinned", 11);
    s->stranger = *MakeFsveritySigner("stranger", 12);
    s->a = MakeRandomTestBlob(300000, Params(), 1);
    s->b = MakeRandomTestBlob(5000, Params(), 2);
    s->a_by_pinned = *FsveritySign(s->pinned, s->a, Params());
    s->a_by_stranger = *FsveritySign(s->stranger, s->a, Params());
    s->b_by_pinned = *FsveritySign(s->pinned, s->b, Params());
    return s;
  }();
  return *suite;
}

class SignatureCheckClientTest : public ::testing::Test {
 protected:
  SignatureCheckClientTest() : s_(Suite()) {
    server_.service().Add(s_.a, "a");
    server_.service().Add(s_.b);
  }

  std::unique_ptr<Client> MakeClient(const std::string& certs) {
    ClientOptions options;
    options.target = server_.address();
    options.fsverity_certs = certs;
    absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(options);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  // A fetch of blob a (one stream and four), refused with DATA_LOSS naming
  // the blob and no byte delivered; returns the message.
  std::string ExpectRefused(Client& client) {
    std::string message;
    ++refused_fetches_;
    for (int parallel : {1, 4}) {
      FetchOptions options;
      options.parallel_streams = parallel;
      std::string delivered;
      CallbackSink sink([&delivered](absl::Span<const uint8_t> data) {
        delivered.append(data.begin(), data.end());
        return absl::OkStatus();
      });
      const absl::Status status =
          client.Fetch(*Digest::Parse(s_.a.digest_text), sink, options);
      EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
      EXPECT_TRUE(absl::StrContains(status.message(), s_.a.digest_text));
      EXPECT_EQ(delivered, "");
      message = std::string(status.message());
    }
    return message;
  }

  // Never retried: at most one Read per stream. (The server may record a
  // cancelled part's Read after the fetch returned, so this is checked for
  // a whole test, as an upper bound.)
  void ExpectNoRetries() {
    EXPECT_LE(server_.service().reads().size(), refused_fetches_ * (1 + 4));
  }

  const Signed& s_;
  FakeVerityServer server_;
  size_t refused_fetches_ = 0;
};

TEST_F(SignatureCheckClientTest, APinnedSignatureIsAccepted) {
  server_.service().SetSignature(s_.a.digest_text, s_.a_by_pinned);
  std::unique_ptr<Client> client = MakeClient(s_.pinned.cert_pem);
  for (int parallel : {1, 3}) {
    FetchOptions options;
    options.parallel_streams = parallel;
    MemorySink sink;
    ASSERT_TRUE(
        client->Fetch(*Digest::Parse(s_.a.digest_text), sink, options).ok());
    EXPECT_EQ(sink.data(), s_.a.data);
    MemorySink by_name;
    ASSERT_TRUE(client->FetchName("a", by_name, options).ok());
    EXPECT_EQ(by_name.data(), s_.a.data);
  }
  // Both certificates pinned: either signer will do.
  std::unique_ptr<Client> both =
      MakeClient(s_.stranger.cert_pem + s_.pinned.cert_pem);
  EXPECT_EQ(*both->ReadRange(*Digest::Parse(s_.a.digest_text), 10, 100),
            s_.a.data.substr(10, 100));
  EXPECT_EQ(client->Stat(*Digest::Parse(s_.a.digest_text))->fsverity_signature,
            s_.a_by_pinned);
}

TEST_F(SignatureCheckClientTest, EachBadSignatureIsRefused) {
  std::unique_ptr<Client> client = MakeClient(s_.pinned.cert_pem);
  EXPECT_TRUE(absl::StrContains(ExpectRefused(*client), "no fs-verity"));
  server_.service().SetSignature(s_.a.digest_text, s_.a_by_stranger);
  EXPECT_TRUE(
      absl::StrContains(ExpectRefused(*client), "not among the pinned"));
  // A good signature, of another blob.
  server_.service().SetSignature(s_.a.digest_text, s_.b_by_pinned);
  ExpectRefused(*client);
  std::string flipped = s_.a_by_pinned;
  flipped[flipped.size() - 5] ^= 1;
  server_.service().SetSignature(s_.a.digest_text, flipped);
  ExpectRefused(*client);
  ExpectNoRetries();
}

TEST_F(SignatureCheckClientTest, EveryCheckRunsWhenNoByteIsRead) {
  // An unsigned empty blob under a name, and empty ranges of blob a: no
  // data block is read, and with parts or a zero length no stream runs.
  const TestBlob empty = MakeRandomTestBlob(0, Params(), 3);
  server_.service().Add(empty, "empty");
  std::unique_ptr<Client> client = MakeClient(s_.pinned.cert_pem);
  const auto expect_refused = [&](const absl::Status& status) {
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), "no fs-verity")) << status;
  };
  for (int parallel : {1, 4}) {
    FetchOptions options;
    options.parallel_streams = parallel;
    MemorySink by_digest, by_name;
    expect_refused(
        client->Fetch(*Digest::Parse(empty.digest_text), by_digest, options));
    expect_refused(client->FetchName("empty", by_name, options));
    FetchOptions zero = options;
    zero.offset = 100;
    zero.length = 0;
    MemorySink a_empty;
    expect_refused(
        client->Fetch(*Digest::Parse(s_.a.digest_text), a_empty, zero));
    zero.offset = s_.a.data.size();
    zero.length.reset();
    MemorySink a_end;
    expect_refused(
        client->Fetch(*Digest::Parse(s_.a.digest_text), a_end, zero));
  }
  expect_refused(client->Stat(*Digest::Parse(empty.digest_text)).status());
  expect_refused(client->StatName("empty").status());
  // Signed, the same calls pass.
  server_.service().SetSignature(s_.a.digest_text, s_.a_by_pinned);
  EXPECT_TRUE(client->Stat(*Digest::Parse(s_.a.digest_text)).ok());
  FetchOptions zero;
  zero.length = 0;
  MemorySink nothing;
  EXPECT_TRUE(
      client->Fetch(*Digest::Parse(s_.a.digest_text), nothing, zero).ok());
  EXPECT_EQ(nothing.data(), "");
}

TEST_F(SignatureCheckClientTest, EveryStreamOfAFetchIsChecked) {
  // The first stream carries the signature and breaks; the resumed one
  // arrives without it.
  server_.service().SetSignature(s_.a.digest_text, s_.a_by_pinned);
  auto calls = std::make_shared<int>(0);
  server_.service().SetTamper([calls](std::vector<v1::ReadResponse>* stream) {
    if ((*calls)++ == 0) {
      stream->resize(3);
    } else {
      stream->front().clear_fsverity_signature();
    }
  });
  server_.service().SetReadStatus([calls] {
    return *calls == 1 ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "cut")
                       : grpc::Status::OK;
  });
  std::unique_ptr<Client> client = MakeClient(s_.pinned.cert_pem);
  std::string delivered;
  CallbackSink sink([&delivered](absl::Span<const uint8_t> data) {
    delivered.append(data.begin(), data.end());
    return absl::OkStatus();
  });
  const absl::Status status =
      client->Fetch(*Digest::Parse(s_.a.digest_text), sink, {});
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_EQ(server_.service().reads().size(), 2u);
  EXPECT_EQ(delivered, s_.a.data.substr(0, delivered.size()));
  EXPECT_LT(delivered.size(), s_.a.data.size());
}

TEST_F(SignatureCheckClientTest, WithoutCertificatesUnsignedBlobsAreRead) {
  std::unique_ptr<Client> client = MakeClient("");
  EXPECT_EQ(*client->ReadRange(*Digest::Parse(s_.b.digest_text), 0, 5000),
            s_.b.data);
}

TEST_F(SignatureCheckClientTest, BadCertificatesAreInvalidArgument) {
  ClientOptions options;
  options.target = server_.address();
  options.fsverity_certs =
      "-----BEGIN CERTIFICATE-----\nAAAA\n-----END "
      "CERTIFICATE-----\n";
  EXPECT_EQ(Client::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(SignatureCheckClientTest, PutStoresTheSignature) {
  std::unique_ptr<Client> client = MakeClient(s_.pinned.cert_pem);
  server_.service().SetSignature(s_.b.digest_text, "");
  PutOptions put;
  put.fsverity_signature = s_.b_by_pinned;
  size_t offset = 0;
  const std::string& data = s_.b.data;
  const ByteSource source =
      [&](absl::Span<uint8_t> buffer) -> absl::StatusOr<size_t> {
    const size_t n = std::min(buffer.size(), data.size() - offset);
    std::copy_n(data.data() + offset, n, buffer.data());
    offset += n;
    return n;
  };
  ASSERT_TRUE(client->PutStream(source, put).ok());
  EXPECT_EQ(*client->ReadRange(*Digest::Parse(s_.b.digest_text), 0, 5000),
            s_.b.data);
}

}  // namespace
}  // namespace verity::sdk
