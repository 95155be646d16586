// The Prometheus /metrics endpoint of verityd and of `verity sync`.

#ifndef VERITYD_LIB_BASE_METRICS_EXPOSER_H_
#define VERITYD_LIB_BASE_METRICS_EXPOSER_H_

#include <prometheus/exposer.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace verity {

// An exposer serving /metrics on `listen` (HOST:PORT, port 0 for a free
// one) with one thread. UNAVAILABLE naming `flag` (e.g. "--metrics_listen")
// if it cannot bind: prometheus-cpp reports that by throwing, and this is
// where the exception ends.
absl::StatusOr<std::unique_ptr<prometheus::Exposer>> StartMetricsExposer(
    const std::string& listen, absl::string_view flag);

// The port the exposer listens on; 0 if none.
int ExposerPort(prometheus::Exposer& exposer);

}  // namespace verity

#endif  // VERITYD_LIB_BASE_METRICS_EXPOSER_H_
