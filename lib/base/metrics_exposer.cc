#include "lib/base/metrics_exposer.h"

#include <exception>
#include <vector>

#include "absl/strings/str_cat.h"

namespace verity {

absl::StatusOr<std::unique_ptr<prometheus::Exposer>> StartMetricsExposer(
    const std::string& listen, absl::string_view flag) {
  try {
    return std::make_unique<prometheus::Exposer>(listen, /*num_threads=*/1);
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("can't serve metrics on ", flag,
                                               "=", listen, ": ", e.what()));
  }
}

int ExposerPort(prometheus::Exposer& exposer) {
  const std::vector<int> ports = exposer.GetListeningPorts();
  return ports.empty() ? 0 : ports.front();
}

}  // namespace verity
