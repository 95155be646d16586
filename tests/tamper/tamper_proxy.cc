// Implements TamperProxy on gRPC's synchronous API: each call is one handler
// thread that drives one upstream call with a context derived from its own,
// so the client's cancellation and deadline reach the real server.

#include "tests/tamper/tamper_proxy.h"

#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/verity/v1/verity.grpc.pb.h"
#include "tests/tamper/stream_tamper.h"

namespace verity::tamper {
namespace {

// Leaves room for a chunk grown by a tamper mode.
constexpr int kMaxMessageBytes = 16 << 20;

// The proxy's one conversion to a gRPC status, for its own failures.
grpc::Status ToGrpc(const absl::Status& status) {
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

std::unique_ptr<grpc::ClientContext> UpstreamContext(
    const grpc::ServerContext& context) {
  return grpc::ClientContext::FromServerContext(context);
}

}  // namespace

void OutcomeLog::Add(const TamperOutcome& outcome) {
  if (print_) {
    std::fprintf(stderr, "tamper proxy: %s\n",
                 outcome.applied || !outcome.what.empty()
                     ? outcome.what.c_str()
                     : "nothing to tamper with; passed through");
  }
  absl::MutexLock lock(&mu_);
  outcomes_.push_back(outcome);
}

std::vector<TamperOutcome> OutcomeLog::Get() const {
  absl::MutexLock lock(&mu_);
  return outcomes_;
}

class TamperProxy::Service final : public v1::Verity::Service {
 public:
  Service(const TamperProxyOptions& options, OutcomeLog* log)
      : tamper_(options.tamper), log_(log) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(kMaxMessageBytes);
    stub_ = v1::Verity::NewStub(grpc::CreateCustomChannel(
        options.upstream, grpc::InsecureChannelCredentials(), args));
  }

  grpc::Status Read(grpc::ServerContext* context,
                    const v1::ReadRequest* request,
                    grpc::ServerWriter<v1::ReadResponse>* writer) override;
  grpc::Status Put(grpc::ServerContext* context,
                   grpc::ServerReader<v1::PutRequest>* reader,
                   v1::PutResponse* response) override;

  grpc::Status Stat(grpc::ServerContext* context,
                    const v1::StatRequest* request,
                    v1::BlobInfo* response) override {
    return stub_->Stat(UpstreamContext(*context).get(), *request, response);
  }
  grpc::Status List(grpc::ServerContext* context,
                    const v1::ListRequest* request,
                    v1::ListResponse* response) override {
    return stub_->List(UpstreamContext(*context).get(), *request, response);
  }
  grpc::Status Delete(grpc::ServerContext* context,
                      const v1::DeleteRequest* request,
                      v1::DeleteResponse* response) override {
    return stub_->Delete(UpstreamContext(*context).get(), *request, response);
  }

 private:
  const Tamper tamper_;
  OutcomeLog* const log_;
  std::unique_ptr<v1::Verity::Stub> stub_;
};

grpc::Status TamperProxy::Service::Read(
    grpc::ServerContext* context, const v1::ReadRequest* request,
    grpc::ServerWriter<v1::ReadResponse>* writer) {
  std::unique_ptr<grpc::ClientContext> upstream = UpstreamContext(*context);
  auto reader = stub_->Read(upstream.get(), UpstreamRequest(tamper_, *request));
  ReadStream stream;
  for (v1::ReadResponse msg; reader->Read(&msg);) stream.push_back(msg);
  const grpc::Status status = reader->Finish();
  if (status.ok()) {
    absl::StatusOr<TamperOutcome> outcome =
        ApplyTamper(tamper_, *request, &stream);
    if (!outcome.ok()) return ToGrpc(outcome.status());
    log_->Add(*outcome);
  } else {
    // Passed on as it is (NOT_FOUND, OUT_OF_RANGE, ...), but logged: a mode
    // that reads another range or blob can cause it.
    TamperOutcome outcome;
    outcome.what = absl::StrCat("upstream failed: ", status.error_message());
    log_->Add(outcome);
  }
  for (const v1::ReadResponse& msg : stream) {
    if (!writer->Write(msg)) break;  // the client has gone
  }
  return status;
}

grpc::Status TamperProxy::Service::Put(
    grpc::ServerContext* context, grpc::ServerReader<v1::PutRequest>* reader,
    v1::PutResponse* response) {
  std::unique_ptr<grpc::ClientContext> upstream = UpstreamContext(*context);
  auto writer = stub_->Put(upstream.get(), response);
  for (v1::PutRequest request; reader->Read(&request);) {
    if (!writer->Write(request)) break;
  }
  // A cancelled client also ends the reads; committing upstream then would
  // store a partial blob.
  if (context->IsCancelled()) {
    upstream->TryCancel();
    writer->Finish().IgnoreError();
    return grpc::Status::CANCELLED;
  }
  writer->WritesDone();
  return writer->Finish();
}

absl::StatusOr<std::unique_ptr<TamperProxy>> TamperProxy::Start(
    const TamperProxyOptions& options) {
  std::unique_ptr<TamperProxy> proxy(new TamperProxy(options));
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(),
                           &port);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  builder.RegisterService(proxy->service_.get());
  proxy->server_ = builder.BuildAndStart();
  if (proxy->server_ == nullptr || port == 0) {
    return absl::UnavailableError(
        absl::StrCat("the tamper proxy cannot listen on ", options.listen));
  }
  const size_t colon = options.listen.rfind(':');
  proxy->address_ = absl::StrCat(options.listen.substr(0, colon), ":", port);
  return proxy;
}

TamperProxy::TamperProxy(const TamperProxyOptions& options)
    : log_(options.log_streams),
      service_(std::make_unique<Service>(options, &log_)) {}

TamperProxy::~TamperProxy() {
  if (server_ == nullptr) return;
  // Calls in flight are cancelled at once; a test has no use for them.
  server_->Shutdown(std::chrono::system_clock::now());
  server_->Wait();
}

}  // namespace verity::tamper
