// The one thing a store asks of a thread pool: take a task to run later. The
// RPC layer's IoExecutor is one; a store names one where its Puts should run
// (PutWriter::executor) without depending on the RPC layer.

#ifndef VERITYD_SERVER_STORE_EXECUTOR_H_
#define VERITYD_SERVER_STORE_EXECUTOR_H_

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"

namespace verity::server {

// Runs tasks on threads of its own. Thread-safe.
class Executor {
 public:
  using Task = absl::AnyInvocable<void() &&>;

  virtual ~Executor() = default;

  // Queues `task` to run later, on one of the executor's threads; an error,
  // with `task` dropped unrun, if it cannot take more.
  virtual absl::Status Submit(Task task) = 0;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_EXECUTOR_H_
