// Where a read's verification runs: inline on the thread that completed the
// request (the RPC callback thread), or handed to the verification pool. The
// decision is dm-verity's try_verify_in_tasklet with per-class byte limits
// (use_bh_bytes), plus the time budget the kernel maintainers asked for. Pure:
// no threads, no clocks.

#ifndef VERITYD_SERVER_DISPATCH_DISPATCH_POLICY_H_
#define VERITYD_SERVER_DISPATCH_DISPATCH_POLICY_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/base/priority_class.h"

namespace verity::server {

enum class DispatchMode {
  kAdaptive,     // inline when small, urgent and cheap; else the pinned pool
  kInline,       // always inline (experiments)
  kPool,         // always the pinned, prioritized pool (experiments)
  kPoolUnbound,  // always an unpinned FIFO pool: the kernel's "before"
};

absl::StatusOr<DispatchMode> ParseDispatchMode(absl::string_view text);
absl::string_view DispatchModeName(DispatchMode mode);

enum class DispatchPath { kInline = 0, kPool = 1 };
inline constexpr int kNumDispatchPaths = 2;
absl::string_view DispatchPathName(DispatchPath path);

// Why a request was placed on its path. A request that starts inline and
// falls back is placed twice: inline, then pool with kCacheMiss or kBudget.
enum class DispatchReason {
  kWithinLimit = 0,  // inline: within its class's limit, budget left
  kForced = 1,       // the mode allows only one path
  kSize = 2,         // pool: more bytes than its class's inline limit
  kCacheMiss = 3,    // pool: a tree block it needs is not verified yet
  kBudget = 4,       // pool: this thread's inline time budget is spent
};
inline constexpr int kNumDispatchReasons = 5;
absl::string_view DispatchReasonName(DispatchReason reason);

// The largest request, in bytes, verified inline for each class. 0 never.
struct InlineLimits {
  std::array<uint64_t, kNumPriorityClasses> bytes = {};

  uint64_t For(PriorityClass c) const { return bytes[Index(c)]; }
  // The kernel's shape: NONE, RT and BE share one limit; IDLE never goes
  // inline (its work must not delay anyone's completions).
  static InlineLimits Uniform(uint64_t urgent_bytes);
  // "none=N,rt=N,be=N,idle=N"
  std::string ToString() const;
};

// The urgent classes' limit from two costs measured on this machine: the
// largest power-of-two request, at least one 4 KiB block and at most 1 MiB,
// whose SHA-256 costs no more than handing it to the pool. Inline work beyond
// that delays the completion thread's other streams by more than the handoff
// it saves.
uint64_t UrgentInlineLimit(absl::Duration hash_4k, absl::Duration handoff);

// Overrides entries of `base` from "rt=N,be=N,idle=N" (any subset, any order;
// "none" too). INVALID_ARGUMENT names the bad part.
absl::StatusOr<InlineLimits> ParseInlineLimits(absl::string_view text,
                                               InlineLimits base);

struct DispatchDecision {
  DispatchPath path;
  DispatchReason reason;
  friend bool operator==(const DispatchDecision& a, const DispatchDecision& b) {
    return a.path == b.path && a.reason == b.reason;
  }
};

// The decision before any work: by mode, then size, then budget. Whether the
// tree is cached is found out by verifying inline (see kCacheMiss).
DispatchDecision Decide(DispatchMode mode, const InlineLimits& limits,
                        PriorityClass priority_class, uint64_t bytes,
                        bool budget_left);

}  // namespace verity::server

#endif  // VERITYD_SERVER_DISPATCH_DISPATCH_POLICY_H_
