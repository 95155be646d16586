// Implements the thread scheduling helpers on sched(7), setpriority(2) and
// pthread affinity.

#include "server/dispatch/thread_scheduling.h"

#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace verity::server {
namespace {

// How readily a policy gets the CPU, whatever the priority: real-time, then
// the fair policies, then SCHED_IDLE.
int PolicyRank(int policy) {
  if (IsRealtime(policy)) return 2;
  return policy == SCHED_IDLE ? 0 : 1;
}

// The IDLE band's fallback where SCHED_IDLE is refused: the weakest nice.
constexpr int kIdleNice = 19;

void* ProbeIdleBandThread(void* result) {
  const pid_t tid = gettid();
  const ThreadScheduling inherited = CurrentThreadScheduling();
  for (const ThreadScheduling& idle :
       {ThreadScheduling{SCHED_IDLE, 0},
        ThreadScheduling{SCHED_OTHER, kIdleNice}}) {
    if (SetThreadScheduling(tid, idle) && SetThreadScheduling(tid, inherited)) {
      *static_cast<std::optional<ThreadScheduling>*>(result) = idle;
      break;
    }
  }
  return nullptr;
}

}  // namespace

bool IsRealtime(int policy) {
  return policy == SCHED_FIFO || policy == SCHED_RR;
}

std::string PolicyName(int policy) {
  switch (policy) {
    case SCHED_FIFO:
      return "SCHED_FIFO";
    case SCHED_RR:
      return "SCHED_RR";
    case SCHED_OTHER:
      return "SCHED_OTHER";
    case SCHED_BATCH:
      return "SCHED_BATCH";
    case SCHED_IDLE:
      return "SCHED_IDLE";
  }
  return absl::StrCat("SCHED_", policy);
}

bool Weaker(const ThreadScheduling& a, const ThreadScheduling& b) {
  if (PolicyRank(a.policy) != PolicyRank(b.policy)) {
    return PolicyRank(a.policy) < PolicyRank(b.policy);
  }
  return IsRealtime(a.policy) ? a.priority < b.priority
                              : a.priority > b.priority;
}

ThreadScheduling CurrentThreadScheduling() {
  ThreadScheduling result;
  sched_param param = {};
  if (pthread_getschedparam(pthread_self(), &result.policy, &param) != 0) {
    result.policy = SCHED_OTHER;
  }
  if (IsRealtime(result.policy)) {
    result.priority = param.sched_priority;
    return result;
  }
  if (result.policy == SCHED_IDLE) return result;  // nice does not matter
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, gettid());
  result.priority = errno == 0 ? nice : 0;
  return result;
}

bool SetThreadScheduling(pid_t tid, const ThreadScheduling& scheduling) {
  sched_param param = {};
  if (IsRealtime(scheduling.policy)) param.sched_priority = scheduling.priority;
  if (sched_setscheduler(tid, scheduling.policy, &param) != 0) return false;
  if (IsRealtime(scheduling.policy) || scheduling.policy == SCHED_IDLE) {
    return true;
  }
  return setpriority(PRIO_PROCESS, tid, scheduling.priority) == 0;
}

void RaisePriority(int fifo_priority) {
  sched_param param = {};
  param.sched_priority = fifo_priority;
  if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0) return;
  const pid_t tid = gettid();
  for (int nice = -20; nice <= 0; ++nice) {
    if (setpriority(PRIO_PROCESS, tid, nice) == 0) return;
  }
}

std::optional<ThreadScheduling> ProbeIdleBand() {
  std::optional<ThreadScheduling> result;
  pthread_t thread;
  if (pthread_create(&thread, nullptr, &ProbeIdleBandThread, &result) != 0) {
    return std::nullopt;
  }
  pthread_join(thread, nullptr);
  return result;
}

std::string DescribePolicy(absl::string_view policy, int priority) {
  if (policy == "SCHED_IDLE") return std::string(policy);
  const bool realtime = policy == "SCHED_FIFO" || policy == "SCHED_RR";
  return absl::StrCat(policy, realtime ? " priority " : " nice ", priority);
}

bool PinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

absl::StatusOr<std::vector<int>> AffinityCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {
    return absl::ErrnoToStatus(errno, "sched_getaffinity");
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

int CurrentCpu() {
  const int cpu = sched_getcpu();
  return cpu < 0 ? 0 : cpu;
}

}  // namespace verity::server
