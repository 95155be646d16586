// Implements Executor: one queue under an absl::Mutex, named threads.

#include "lib/base/executor.h"

#include <pthread.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"

namespace verity {

ExecutorOptions CompletionThreadOptions(std::string name) {
  ExecutorOptions options;
  options.threads = 1;
  options.max_queued = SIZE_MAX;
  options.name = std::move(name);
  return options;
}

Executor::Executor(const ExecutorOptions& options) : options_(options) {
  for (int i = 0; i < std::max(1, options_.threads); ++i) {
    threads_.emplace_back([this, i] {
      pthread_setname_np(
          pthread_self(),
          absl::StrCat(options_.name.substr(0, 12), "/", i).c_str());
      Run();
    });
  }
}

Executor::~Executor() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    work_or_stop_.SignalAll();
  }
  for (std::thread& thread : threads_) thread.join();
}

absl::Status Executor::Submit(Task task) {
  absl::MutexLock lock(&mu_);
  if (tasks_.size() >= options_.max_queued) {
    return absl::ResourceExhaustedError(
        absl::StrCat(options_.name, " has ", tasks_.size(),
                     " operations waiting; retry later"));
  }
  tasks_.push_back(std::move(task));
  work_or_stop_.Signal();
  return absl::OkStatus();
}

void Executor::Run() {
  while (true) {
    std::optional<Task> task;
    {
      absl::MutexLock lock(&mu_);
      while (tasks_.empty() && !stopping_) work_or_stop_.Wait(&mu_);
      if (tasks_.empty()) return;  // stopping, and drained
      task.emplace(std::move(tasks_.front()));
      tasks_.pop_front();
    }
    std::move (*task)();
  }
}

}  // namespace verity
