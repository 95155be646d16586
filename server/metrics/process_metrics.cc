// Implements ProcessMetrics from /proc/self/stat, /proc/stat and
// /proc/self/fd.

#include "server/metrics/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"

namespace verity::server {
namespace {

// The fields of /proc/self/stat this needs (proc(5) numbering).
struct ProcStat {
  double cpu_seconds = 0;       // utime (14) + stime (15)
  double start_after_boot = 0;  // starttime (22), in seconds
  double virtual_bytes = 0;     // vsize (23)
  double resident_bytes = 0;    // rss (24), in pages
};

std::optional<ProcStat> ReadProcStat() {
  std::ifstream file("/proc/self/stat");
  std::string line;
  if (!std::getline(file, line)) return std::nullopt;
  // The command name (field 2) may hold spaces; fields resume after its ')'.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  ProcStat stat;
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  for (int n = 3; fields >> field && n <= 24; ++n) {
    double value = 0;
    if (n < 14 || !absl::SimpleAtod(field, &value)) continue;
    if (n == 14 || n == 15) stat.cpu_seconds += value / tick;
    if (n == 22) stat.start_after_boot = value / tick;
    if (n == 23) stat.virtual_bytes = value;
    if (n == 24) stat.resident_bytes = value * page;
  }
  return stat;
}

std::optional<double> BootTime() {
  std::ifstream file("/proc/stat");
  std::string key;
  double value = 0;
  while (file >> key) {
    if (key == "btime" && file >> value) return value;
    file.ignore(1 << 20, '\n');
  }
  return std::nullopt;
}

std::optional<double> OpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return std::nullopt;
  double count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count - 1;  // not the descriptor reading the directory
}

}  // namespace

prometheus::MetricFamily OneSample(
    const char* name, const char* help, prometheus::MetricType type,
    double value, std::vector<prometheus::ClientMetric::Label> labels) {
  prometheus::ClientMetric metric;
  metric.label = std::move(labels);
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  return prometheus::MetricFamily{name, help, type, {metric}};
}

std::vector<prometheus::MetricFamily> ProcessMetrics::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> families;
  if (std::optional<ProcStat> stat = ReadProcStat()) {
    families.push_back(OneSample("process_cpu_seconds_total",
                                 "Total user and system CPU time spent in "
                                 "seconds.",
                                 MetricType::Counter, stat->cpu_seconds));
    families.push_back(OneSample("process_resident_memory_bytes",
                                 "Resident memory size in bytes.",
                                 MetricType::Gauge, stat->resident_bytes));
    families.push_back(OneSample("process_virtual_memory_bytes",
                                 "Virtual memory size in bytes.",
                                 MetricType::Gauge, stat->virtual_bytes));
    if (std::optional<double> boot = BootTime()) {
      families.push_back(
          OneSample("process_start_time_seconds",
                    "Start time of the process since unix epoch in seconds.",
                    MetricType::Gauge, *boot + stat->start_after_boot));
    }
  }
  if (std::optional<double> fds = OpenFds()) {
    families.push_back(OneSample("process_open_fds",
                                 "Number of open file descriptors.",
                                 MetricType::Gauge, *fds));
  }
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    families.push_back(
        OneSample("process_max_fds", "Maximum number of open file descriptors.",
                  MetricType::Gauge, static_cast<double>(limit.rlim_cur)));
  }
  return families;
}

}  // namespace verity::server
