// Implements the load targets: verityd's Read stream, the SDK, and the echo
// server's unary call and one-message stream.

#include "tests/bench/load_target.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "proto/verity/v1/verity.grpc.pb.h"
#include "tests/bench/echo.grpc.pb.h"
#include "verity/client.h"

namespace verity::bench {
namespace {

// A call that has not finished by then is counted as an error.
constexpr absl::Duration kRpcDeadline = absl::Seconds(30);

absl::Status FromGrpc(const grpc::Status& status) {
  // gRPC's codes are absl's, number for number.
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

absl::Status CheckLength(uint64_t offset, uint64_t got, uint64_t want) {
  if (got == want) return absl::OkStatus();
  return absl::DataLossError(
      absl::StrCat("offset ", offset, ": got ", got, " of ", want, " bytes"));
}

void SetDeadline(grpc::ClientContext& context) {
  context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcDeadline));
}

// Each client gets its own connection: a channel with a local subchannel pool
// does not share the subchannel (and so the TCP connection) of another.
std::shared_ptr<grpc::Channel> NewChannel(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(16 << 20);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto channel = grpc::CreateCustomChannel(
      address, grpc::InsecureChannelCredentials(), args);
  channel->WaitForConnected(absl::ToChronoTime(absl::Now() + kRpcDeadline));
  return channel;
}

// verityd's Read stream, drained; the request says the client holds the whole
// tree, so none is sent, and nothing is verified on this side.
class VeritydReader final : public LoadReader {
 public:
  VeritydReader(const TargetOptions& options, const ReadSpec& spec, bool small)
      : stub_(v1::Verity::NewStub(NewChannel(options.address))),
        digest_(options.digest),
        spec_(spec),
        small_(small) {}

  absl::Status Read(uint64_t offset) override {
    grpc::ClientContext context;
    SetDeadline(context);
    v1::ReadRequest request;
    request.set_digest(digest_);
    request.set_offset(offset);
    request.set_length(spec_.length);
    request.set_priority_class(spec_.priority_class);
    request.set_have_whole_tree(true);
    v1::ReadResponse response;
    uint64_t bytes = 0;
    grpc::Status status;
    if (small_) {
      status = stub_->ReadSmall(&context, request, &response);
      bytes = response.data().size();
    } else {
      auto reader = stub_->Read(&context, request);
      while (reader->Read(&response)) bytes += response.data().size();
      status = reader->Finish();
    }
    if (!status.ok()) return FromGrpc(status);
    return CheckLength(offset, bytes, spec_.length);
  }

 private:
  const std::unique_ptr<v1::Verity::Stub> stub_;
  const std::string digest_;
  const ReadSpec spec_;
  const bool small_;
};

class VeritydTarget : public LoadTarget {
 public:
  // `small`: ReadSmall calls instead of Read streams.
  explicit VeritydTarget(TargetOptions options, bool small = false)
      : options_(std::move(options)), small_(small) {}

  absl::StatusOr<BlobShape> Shape() const override {
    if (options_.digest.empty()) {
      return absl::InvalidArgumentError("verityd targets need --digest");
    }
    grpc::ClientContext context;
    SetDeadline(context);
    v1::StatRequest request;
    request.set_digest(options_.digest);
    v1::BlobInfo info;
    const grpc::Status status =
        v1::Verity::NewStub(NewChannel(options_.address))
            ->Stat(&context, request, &info);
    if (!status.ok()) return FromGrpc(status);
    const auto& descriptor = info.fsverity_descriptor();
    return BlobShape{descriptor.data_size(),
                     uint64_t{1} << descriptor.log_block_size()};
  }

  absl::StatusOr<std::unique_ptr<LoadReader>> NewReader(
      const ReadSpec& spec) const override {
    return std::make_unique<VeritydReader>(options_, spec, small_);
  }

 protected:
  const TargetOptions options_;
  const bool small_;
};

// Takes what a fetch delivers and keeps nothing.
class DiscardingSink final : public sdk::Sink {
 public:
  bool SupportsRandomAccess() const override { return true; }
  absl::Status Write(uint64_t /*offset*/,
                     absl::Span<const uint8_t> /*data*/) override {
    return absl::OkStatus();
  }
};

sdk::PriorityClass SdkPriority(v1::PriorityClass priority_class) {
  switch (priority_class) {
    case v1::PRIORITY_CLASS_RT:
      return sdk::PriorityClass::kRealtime;
    case v1::PRIORITY_CLASS_BE:
      return sdk::PriorityClass::kBestEffort;
    case v1::PRIORITY_CLASS_IDLE:
      return sdk::PriorityClass::kIdle;
    default:
      return sdk::PriorityClass::kUnset;
  }
}

// The SDK as an application uses it: one sdk::Client, every read verified
// against the trusted digest with the tree blocks the client has cached.
class VerifiedReader final : public LoadReader {
 public:
  static absl::StatusOr<std::unique_ptr<LoadReader>> Create(
      const std::string& sdk_target, const sdk::Digest& digest,
      const ReadSpec& spec) {
    sdk::ClientOptions options;
    options.target = sdk_target;
    options.rpc_timeout = kRpcDeadline;
    absl::StatusOr<std::unique_ptr<sdk::Client>> client =
        sdk::Client::Create(options);
    if (!client.ok()) return client.status();
    std::unique_ptr<VerifiedReader> reader(
        new VerifiedReader(std::move(*client), digest, spec));
    // The whole blob once: every tree block verified and cached, the way a
    // long-running application's cache ends up.
    DiscardingSink sink;
    absl::Status warmed = reader->client_->Fetch(digest, sink, reader->fetch_);
    if (!warmed.ok()) return warmed;
    reader->at_start_ = reader->client_->Stats();
    return reader;
  }

  absl::Status Read(uint64_t offset) override {
    sdk::FetchOptions fetch = fetch_;
    fetch.deadline = absl::Now() + kRpcDeadline;
    absl::StatusOr<std::string> data =
        client_->ReadRange(digest_, offset, length_, fetch);
    if (!data.ok()) return data.status();
    return CheckLength(offset, data->size(), length_);
  }

  uint64_t retries() const override {
    return client_->Stats().retries - at_start_.retries;
  }
  uint64_t tree_blocks_received() const override {
    return client_->Stats().tree_blocks_received -
           at_start_.tree_blocks_received;
  }

 private:
  VerifiedReader(std::unique_ptr<sdk::Client> client, sdk::Digest digest,
                 const ReadSpec& spec)
      : client_(std::move(client)),
        digest_(std::move(digest)),
        length_(spec.length) {
    fetch_.priority = SdkPriority(spec.priority_class);
  }

  const std::unique_ptr<sdk::Client> client_;
  const sdk::Digest digest_;
  const uint64_t length_;
  sdk::FetchOptions fetch_;
  sdk::ClientStats at_start_;
};

// verityd's blob through the SDK; its shape as VeritydTarget reads it.
class VerifiedTarget final : public VeritydTarget {
 public:
  using VeritydTarget::VeritydTarget;

  absl::StatusOr<std::unique_ptr<LoadReader>> NewReader(
      const ReadSpec& spec) const override {
    absl::StatusOr<sdk::Digest> digest = sdk::Digest::Parse(options_.digest);
    if (!digest.ok()) return digest.status();
    // Channels alike share one connection (gRPC's global subchannel pool),
    // and the SDK takes no channel arguments; a target that differs only in
    // a query, which the resolver ignores, gives each client its own.
    const std::string target =
        absl::StrCat("dns:///", options_.address, "?client=", next_client_++);
    return VerifiedReader::Create(target, *digest, spec);
  }

 private:
  mutable std::atomic<int> next_client_{0};
};

// The echo server's unary Get or one-message GetStream.
class EchoReader final : public LoadReader {
 public:
  EchoReader(const std::string& address, uint64_t length, bool stream)
      : stub_(Echo::NewStub(NewChannel(address))),
        length_(length),
        stream_(stream) {}

  absl::Status Read(uint64_t offset) override {
    grpc::ClientContext context;
    SetDeadline(context);
    GetRequest request;
    request.set_offset(offset);
    request.set_length(length_);
    GetReply reply;
    uint64_t bytes = 0;
    grpc::Status status;
    if (stream_) {
      auto reader = stub_->GetStream(&context, request);
      while (reader->Read(&reply)) bytes += reply.data().size();
      status = reader->Finish();
    } else {
      status = stub_->Get(&context, request, &reply);
      bytes = reply.data().size();
    }
    if (!status.ok()) return FromGrpc(status);
    return CheckLength(offset, bytes, length_);
  }

 private:
  const std::unique_ptr<Echo::Stub> stub_;
  const uint64_t length_;
  const bool stream_;
};

class EchoTarget final : public LoadTarget {
 public:
  EchoTarget(TargetOptions options, bool stream)
      : options_(std::move(options)), stream_(stream) {}

  // The server's blocks are nominal: 4 KiB, as verityd's.
  absl::StatusOr<BlobShape> Shape() const override {
    return BlobShape{options_.echo_bytes, 4096};
  }

  absl::StatusOr<std::unique_ptr<LoadReader>> NewReader(
      const ReadSpec& spec) const override {
    return std::make_unique<EchoReader>(options_.address, spec.length, stream_);
  }

 private:
  const TargetOptions options_;
  const bool stream_;
};

using MakeTarget = std::unique_ptr<LoadTarget> (*)(const TargetOptions&);

// One line per --target.
const std::pair<const char*, MakeTarget> kKinds[] = {
    {"verityd",
     [](const TargetOptions& o) -> std::unique_ptr<LoadTarget> {
       return std::make_unique<VeritydTarget>(o);
     }},
    {"verityd_small",
     [](const TargetOptions& o) -> std::unique_ptr<LoadTarget> {
       return std::make_unique<VeritydTarget>(o, /*small=*/true);
     }},
    {"verityd_verified",
     [](const TargetOptions& o) -> std::unique_ptr<LoadTarget> {
       return std::make_unique<VerifiedTarget>(o);
     }},
    {"echo_unary",
     [](const TargetOptions& o) -> std::unique_ptr<LoadTarget> {
       return std::make_unique<EchoTarget>(o, /*stream=*/false);
     }},
    {"echo_stream",
     [](const TargetOptions& o) -> std::unique_ptr<LoadTarget> {
       return std::make_unique<EchoTarget>(o, /*stream=*/true);
     }},
};

}  // namespace

std::vector<std::string> TargetKinds() {
  std::vector<std::string> kinds;
  for (const auto& [name, make] : kKinds) kinds.push_back(name);
  return kinds;
}

absl::StatusOr<std::unique_ptr<LoadTarget>> MakeLoadTarget(
    const TargetOptions& options) {
  for (const auto& [name, make] : kKinds) {
    if (options.kind == name) return make(options);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown target ", options.kind, "; want one of ",
                   absl::StrJoin(TargetKinds(), ", ")));
}

}  // namespace verity::bench
