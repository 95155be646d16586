// Removes a temporary file when the process is killed by SIGINT, SIGTERM or
// SIGHUP, so that an interrupted `verity get -o FILE` leaves nothing behind.

#ifndef VERITYD_CLIENT_CLI_REMOVE_ON_SIGNAL_H_
#define VERITYD_CLIENT_CLI_REMOVE_ON_SIGNAL_H_

#include <string>

namespace verity::cli {

// While an instance lives, those signals unlink `path` and then end the
// process as the signal would have (exit status 128 + signal number in a
// shell). Signals the process ignores stay ignored. One instance at a time per
// process; construct and destroy it on one thread. The handlers stay
// installed afterwards (SA_RESETHAND makes each one fire once).
class RemoveOnSignal {
 public:
  explicit RemoveOnSignal(std::string path);
  RemoveOnSignal(const RemoveOnSignal&) = delete;
  RemoveOnSignal& operator=(const RemoveOnSignal&) = delete;
  ~RemoveOnSignal();

 private:
  const std::string path_;
};

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_REMOVE_ON_SIGNAL_H_
