// A few threads that run tasks in submission order, off the caller's thread:
// the server's blocking store work (Put, Delete, a remote store's Stat and
// List), and the completions that a store's asynchronous reads must deliver
// later, never inside the call that started them.

#ifndef VERITYD_LIB_BASE_EXECUTOR_H_
#define VERITYD_LIB_BASE_EXECUTOR_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace verity {

struct ExecutorOptions {
  // Threads that run tasks.
  int threads = 2;
  // Tasks waiting for a thread; Submit() refuses more. An executor whose
  // every task belongs to a bounded number of operations in flight (a
  // store's read completions) may leave it unbounded.
  size_t max_queued = 1024;
  // Thread names (for top and gdb): NAME/0, NAME/1, ...; at most 12 bytes.
  std::string name = "executor";
};

// One thread with an unbounded queue, named `name`: for the completions of
// asynchronous reads, each of which belongs to a read in flight that its
// caller bounds, and none of which may be dropped.
ExecutorOptions CompletionThreadOptions(std::string name);

// Thread-safe. Tasks run in submission order, `threads` at a time.
class Executor {
 public:
  using Task = absl::AnyInvocable<void() &&>;

  explicit Executor(const ExecutorOptions& options = {});
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;
  // Runs what is queued, then joins the threads. May run on one of them (the
  // last owner of a shared Executor may let go inside a task): that thread
  // is left to finish the queue with the others and end on its own.
  ~Executor();

  // Queues `task`; RESOURCE_EXHAUSTED, with `task` dropped unrun, if
  // max_queued tasks are waiting already. Never runs `task` inside the call.
  absl::Status Submit(Task task);

 private:
  // What the threads use, which they share: it outlives the Executor while
  // a thread left to end on its own still runs.
  struct Queue {
    explicit Queue(const ExecutorOptions& options) : options(options) {}
    void Run() ABSL_LOCKS_EXCLUDED(mu);

    const ExecutorOptions options;
    absl::Mutex mu;
    absl::CondVar work_or_stop;
    std::deque<Task> tasks ABSL_GUARDED_BY(mu);
    bool stopping ABSL_GUARDED_BY(mu) = false;
  };

  const std::shared_ptr<Queue> queue_;
  std::vector<std::thread> threads_;
};

}  // namespace verity

#endif  // VERITYD_LIB_BASE_EXECUTOR_H_
