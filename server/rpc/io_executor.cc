// Implements IoExecutor: one queue under an absl::Mutex, named threads.

#include "server/rpc/io_executor.h"

#include <pthread.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"

namespace verity::server {

IoExecutor::IoExecutor(const IoExecutorOptions& options) : options_(options) {
  for (int i = 0; i < std::max(1, options_.threads); ++i) {
    threads_.emplace_back([this, i] {
      pthread_setname_np(pthread_self(),
                         absl::StrCat(options_.name, "/", i).c_str());
      Run();
    });
  }
}

IoExecutor::~IoExecutor() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    work_or_stop_.SignalAll();
  }
  for (std::thread& thread : threads_) thread.join();
}

absl::Status IoExecutor::Submit(Task task) {
  absl::MutexLock lock(&mu_);
  if (tasks_.size() >= options_.max_queued) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the store has ", tasks_.size(), " operations waiting; retry later"));
  }
  tasks_.push_back(std::move(task));
  work_or_stop_.Signal();
  return absl::OkStatus();
}

void IoExecutor::Run() {
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

}  // namespace verity::server
