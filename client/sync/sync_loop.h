// `verity sync`'s loop around its attempts: every --interval after a
// success, sooner after a failure (a server that is not listening yet, as a
// sidecar starts with it, or restarting, is tried again within seconds; a
// lasting failure no more often than every interval), at once on SIGHUP,
// until SIGTERM or SIGINT.

#ifndef VERITYD_CLIENT_SYNC_SYNC_LOOP_H_
#define VERITYD_CLIENT_SYNC_SYNC_LOOP_H_

#include <signal.h>

#include "absl/functional/function_ref.h"
#include "absl/random/bit_gen_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "verity/options.h"

namespace verity::sync {

// Why a wait between attempts ended.
enum class Wake { kTimeout, kSyncNow, kStop };

// The waits after failed attempts: 1 s (or `interval` if shorter), doubling
// up to `interval`, jittered.
sdk::RetryPolicy FailureBackoff(absl::Duration interval);

// Makes attempts (each `attempt()`) until `wait(timeout)` returns kStop:
// after a success it waits `interval`, after a failure the next
// FailureBackoff delay (the delays start over after a success); a wait that
// returns kSyncNow or kTimeout is followed by an attempt.
void RunSyncLoop(absl::FunctionRef<absl::Status()> attempt,
                 absl::Duration interval,
                 absl::FunctionRef<Wake(absl::Duration timeout)> wait,
                 absl::BitGenRef gen);

// The waits of the command: SIGHUP is kSyncNow, SIGTERM and SIGINT kStop,
// `timeout` passing kTimeout. `signals` holds them, blocked in this thread
// (and so, blocked before any thread starts, in every thread).
Wake WaitForSignal(const sigset_t& signals, absl::Duration timeout);

}  // namespace verity::sync

#endif  // VERITYD_CLIENT_SYNC_SYNC_LOOP_H_
