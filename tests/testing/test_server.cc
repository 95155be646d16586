// Implements the in-process test server and its helpers.

#include "tests/testing/test_server.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/names/blob_ref.h"
#include "client/sdk/grpc_status.h"
#include "client/testing/verified_read.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_builder.h"
#include "proto/convert.h"

namespace verity::testing {

std::string NewTempDir() {
  const char* base = getenv("TEST_TMPDIR");
  std::string pattern = absl::StrCat(base ? base : "/tmp", "/verityd-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) abort();
  return pattern;
}

std::unique_ptr<TestServer> TestServer::Start(server::ServerOptions options) {
  if (options.listen == server::ServerOptions().listen) {
    options.listen = "127.0.0.1:0";
  }
  if (options.store.root.empty()) options.store.root = NewTempDir() + "/store";
  std::unique_ptr<TestServer> server(new TestServer(std::move(options)));
  return server;
}

TestServer::TestServer(server::ServerOptions options)
    : options_(std::move(options)) {
  Restart();
}

void TestServer::Restart() {
  stub_.reset();
  channel_.reset();
  server_.reset();
  absl::StatusOr<std::unique_ptr<server::Verityd>> server =
      server::Verityd::Start(options_);
  if (!server.ok()) {
    fprintf(stderr, "test server: %s\n", server.status().ToString().c_str());
    abort();
  }
  server_ = *std::move(server);
  server_->WaitUntilServing();
  Connect();
}

void TestServer::Connect() {
  channel_ = grpc::CreateChannel(server_->address(),
                                 grpc::InsecureChannelCredentials());
  stub_ = v1::Verity::NewStub(channel_);
}

absl::StatusOr<v1::BlobInfo> SetName(v1::Verity::Stub& stub,
                                     absl::string_view name,
                                     absl::string_view digest,
                                     absl::string_view statement) {
  grpc::ClientContext context;
  v1::SetNameRequest request;
  request.set_name(std::string(name));
  request.set_digest(std::string(digest));
  request.set_name_statement(std::string(statement));
  v1::BlobInfo info;
  const absl::Status status =
      client::FromGrpcStatus(stub.SetName(&context, request, &info));
  if (!status.ok()) return status;
  return info;
}

absl::StatusOr<v1::PutResponse> PutBlob(v1::Verity::Stub& stub,
                                        absl::string_view data,
                                        const MerkleParams& params,
                                        absl::string_view name,
                                        absl::string_view expected_digest,
                                        size_t chunk, bool sized) {
  v1::PutHeader header;
  *header.mutable_params() = TreeParamsToProto(params);
  header.set_name(std::string(name));
  header.set_expected_digest(std::string(expected_digest));
  if (sized) header.set_content_size(data.size());
  return PutWithHeader(stub, header, data, chunk);
}

absl::StatusOr<v1::PutResponse> PutWithHeader(v1::Verity::Stub& stub,
                                              const v1::PutHeader& header,
                                              absl::string_view data,
                                              size_t chunk) {
  grpc::ClientContext context;
  v1::PutResponse response;
  auto writer = stub.Put(&context, &response);
  v1::PutRequest request;
  *request.mutable_header() = header;
  bool ok = writer->Write(request);
  for (size_t at = 0; ok && at < data.size(); at += chunk) {
    request.set_data(std::string(data.substr(at, chunk)));
    ok = writer->Write(request);
  }
  writer->WritesDone();
  absl::Status status = client::FromGrpcStatus(writer->Finish());
  if (!status.ok()) return status;
  return response;
}

ReadResult ReadBlob(v1::Verity::Stub& stub, absl::string_view digest,
                    uint64_t offset, uint64_t length, absl::string_view name) {
  ReadResult result;
  absl::StatusOr<client::BlobRef> blob =
      client::ParseBlobRef(digest.empty() ? name : digest);
  if (!blob.ok()) {
    result.status = blob.status();
    return result;
  }
  client::ReadOptions options;
  options.offset = offset;
  options.length = length;
  grpc::ClientContext context;
  result.status =
      client::ReadVerified(stub, &context, *blob, options,
                           [&](absl::Span<const uint8_t> bytes) {
                             result.data.append(bytes.begin(), bytes.end());
                             return absl::OkStatus();
                           })
          .status();
  return result;
}

std::string BlobDir(const TestServer& server, absl::string_view digest) {
  const size_t colon = digest.find(':');
  const std::string alg(digest.substr(0, colon));
  const std::string hex(digest.substr(colon + 1));
  return absl::StrCat(server.options().store.root, "/blobs/", alg, "/",
                      hex.substr(0, 2), "/", hex);
}

void FlipBit(const std::string& path, uint64_t offset) {
  const int fd = open(path.c_str(), O_RDWR);
  char byte = 0;
  if (fd < 0 || pread(fd, &byte, 1, offset) != 1) abort();
  byte ^= 0x10;
  if (pwrite(fd, &byte, 1, offset) != 1) abort();
  close(fd);
}

std::string DigestOf(absl::string_view data, const MerkleParams& params) {
  MerkleBuilder builder(params);
  if (!builder.Update(AsBytes(data)).ok()) abort();
  absl::StatusOr<MerkleTree> tree = builder.Finish();
  if (!tree.ok()) abort();
  return FormatDigest(params.hash_algorithm, AsBytes(tree->digest));
}

}  // namespace verity::testing
