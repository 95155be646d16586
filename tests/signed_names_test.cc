// Signed names through the real API: a verityd on 127.0.0.1:0 with and
// without --name_keys, Put with a name statement, SetName, Stat and the
// first Read message carrying the statement, and each refusal's code.

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/sdk/grpc_status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/trust/ed25519_key.h"
#include "lib/trust/name_statement.h"
#include "tests/testing/test_server.h"

namespace verity::testing {
namespace {

using ::absl::StatusCode;
using ::testing::HasSubstr;

absl::StatusOr<v1::PutResponse> PutWithHeader(v1::Verity::Stub& stub,
                                              absl::string_view data,
                                              v1::PutHeader header) {
  grpc::ClientContext context;
  v1::PutResponse response;
  auto writer = stub.Put(&context, &response);
  v1::PutRequest request;
  *request.mutable_header() = std::move(header);
  bool ok = writer->Write(request);
  request.set_data(std::string(data));
  if (ok && !data.empty()) writer->Write(request);
  writer->WritesDone();
  absl::Status status = client::FromGrpcStatus(writer->Finish());
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<v1::PutResponse> PutNamed(v1::Verity::Stub& stub,
                                         absl::string_view data,
                                         absl::string_view name,
                                         absl::string_view statement) {
  v1::PutHeader header;
  header.set_name(std::string(name));
  header.set_name_statement(std::string(statement));
  return PutWithHeader(stub, data, std::move(header));
}

absl::StatusOr<v1::BlobInfo> StatName(v1::Verity::Stub& stub,
                                      absl::string_view name) {
  grpc::ClientContext context;
  v1::StatRequest request;
  request.set_name(std::string(name));
  v1::BlobInfo info;
  absl::Status status =
      client::FromGrpcStatus(stub.Stat(&context, request, &info));
  if (!status.ok()) return status;
  return info;
}

// The first message of a Read by name (or by digest).
v1::ReadResponse FirstReadMessage(v1::Verity::Stub& stub, bool by_name,
                                  absl::string_view blob) {
  grpc::ClientContext context;
  v1::ReadRequest request;
  if (by_name) {
    request.set_name(std::string(blob));
  } else {
    request.set_digest(std::string(blob));
  }
  auto reader = stub.Read(&context, request);
  v1::ReadResponse first;
  EXPECT_TRUE(reader->Read(&first));
  context.TryCancel();
  reader->Finish().error_code();
  return first;
}

class SignedNamesTest : public ::testing::Test {
 protected:
  std::string Sign(absl::string_view name, absl::string_view digest_text,
                   uint64_t version, const Ed25519PrivateKey& key) {
    const absl::Time now =
        absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now()));
    NameClaim claim{std::string(name), ParseDigest(digest_text).value(),
                    version, now - absl::Minutes(1), now + absl::Hours(1)};
    const Ed25519PrivateKey* keys[] = {&key};
    return SignNameStatement(claim, keys).value();
  }

  // A server trusting key_ to sign names.
  std::unique_ptr<TestServer> StartWithKeys() {
    const std::string file = NewTempDir() + "/name_keys.pem";
    std::ofstream(file) << key_.public_key().ToPem();
    server::ServerOptions options;
    options.name_keys_file = file;
    return TestServer::Start(options);
  }

  const Ed25519PrivateKey key_ = Ed25519PrivateKey::Generate();
  const Ed25519PrivateKey other_key_ = Ed25519PrivateKey::Generate();
  const std::string a_ = RandomBytes(10000, 1);
  const std::string b_ = RandomBytes(20000, 2);
};

TEST_F(SignedNamesTest, WithoutKeysUnsignedNamesWorkAsBefore) {
  auto server = TestServer::Start();
  ASSERT_TRUE(PutNamed(server->stub(), a_, "n", "").ok());
  absl::StatusOr<v1::BlobInfo> info = StatName(server->stub(), "n");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->digest(), DigestOf(a_));
  EXPECT_EQ(info->name_statement(), "");
  EXPECT_EQ(SetName(server->stub(), "n", DigestOf(b_), "").status().code(),
            StatusCode::kNotFound);
  ASSERT_TRUE(PutBlob(server->stub(), b_).ok());
  ASSERT_TRUE(SetName(server->stub(), "n", DigestOf(b_), "").ok());
  EXPECT_EQ(StatName(server->stub(), "n")->digest(), DigestOf(b_));
}

TEST_F(SignedNamesTest, AStatementIsStoredAndReturnedWithItsName) {
  auto server = TestServer::Start();
  // Without keys any signer will do, but the statement must be for this
  // name and this blob.
  const std::string statement = Sign("n", DigestOf(a_), 3, other_key_);
  absl::StatusOr<v1::PutResponse> put =
      PutNamed(server->stub(), a_, "n", statement);
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_EQ(put->info().name_statement(), statement);
  EXPECT_EQ(StatName(server->stub(), "n")->name_statement(), statement);
  const v1::ReadResponse by_name = FirstReadMessage(server->stub(), true, "n");
  EXPECT_EQ(by_name.digest(), DigestOf(a_));
  EXPECT_EQ(by_name.name_statement(), statement);
  // By digest there is no name, so no statement.
  const v1::ReadResponse by_digest =
      FirstReadMessage(server->stub(), false, DigestOf(a_));
  EXPECT_EQ(by_digest.name_statement(), "");

  EXPECT_EQ(PutNamed(server->stub(), b_, "n", statement).status().code(),
            StatusCode::kInvalidArgument);  // another blob
  EXPECT_EQ(PutNamed(server->stub(), a_, "m", statement).status().code(),
            StatusCode::kInvalidArgument);  // another name
  EXPECT_EQ(PutNamed(server->stub(), a_, "n", "garbage").status().code(),
            StatusCode::kInvalidArgument);
  v1::PutHeader no_name;
  no_name.set_name_statement(statement);
  EXPECT_EQ(PutWithHeader(server->stub(), a_, no_name).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(StatName(server->stub(), "n")->name_statement(), statement);

  // SetName re-points it with the new statement.
  ASSERT_TRUE(PutBlob(server->stub(), b_).ok());
  const std::string to_b = Sign("n", DigestOf(b_), 4, other_key_);
  absl::StatusOr<v1::BlobInfo> set =
      SetName(server->stub(), "n", DigestOf(b_), to_b);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->digest(), DigestOf(b_));
  EXPECT_EQ(set->name_statement(), to_b);
  EXPECT_EQ(FirstReadMessage(server->stub(), true, "n").name_statement(), to_b);
}

TEST_F(SignedNamesTest, WithKeysANameWriteNeedsAValidNewerStatement) {
  auto server = StartWithKeys();
  v1::Verity::Stub& stub = server->stub();
  const std::string a = DigestOf(a_), b = DigestOf(b_);
  ASSERT_TRUE(PutBlob(stub, b_).ok());

  const absl::Status unsigned_put = PutNamed(stub, a_, "n", "").status();
  EXPECT_EQ(unsigned_put.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(unsigned_put.message(), HasSubstr("--name_keys"));
  EXPECT_EQ(SetName(stub, "n", b, "").status().code(),
            StatusCode::kInvalidArgument);
  const absl::Status untrusted =
      PutNamed(stub, a_, "n", Sign("n", a, 1, other_key_)).status();
  EXPECT_EQ(untrusted.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(untrusted.message(), HasSubstr("valid signatures"));
  std::string flipped = Sign("n", a, 1, key_);
  flipped.back() ^= 1;
  EXPECT_EQ(PutNamed(stub, a_, "n", flipped).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(PutNamed(stub, a_, "n", Sign("m", a, 1, key_)).status().code(),
            StatusCode::kInvalidArgument);  // another name
  EXPECT_EQ(PutNamed(stub, a_, "n", Sign("n", b, 1, key_)).status().code(),
            StatusCode::kInvalidArgument);  // another blob
  EXPECT_EQ(StatName(stub, "n").status().code(), StatusCode::kNotFound);

  const std::string v5 = Sign("n", a, 5, key_);
  ASSERT_TRUE(PutNamed(stub, a_, "n", v5).ok());
  for (const uint64_t stale : {4, 5}) {
    const absl::Status refused =
        SetName(stub, "n", b, Sign("n", b, stale, key_)).status();
    EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition) << stale;
    EXPECT_THAT(refused.message(), HasSubstr("not newer"));
    EXPECT_EQ(
        PutNamed(stub, b_, "n", Sign("n", b, stale, key_)).status().code(),
        StatusCode::kFailedPrecondition);
  }
  // Refused writes left the name as it was.
  EXPECT_EQ(StatName(stub, "n")->digest(), a);
  EXPECT_EQ(StatName(stub, "n")->name_statement(), v5);

  const std::string v6 = Sign("n", b, 6, key_);
  absl::StatusOr<v1::BlobInfo> set = SetName(stub, "n", b, v6);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(StatName(stub, "n")->digest(), b);
  EXPECT_EQ(FirstReadMessage(stub, true, "n").name_statement(), v6);
  ASSERT_TRUE(PutNamed(stub, a_, "n", Sign("n", a, 7, key_)).ok());
  EXPECT_EQ(StatName(stub, "n")->digest(), a);
  // Statements outlive a restart, and so does the version they hold.
  server->Restart();
  EXPECT_EQ(
      PutNamed(server->stub(), b_, "n", Sign("n", b, 7, key_)).status().code(),
      StatusCode::kFailedPrecondition);
}

TEST_F(SignedNamesTest, ASignatureThatIsNotPkcs7IsRefused) {
  auto server = TestServer::Start();
  v1::PutHeader header;
  header.set_fsverity_signature("not DER");
  EXPECT_EQ(PutWithHeader(server->stub(), a_, header).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace verity::testing
