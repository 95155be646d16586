// A few threads for the blocking work of Put and Delete (writing, hashing,
// fsync, rename), so that gRPC's callback threads, which verify RT reads
// inline, never wait on a disk.

#ifndef VERITYD_SERVER_RPC_IO_EXECUTOR_H_
#define VERITYD_SERVER_RPC_IO_EXECUTOR_H_

#include <cstddef>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "server/store/executor.h"

namespace verity::server {

struct IoExecutorOptions {
  // Threads that run tasks. Two keep one slow fsync from holding up every
  // other Put and Delete without letting many fsyncs compete for the disk.
  int threads = 2;
  // Tasks waiting for a thread; Submit() refuses more. Every task belongs to
  // a call in flight, so max_streams and gRPC bound this in practice too.
  size_t max_queued = 1024;
  // The threads' names, followed by "/<index>" (at most 15 bytes in all).
  std::string name = "store-io";
};

// Thread-safe. Tasks run in submission order, `threads` at a time.
class IoExecutor final : public Executor {
 public:
  explicit IoExecutor(const IoExecutorOptions& options = {});
  IoExecutor(const IoExecutor&) = delete;
  IoExecutor& operator=(const IoExecutor&) = delete;
  // Runs what is queued, then joins the threads. Must not run on one of them.
  ~IoExecutor() override;

  // Queues `task`; RESOURCE_EXHAUSTED, with `task` dropped unrun, if
  // max_queued tasks are waiting already.
  absl::Status Submit(Task task) override ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Run() ABSL_LOCKS_EXCLUDED(mu_);

  const IoExecutorOptions options_;
  absl::Mutex mu_;
  absl::CondVar work_or_stop_;
  std::deque<Task> tasks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_IO_EXECUTOR_H_
