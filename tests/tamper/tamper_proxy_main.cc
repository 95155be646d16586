// Test-only: runs a TamperProxy in front of a verityd until SIGTERM or
// SIGINT, for end-to-end tests of the `verity` CLI against a lying server.
//
//   tamper_proxy_main --upstream=127.0.0.1:PORT --mode=flip-data-bit
//
// Logs "listening on HOST:PORT" once it serves, then one line per Read.

#include <signal.h>

#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "tests/tamper/tamper_proxy.h"

ABSL_FLAG(std::string, upstream, "", "host:port of the verityd to forward to");
ABSL_FLAG(std::string, mode, "none",
          "how to tamper with Read streams, e.g. flip-tree-bit:0 (see "
          "tests/tamper/tamper.h)");
ABSL_FLAG(std::string, listen, "127.0.0.1:0", "address to serve on");

namespace verity::tamper {
namespace {

int Run(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::StatusOr<Tamper> tamper = ParseTamper(absl::GetFlag(FLAGS_mode));
  if (!tamper.ok() || absl::GetFlag(FLAGS_upstream).empty()) {
    std::fprintf(stderr, "tamper proxy: %s\n",
                 tamper.ok() ? "--upstream is required"
                             : std::string(tamper.status().message()).c_str());
    return 2;
  }
  // Blocked before any thread starts, so that only sigwait sees them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  TamperProxyOptions options;
  options.upstream = absl::GetFlag(FLAGS_upstream);
  options.listen = absl::GetFlag(FLAGS_listen);
  options.tamper = *tamper;
  options.log_streams = true;
  absl::StatusOr<std::unique_ptr<TamperProxy>> proxy =
      TamperProxy::Start(options);
  if (!proxy.ok()) {
    std::fprintf(stderr, "tamper proxy: %s\n",
                 std::string(proxy.status().message()).c_str());
    return 1;
  }
  std::fprintf(stderr, "tamper proxy (%s): listening on %s\n",
               TamperName(*tamper).c_str(), (*proxy)->address().c_str());
  int signal = 0;
  sigwait(&signals, &signal);
  return 0;
}

}  // namespace
}  // namespace verity::tamper

int main(int argc, char** argv) { return verity::tamper::Run(argc, argv); }
