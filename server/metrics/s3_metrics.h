// Metrics of the requests an S3 store makes, one observation per attempt:
// verityd_s3_requests_total{op, status} (status: the HTTP status, or "error"
// when no answer came), verityd_s3_request_duration_seconds{op, status}, and
// verityd_s3_received_bytes_total. `op` is the S3 operation ("GetObject",
// "UploadPart", ...); nothing else of a request, and never a credential, is a
// label.

#ifndef VERITYD_SERVER_METRICS_S3_METRICS_H_
#define VERITYD_SERVER_METRICS_S3_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace verity::server {

// Thread-safe. A series is made on its first observation: the operations and
// statuses are few, and a request is a network round trip, so looking one up
// by its labels costs nothing that matters.
class S3Metrics {
 public:
  // `registry` must outlive this.
  explicit S3Metrics(prometheus::Registry& registry);

  // What S3ClientOptions::observe reports: `http_status` 0 for no answer.
  void Observe(absl::string_view op, int http_status, absl::Duration latency,
               uint64_t bytes);

 private:
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& latency_;
  prometheus::Counter& received_bytes_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_METRICS_S3_METRICS_H_
