// The signals a long-running command waits for itself (SIGTERM, SIGINT and
// SIGHUP), blocked so that only its sigwait()/sigtimedwait() receives them,
// whichever thread the kernel picks.

#ifndef VERITYD_LIB_BASE_STOP_SIGNALS_H_
#define VERITYD_LIB_BASE_STOP_SIGNALS_H_

#include <signal.h>

namespace verity {

// {SIGTERM, SIGINT, SIGHUP}.
sigset_t StopSignals();

// Blocks StopSignals() in the calling thread, and so in every thread it
// starts afterwards (threads inherit the mask): call it before any thread
// starts. Returns the set.
sigset_t BlockStopSignals();

}  // namespace verity

#endif  // VERITYD_LIB_BASE_STOP_SIGNALS_H_
