// Regression test for the BoringSSL/OpenSSL coexistence: one process runs a
// gRPC TLS handshake (gRPC uses Debian's OpenSSL 3) while the project's own
// BoringSSL computes SHA-256 on both ends. With Debian's shared BoringSSL this
// process crashed in CRYPTO_get_ex_new_index.
#include <grpcpp/grpcpp.h>
#include <openssl/sha.h>

#include <memory>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/echo.grpc.pb.h"
#include "tests/testing/self_signed_cert.h"

namespace verity::testing {
namespace {

std::string Sha256Hex(absl::string_view data) {
  uint8_t digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const uint8_t*>(data.data()), data.size(), digest);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

class HashingEcho final : public Echo::Service {
  grpc::Status Hash(grpc::ServerContext* /*context*/,
                    const EchoRequest* request, EchoReply* reply) override {
    reply->set_sha256_hex(Sha256Hex(request->payload()));
    return grpc::Status::OK;
  }
};

TEST(TlsWithBoringSsl, HandshakeAndSha256InOneProcess) {
  absl::StatusOr<PemKeyPair> pem = MakeSelfSignedCert("verityd-test");
  ASSERT_TRUE(pem.ok()) << pem.status();

  grpc::SslServerCredentialsOptions server_opts;
  server_opts.pem_key_cert_pairs.push_back({pem->key_pem, pem->cert_pem});
  HashingEcho service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0",
                           grpc::SslServerCredentials(server_opts), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  ASSERT_GT(port, 0);

  grpc::SslCredentialsOptions client_opts;
  client_opts.pem_root_certs = pem->cert_pem;
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port),
                                     grpc::SslCredentials(client_opts));
  auto stub = Echo::NewStub(channel);
  for (const std::string payload : {"abc", ""}) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(20));
    EchoRequest request;
    request.set_payload(payload);
    EchoReply reply;
    grpc::Status status = stub->Hash(&context, request, &reply);
    ASSERT_TRUE(status.ok())
        << status.error_code() << ": " << status.error_message();
    EXPECT_EQ(reply.sha256_hex(), Sha256Hex(payload));
  }
  EXPECT_EQ(Sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(channel->GetState(false), GRPC_CHANNEL_READY);
  server->Shutdown();
}

TEST(TlsWithBoringSsl, UntrustedServerCertIsRejected) {
  absl::StatusOr<PemKeyPair> server_pem = MakeSelfSignedCert("server");
  absl::StatusOr<PemKeyPair> other_pem = MakeSelfSignedCert("someone-else");
  ASSERT_TRUE(server_pem.ok() && other_pem.ok());
  grpc::SslServerCredentialsOptions server_opts;
  server_opts.pem_key_cert_pairs.push_back(
      {server_pem->key_pem, server_pem->cert_pem});
  HashingEcho service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0",
                           grpc::SslServerCredentials(server_opts), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);

  grpc::SslCredentialsOptions client_opts;
  client_opts.pem_root_certs = other_pem->cert_pem;
  auto stub = Echo::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", port), grpc::SslCredentials(client_opts)));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  EchoReply reply;
  EXPECT_EQ(stub->Hash(&context, EchoRequest(), &reply).error_code(),
            grpc::UNAVAILABLE);
  server->Shutdown();
}

}  // namespace
}  // namespace verity::testing
