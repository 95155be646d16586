// Test-only: a malicious verityd. It forwards every call to a real verityd
// and corrupts each Read stream in one chosen way, so tests can check that
// clients refuse what it sends.

#ifndef VERITYD_TESTS_TAMPER_TAMPER_PROXY_H_
#define VERITYD_TESTS_TAMPER_TAMPER_PROXY_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "tests/tamper/stream_layout.h"
#include "tests/tamper/tamper.h"

namespace verity::tamper {

struct TamperProxyOptions {
  std::string upstream;  // host:port of the verityd to forward to
  std::string listen = "127.0.0.1:0";
  Tamper tamper;
  bool log_streams = false;  // one line per Read stream on stderr
};

// The outcome of every Read stream so far, in the order they were tampered
// with. Thread-safe.
class OutcomeLog {
 public:
  explicit OutcomeLog(bool print) : print_(print) {}
  void Add(const TamperOutcome& outcome) ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<TamperOutcome> Get() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const bool print_;
  mutable absl::Mutex mu_;
  std::vector<TamperOutcome> outcomes_ ABSL_GUARDED_BY(mu_);
};

// Thread-safe. Holds Read replies whole before it passes them on, so it is
// for blobs that fit in memory. Put, Stat, List and Delete go through
// unchanged; a stream the mode finds nothing to damage in goes through
// unchanged too, and its outcome says so. Destroying it cancels calls in
// flight.
class TamperProxy {
 public:
  // UNAVAILABLE if `options.listen` cannot be bound.
  static absl::StatusOr<std::unique_ptr<TamperProxy>> Start(
      const TamperProxyOptions& options);
  ~TamperProxy();

  // "host:port" to connect to, with the port actually bound.
  const std::string& address() const { return address_; }
  std::vector<TamperOutcome> outcomes() const { return log_.Get(); }

 private:
  class Service;
  explicit TamperProxy(const TamperProxyOptions& options);

  OutcomeLog log_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

}  // namespace verity::tamper

#endif  // VERITYD_TESTS_TAMPER_TAMPER_PROXY_H_
