#include "lib/base/stop_signals.h"

#include <pthread.h>

#include <initializer_list>

namespace verity {

sigset_t StopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  for (const int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, s);
  return signals;
}

sigset_t BlockStopSignals() {
  const sigset_t signals = StopSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

}  // namespace verity
