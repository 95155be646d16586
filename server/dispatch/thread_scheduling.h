// Linux CPU scheduling of this process's threads: the policy and priority a
// thread runs at, changing them, and pinning to a CPU. The verification pool's
// workers use these to follow the class of the work they run.

#ifndef VERITYD_SERVER_DISPATCH_THREAD_SCHEDULING_H_
#define VERITYD_SERVER_DISPATCH_THREAD_SCHEDULING_H_

#include <sched.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace verity::server {

// A thread's CPU scheduling. Plain value.
struct ThreadScheduling {
  int policy = SCHED_OTHER;
  int priority = 0;  // the real-time priority, the nice value, 0 for IDLE

  friend bool operator==(const ThreadScheduling& a, const ThreadScheduling& b) {
    return a.policy == b.policy && a.priority == b.priority;
  }
  friend bool operator!=(const ThreadScheduling& a, const ThreadScheduling& b) {
    return !(a == b);
  }
};

bool IsRealtime(int policy);

// "SCHED_FIFO", "SCHED_OTHER", ...; "SCHED_<n>" for an unknown policy.
std::string PolicyName(int policy);

// "SCHED_FIFO priority 1", "SCHED_OTHER nice 0", "SCHED_IDLE".
std::string DescribePolicy(absl::string_view policy, int priority);

// True if a thread scheduled as `a` gets the CPU less readily than `b`:
// real-time before the fair policies before SCHED_IDLE, then by priority.
bool Weaker(const ThreadScheduling& a, const ThreadScheduling& b);

// The calling thread's scheduling.
ThreadScheduling CurrentThreadScheduling();

// Moves thread `tid` of this process to `scheduling`; false if refused,
// possibly half done (policy set, nice not).
bool SetThreadScheduling(pid_t tid, const ThreadScheduling& scheduling);

// Raises the calling thread: SCHED_FIFO at `fifo_priority` if permitted
// (CAP_SYS_NICE or RLIMIT_RTPRIO), else the lowest nice value RLIMIT_NICE
// allows; without either the thread stays as it was.
void RaisePriority(int fifo_priority);

// The lowest band a thread can go to and come back from: SCHED_IDLE, else
// nice 19; nullopt if neither round trip is permitted. Coming back needs
// CAP_SYS_NICE or an RLIMIT_NICE of at least 20 - nice, so unprivileged it is
// usually a one-way trip, and a worker stuck there would run urgent work at
// it. A throwaway thread, scheduled as the caller, tries the round trip.
std::optional<ThreadScheduling> ProbeIdleBand();

// Pins the calling thread to `cpu`; false if refused.
bool PinToCpu(int cpu);

// The CPUs of the calling thread's affinity mask, which new threads inherit
// (what a container's cpuset allows). Machines with more than CPU_SETSIZE
// (1024) CPUs fail with EINVAL.
absl::StatusOr<std::vector<int>> AffinityCpus();

// The CPU the calling thread is running on: sched_getcpu(), or 0 if that
// fails.
int CurrentCpu();

}  // namespace verity::server

#endif  // VERITYD_SERVER_DISPATCH_THREAD_SCHEDULING_H_
