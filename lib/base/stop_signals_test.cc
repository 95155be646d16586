// BlockStopSignals: the three signals are blocked in the caller and in a
// thread it starts afterwards, and a raised one waits for sigtimedwait.

#include "lib/base/stop_signals.h"

#include <pthread.h>

#include <thread>

#include "gtest/gtest.h"

namespace verity {
namespace {

bool Blocked(int signo) {
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  return sigismember(&mask, signo) == 1;
}

TEST(StopSignalsTest, BlockedHereAndInLaterThreadsAndWaitedFor) {
  const sigset_t signals = BlockStopSignals();
  for (const int s : {SIGTERM, SIGINT, SIGHUP}) {
    EXPECT_EQ(sigismember(&signals, s), 1);
    EXPECT_TRUE(Blocked(s));
  }
  EXPECT_EQ(sigismember(&signals, SIGUSR1), 0);
  bool in_thread = false;
  std::thread([&in_thread] { in_thread = Blocked(SIGHUP); }).join();
  EXPECT_TRUE(in_thread);
  ASSERT_EQ(pthread_kill(pthread_self(), SIGHUP), 0);
  const timespec no_wait = {0, 0};
  EXPECT_EQ(sigtimedwait(&signals, nullptr, &no_wait), SIGHUP);
}

}  // namespace
}  // namespace verity
