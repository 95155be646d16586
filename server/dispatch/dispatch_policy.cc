// Implements the dispatch decision and its flag syntax.

#include "server/dispatch/dispatch_policy.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace verity::server {

absl::StatusOr<DispatchMode> ParseDispatchMode(absl::string_view text) {
  for (DispatchMode mode : {DispatchMode::kAdaptive, DispatchMode::kInline,
                            DispatchMode::kPool, DispatchMode::kPoolUnbound}) {
    if (text == DispatchModeName(mode)) return mode;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dispatch mode '", text,
                   "': use adaptive, inline, pool or pool_unbound"));
}

absl::string_view DispatchModeName(DispatchMode mode) {
  switch (mode) {
    case DispatchMode::kAdaptive:
      return "adaptive";
    case DispatchMode::kInline:
      return "inline";
    case DispatchMode::kPool:
      return "pool";
    case DispatchMode::kPoolUnbound:
      return "pool_unbound";
  }
  return "adaptive";
}

absl::string_view DispatchPathName(DispatchPath path) {
  return path == DispatchPath::kInline ? "inline" : "pool";
}

absl::string_view DispatchReasonName(DispatchReason reason) {
  switch (reason) {
    case DispatchReason::kWithinLimit:
      return "within_limit";
    case DispatchReason::kForced:
      return "forced";
    case DispatchReason::kSize:
      return "size";
    case DispatchReason::kCacheMiss:
      return "cache_miss";
    case DispatchReason::kBudget:
      return "budget";
  }
  return "forced";
}

InlineLimits InlineLimits::Uniform(uint64_t urgent_bytes) {
  InlineLimits limits;
  limits.bytes[Index(PriorityClass::kNone)] = urgent_bytes;
  limits.bytes[Index(PriorityClass::kRt)] = urgent_bytes;
  limits.bytes[Index(PriorityClass::kBe)] = urgent_bytes;
  limits.bytes[Index(PriorityClass::kIdle)] = 0;
  return limits;
}

std::string InlineLimits::ToString() const {
  std::vector<std::string> parts;
  for (PriorityClass c : kAllPriorityClasses) {
    parts.push_back(absl::StrCat(PriorityClassName(c), "=", For(c)));
  }
  return absl::StrJoin(parts, ",");
}

uint64_t UrgentInlineLimit(absl::Duration hash_4k, absl::Duration handoff) {
  constexpr uint64_t kBlock = 4096;
  constexpr uint64_t kMax = uint64_t{1} << 20;
  uint64_t limit = kBlock;
  while (limit < kMax &&
         hash_4k * static_cast<double>(2 * limit / kBlock) <= handoff) {
    limit *= 2;
  }
  return limit;
}

namespace {

absl::StatusOr<PriorityClass> ParseClassName(absl::string_view name) {
  for (PriorityClass c : kAllPriorityClasses) {
    if (name == PriorityClassName(c)) return c;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown priority class '", name, "': use none, rt, be or idle"));
}

}  // namespace

absl::StatusOr<InlineLimits> ParseInlineLimits(absl::string_view text,
                                               InlineLimits base) {
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(part, absl::MaxSplits('=', 1));
    absl::StatusOr<PriorityClass> c = ParseClassName(kv.first);
    if (!c.ok()) return c.status();
    uint64_t bytes = 0;
    if (!absl::SimpleAtoi(kv.second, &bytes)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "inline limit '", part, "' is not CLASS=BYTES, e.g. rt=8192"));
    }
    base.bytes[Index(*c)] = bytes;
  }
  return base;
}

DispatchDecision Decide(DispatchMode mode, const InlineLimits& limits,
                        PriorityClass priority_class, uint64_t bytes,
                        bool budget_left) {
  switch (mode) {
    case DispatchMode::kInline:
      return {DispatchPath::kInline, DispatchReason::kForced};
    case DispatchMode::kPool:
    case DispatchMode::kPoolUnbound:
      return {DispatchPath::kPool, DispatchReason::kForced};
    case DispatchMode::kAdaptive:
      break;
  }
  const uint64_t limit = limits.For(priority_class);
  if (limit == 0 || bytes > limit) {
    return {DispatchPath::kPool, DispatchReason::kSize};
  }
  if (!budget_left) return {DispatchPath::kPool, DispatchReason::kBudget};
  return {DispatchPath::kInline, DispatchReason::kWithinLimit};
}

}  // namespace verity::server
