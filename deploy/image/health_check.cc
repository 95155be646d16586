// verityd-health [--tls-ca=PEM] HOST:PORT: one grpc.health.v1 Check of the
// whole server, for exec probes where the kubelet's own gRPC probe cannot go
// (it speaks plaintext only, and the replicas tier serves TLS only). Health
// needs no token. Prints the status or the call's error; exits 0 if SERVING,
// 1 for any other status, 2 if the call fails or the arguments are wrong.
//
// It uses gRPC's generic stub on the two messages' wire form rather than a
// generated stub: the request (service "") is empty, and the response is one
// enum field, so the image needs no health proto of its own.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/synchronization/notification.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"

namespace {

constexpr char kUsage[] = "usage: verityd-health [--tls-ca=PEM] HOST:PORT\n";
constexpr char kCheckMethod[] = "/grpc.health.v1.Health/Check";
constexpr auto kDeadline = std::chrono::seconds(3);

// HealthCheckResponse.ServingStatus, by number.
const char* StatusName(uint64_t status) {
  switch (status) {
    case 0:
      return "UNKNOWN";
    case 1:
      return "SERVING";
    case 2:
      return "NOT_SERVING";
    case 3:
      return "SERVICE_UNKNOWN";
    default:
      return "unknown status";
  }
}

// The status field (1, a varint) of a HealthCheckResponse's bytes: 0 when
// absent, as protobuf reads it; false if the bytes hold anything else.
bool ParseStatus(const std::string& bytes, uint64_t* status) {
  *status = 0;
  size_t i = 0;
  while (i < bytes.size()) {
    if (bytes[i++] != 0x08) return false;  // field 1, wire type varint
    uint64_t value = 0;
    for (int shift = 0;; shift += 7) {
      if (i == bytes.size() || shift > 63) return false;
      const uint8_t byte = static_cast<uint8_t>(bytes[i++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
    }
    *status = value;  // the last occurrence wins, as in protobuf
  }
  return true;
}

bool ReadFile(const std::string& path, std::string* contents) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  *contents = text.str();
  return in.good() && !contents->empty();
}

}  // namespace

int main(int argc, char** argv) {
  std::string ca_file, target;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (absl::StartsWith(arg, "--tls-ca=")) {
      ca_file = arg.substr(std::string("--tls-ca=").size());
    } else if (target.empty() && !absl::StartsWith(arg, "-")) {
      target = arg;
    } else {
      std::fputs(kUsage, stderr);
      return 2;
    }
  }
  if (target.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials =
      grpc::InsecureChannelCredentials();
  if (!ca_file.empty()) {
    grpc::SslCredentialsOptions tls;
    if (!ReadFile(ca_file, &tls.pem_root_certs)) {
      std::fprintf(stderr, "verityd-health: cannot read %s\n", ca_file.c_str());
      return 2;
    }
    credentials = grpc::SslCredentials(tls);
  }
  grpc::GenericStub stub(grpc::CreateChannel(target, credentials));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kDeadline);
  // HealthCheckRequest{service: ""} encodes to zero bytes, sent as one empty
  // slice: a default ByteBuffer is no message at all, which gRPC refuses.
  const grpc::Slice no_bytes;
  const grpc::ByteBuffer request(&no_bytes, 1);
  grpc::ByteBuffer response;
  grpc::Status status;
  absl::Notification done;
  stub.UnaryCall(&context, kCheckMethod, grpc::StubOptions(), &request,
                 &response, [&](grpc::Status s) {
                   status = std::move(s);
                   done.Notify();
                 });
  done.WaitForNotification();
  if (!status.ok()) {
    std::printf("error %d: %s\n", static_cast<int>(status.error_code()),
                status.error_message().c_str());
    return 2;
  }
  // An empty message (status UNKNOWN) may come as no buffer at all.
  std::string bytes;
  grpc::Slice slice;
  if (response.Length() > 0 && response.DumpToSingleSlice(&slice).ok()) {
    bytes.assign(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  uint64_t serving = 0;
  if (bytes.size() != response.Length() || !ParseStatus(bytes, &serving)) {
    std::printf("error: an unreadable HealthCheckResponse\n");
    return 2;
  }
  std::printf("%s\n", StatusName(serving));
  return serving == 1 ? 0 : 1;
}
