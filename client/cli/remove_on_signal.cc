// Implements RemoveOnSignal with one process-wide pointer that the handler
// reads; unlink(), sigaction() and raise() are async-signal-safe.

#include "client/cli/remove_on_signal.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <utility>

namespace verity::cli {
namespace {

std::atomic<const char*> armed_path{nullptr};

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

void RemoveAndDie(int signo) {
  if (const char* path = armed_path.load()) unlink(path);
  // SA_RESETHAND restored the default action; the signal is blocked until
  // this handler returns, and then ends the process.
  raise(signo);
}

// A signal the process was started ignoring (SIGINT for `verity get &` in a
// script) stays ignored, as the shell meant.
void InstallHandlers() {
  struct sigaction action = {};
  action.sa_handler = RemoveAndDie;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int signo : kSignals) sigaddset(&action.sa_mask, signo);
  for (int signo : kSignals) {
    struct sigaction old;
    if (sigaction(signo, nullptr, &old) == 0 && old.sa_handler != SIG_IGN) {
      sigaction(signo, &action, nullptr);
    }
  }
}

}  // namespace

RemoveOnSignal::RemoveOnSignal(std::string path) : path_(std::move(path)) {
  armed_path.store(path_.c_str());
  InstallHandlers();
}

RemoveOnSignal::~RemoveOnSignal() { armed_path.store(nullptr); }

}  // namespace verity::cli
