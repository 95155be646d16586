// Implements the progress line with carriage returns: each redraw starts at
// column 0 and pads over what the previous one left.

#include "client/cli/progress_meter.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace verity::cli {
namespace {

constexpr absl::Duration kRedrawInterval = absl::Milliseconds(200);
// Too early for a rate worth showing.
constexpr absl::Duration kMinElapsedForRate = absl::Milliseconds(500);

std::string Bytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  if (unit == 0) return absl::StrCat(static_cast<uint64_t>(bytes), " B");
  return absl::StrFormat("%.1f %s", bytes, kUnits[unit]);
}

std::string Clock(int64_t seconds) {
  if (seconds >= 3600) {
    return absl::StrFormat("%d:%02d:%02d", seconds / 3600, seconds / 60 % 60,
                           seconds % 60);
  }
  return absl::StrFormat("%d:%02d", seconds / 60, seconds % 60);
}

}  // namespace

std::string FormatProgress(uint64_t done, uint64_t total,
                           absl::Duration elapsed) {
  const int percent = total == 0 ? 100 : static_cast<int>(100.0 * done / total);
  std::string line =
      absl::StrCat("  ", Bytes(done), " / ", Bytes(total), "  ", percent, "%");
  const double seconds = absl::ToDoubleSeconds(elapsed);
  if (elapsed < kMinElapsedForRate || done == 0) return line;
  const double rate = done / seconds;
  absl::StrAppend(&line, "  ", Bytes(rate), "/s  ETA ",
                  Clock(static_cast<int64_t>(
                      (total - std::min(done, total)) / rate + 0.5)));
  return line;
}

ProgressMeter::ProgressMeter(std::FILE* out, uint64_t total, Clock clock)
    : out_(out), total_(total), clock_(std::move(clock)), start_(clock_()) {}

void ProgressMeter::Add(uint64_t bytes) {
  const absl::Time now = clock_();
  absl::MutexLock lock(&mu_);
  done_ += bytes;
  if (finished_ || now - last_draw_ < kRedrawInterval) return;
  DrawLocked(now);
}

void ProgressMeter::Finish() {
  absl::MutexLock lock(&mu_);
  if (finished_) return;
  finished_ = true;
  if (drawn_width_ == 0) return;
  std::fprintf(out_, "\r%s\r", std::string(drawn_width_, ' ').c_str());
  std::fflush(out_);
}

void ProgressMeter::DrawLocked(absl::Time now) {
  std::string line = FormatProgress(done_, total_, now - start_);
  const size_t width = line.size();
  // Pads over the tail of a longer previous line.
  if (width < drawn_width_) line.append(drawn_width_ - width, ' ');
  std::fprintf(out_, "\r%s", line.c_str());
  std::fflush(out_);
  drawn_width_ = std::max(drawn_width_, width);
  last_draw_ = now;
}

}  // namespace verity::cli
