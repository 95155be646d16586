// Implements the proxy with the synchronous gRPC API: one upstream stream
// per client stream, relayed message by message.

#include "tests/sdk/flaky_proxy.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace verity::testing {

FlakyProxy::FlakyProxy(std::shared_ptr<grpc::Channel> upstream, Options options)
    : upstream_(v1::Verity::NewStub(std::move(upstream))),
      options_(options),
      rng_(options.seed) {}

std::vector<v1::ReadRequest> FlakyProxy::reads() const {
  absl::MutexLock lock(&mu_);
  return reads_;
}

std::vector<v1::ReadRequest> FlakyProxy::small_reads() const {
  absl::MutexLock lock(&mu_);
  return small_reads_;
}

int FlakyProxy::broken_streams() const {
  absl::MutexLock lock(&mu_);
  return broken_;
}

int FlakyProxy::Limit(const v1::ReadRequest& request) {
  absl::MutexLock lock(&mu_);
  reads_.push_back(request);
  if (options_.max_messages < 0) return -1;
  return std::uniform_int_distribution<int>(options_.min_messages,
                                            options_.max_messages)(rng_);
}

grpc::Status FlakyProxy::Read(grpc::ServerContext* context,
                              const v1::ReadRequest* request,
                              grpc::ServerWriter<v1::ReadResponse>* writer) {
  const int limit = Limit(*request);
  grpc::ClientContext upstream_context;
  std::unique_ptr<grpc::ClientReader<v1::ReadResponse>> reader =
      upstream_->Read(&upstream_context, *request);
  v1::ReadResponse msg;
  for (int sent = 0; reader->Read(&msg); ++sent) {
    if (sent == limit) {
      Abandon(&upstream_context, *reader);
      return Break(context, limit);
    }
    if (sent == options_.corrupt_message && !msg.data().empty()) {
      (*msg.mutable_data())[0] ^= 1;
    }
    if (!writer->Write(msg)) {
      Abandon(&upstream_context, *reader);
      return grpc::Status(grpc::StatusCode::CANCELLED, "the client left");
    }
  }
  return reader->Finish();
}

void FlakyProxy::Abandon(grpc::ClientContext* context,
                         grpc::ClientReader<v1::ReadResponse>& reader) {
  context->TryCancel();
  v1::ReadResponse msg;
  while (reader.Read(&msg)) {
  }
  reader.Finish().IgnoreError();
}

grpc::Status FlakyProxy::Break(grpc::ServerContext* context, int sent) {
  {
    absl::MutexLock lock(&mu_);
    ++broken_;
  }
  if (options_.stall) {
    // Holds the stream open, silent, until the client's deadline ends it.
    while (!context->IsCancelled()) absl::SleepFor(absl::Milliseconds(5));
    return grpc::Status(grpc::StatusCode::CANCELLED, "the client gave up");
  }
  return grpc::Status(options_.code, absl::StrCat("the proxy broke the stream "
                                                  "after ",
                                                  sent, " messages"));
}

grpc::Status FlakyProxy::ReadSmall(grpc::ServerContext*,
                                   const v1::ReadRequest* request,
                                   v1::ReadResponse* response) {
  {
    absl::MutexLock lock(&mu_);
    small_reads_.push_back(*request);
  }
  if (!options_.serve_small_reads) {
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "no ReadSmall here");
  }
  grpc::ClientContext context;
  grpc::Status status = upstream_->ReadSmall(&context, *request, response);
  if (options_.corrupt_small_reads && !response->data().empty()) {
    (*response->mutable_data())[response->data().size() / 2] ^= 1;
  }
  return status;
}

grpc::Status FlakyProxy::BatchRead(grpc::ServerContext*,
                                   const v1::BatchReadRequest* request,
                                   v1::BatchReadResponse* response) {
  if (!options_.serve_batch_reads) {
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "no BatchRead here");
  }
  grpc::ClientContext context;
  grpc::Status status = upstream_->BatchRead(&context, *request, response);
  const int i = options_.corrupt_batch_blob;
  if (i >= 0 && i < response->blobs_size()) {
    std::string& data =
        *response->mutable_blobs(i)->mutable_read()->mutable_data();
    if (!data.empty()) data[data.size() / 2] ^= 1;
  }
  return status;
}

grpc::Status FlakyProxy::Stat(grpc::ServerContext*,
                              const v1::StatRequest* request,
                              v1::BlobInfo* response) {
  grpc::ClientContext context;
  return upstream_->Stat(&context, *request, response);
}

grpc::Status FlakyProxy::List(grpc::ServerContext*,
                              const v1::ListRequest* request,
                              v1::ListResponse* response) {
  grpc::ClientContext context;
  return upstream_->List(&context, *request, response);
}

ProxyServer::ProxyServer(std::shared_ptr<grpc::Channel> upstream,
                         FlakyProxy::Options options)
    : proxy_(std::move(upstream), options) {
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&proxy_);
  server_ = builder.BuildAndStart();
  address_ = absl::StrCat("127.0.0.1:", port);
}

ProxyServer::~ProxyServer() { server_->Shutdown(); }

}  // namespace verity::testing
