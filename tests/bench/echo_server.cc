// The bare gRPC baseline for small reads: a callback server (the API family
// verityd uses) answering byte ranges of an in-memory buffer of random bytes,
// with no store, no verification and no limits. Binds --listen (port 0 picks
// one) and logs "listening on HOST:PORT" and "serving" to stderr, as verityd
// does; stops on SIGTERM or SIGINT.
//   echo_server [--listen=127.0.0.1:0] [--bytes=268435456]
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tests/bench/echo.grpc.pb.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:0", "host:port; port 0 picks one");
ABSL_FLAG(uint64_t, bytes, uint64_t{256} << 20, "size of the buffer served");

namespace verity::bench {
namespace {

// The largest range one call may ask for: gRPC's default message limit.
constexpr uint64_t kMaxLength = 4 << 20;

// Random bytes, so that a read costs what copying real data costs.
std::string RandomBytes(uint64_t size) {
  std::mt19937_64 random(1);
  std::string bytes(size, '\0');
  for (uint64_t i = 0; i + 8 <= size; i += 8) {
    const uint64_t word = random();
    std::memcpy(&bytes[i], &word, 8);
  }
  return bytes;
}

// Read-only after construction: every callback thread may call it at once.
class EchoService final : public Echo::CallbackService {
 public:
  explicit EchoService(uint64_t bytes) : buffer_(RandomBytes(bytes)) {}

  grpc::ServerUnaryReactor* Get(grpc::CallbackServerContext* context,
                                const GetRequest* request,
                                GetReply* reply) override {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    const grpc::Status status = Fill(*request, *reply);
    reactor->Finish(status);
    return reactor;
  }

  grpc::ServerWriteReactor<GetReply>* GetStream(
      grpc::CallbackServerContext* /*context*/,
      const GetRequest* request) override {
    return new OneMessage(*this, *request);
  }

 private:
  // One message and the status in one operation (StartWriteAndFinish): the
  // least a server stream can cost. gRPC calls no OnWriteDone for it; OnDone
  // comes once it is sent or the call is cancelled.
  class OneMessage final : public grpc::ServerWriteReactor<GetReply> {
   public:
    OneMessage(const EchoService& service, const GetRequest& request) {
      const grpc::Status status = service.Fill(request, reply_);
      if (status.ok()) {
        StartWriteAndFinish(&reply_, grpc::WriteOptions(), status);
      } else {
        Finish(status);
      }
    }
    void OnDone() override { delete this; }

   private:
    GetReply reply_;
  };

  grpc::Status Fill(const GetRequest& request, GetReply& reply) const {
    if (request.length() > kMaxLength) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat("length over ", kMaxLength));
    }
    if (request.offset() > buffer_.size() ||
        request.length() > buffer_.size() - request.offset()) {
      return grpc::Status(grpc::StatusCode::OUT_OF_RANGE,
                          absl::StrCat("past the end (", buffer_.size(), ")"));
    }
    reply.set_data(buffer_.data() + request.offset(), request.length());
    return grpc::Status::OK;
  }

  const std::string buffer_;
};

void Log(const std::string& message) {
  std::fprintf(stderr, "echo_server: %s\n", message.c_str());
}

int Run() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before gRPC's threads

  const std::string listen = absl::GetFlag(FLAGS_listen);
  EchoService service(absl::GetFlag(FLAGS_bytes));
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    Log(absl::StrCat("can't listen on ", listen));
    return 1;
  }
  Log(absl::StrCat("listening on ", listen.substr(0, listen.rfind(':')), ":",
                   port));
  Log("serving");
  int signal = 0;
  sigwait(&signals, &signal);
  server->Shutdown();
  Log("stopped");
  return 0;
}

}  // namespace
}  // namespace verity::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return verity::bench::Run();
}
