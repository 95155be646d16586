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

Executor::Executor(const ExecutorOptions& options)
    : queue_(std::make_shared<Queue>(options)) {
  for (int i = 0; i < std::max(1, options.threads); ++i) {
    threads_.emplace_back([queue = queue_, i] {
      pthread_setname_np(
          pthread_self(),
          absl::StrCat(queue->options.name.substr(0, 12), "/", i).c_str());
      queue->Run();
    });
  }
}

Executor::~Executor() {
  {
    absl::MutexLock lock(&queue_->mu);
    queue_->stopping = true;
    queue_->work_or_stop.SignalAll();
  }
  for (std::thread& thread : threads_) {
    if (thread.get_id() == std::this_thread::get_id()) {
      thread.detach();
    } else {
      thread.join();
    }
  }
}

absl::Status Executor::Submit(Task task) {
  absl::MutexLock lock(&queue_->mu);
  if (queue_->tasks.size() >= queue_->options.max_queued) {
    return absl::ResourceExhaustedError(
        absl::StrCat(queue_->options.name, " has ", queue_->tasks.size(),
                     " operations waiting; retry later"));
  }
  queue_->tasks.push_back(std::move(task));
  queue_->work_or_stop.Signal();
  return absl::OkStatus();
}

void Executor::Queue::Run() {
  while (true) {
    std::optional<Task> task;
    {
      absl::MutexLock lock(&mu);
      while (tasks.empty() && !stopping) work_or_stop.Wait(&mu);
      if (tasks.empty()) return;  // stopping, and drained
      task.emplace(std::move(tasks.front()));
      tasks.pop_front();
    }
    std::move (*task)();
  }
}

}  // namespace verity
