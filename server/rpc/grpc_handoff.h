// gRPC runs a reactor's callbacks on its own threads, after the operation the
// reactor started (StartRead, StartWrite, Finish), ordered by gRPC's own
// lock-free queues. ThreadSanitizer cannot see that order inside Debian's
// uninstrumented libgrpc (third_party/BUILD, :grpcpp); these two calls state
// it, as gRPC's callback API guarantees it, so that TSan checks the reactors'
// own state against every other thread that touches it. Nothing without TSan.

#ifndef VERITYD_SERVER_RPC_GRPC_HANDOFF_H_
#define VERITYD_SERVER_RPC_GRPC_HANDOFF_H_

#include "absl/base/config.h"

#ifdef ABSL_HAVE_THREAD_SANITIZER
#include <sanitizer/tsan_interface.h>
#endif

namespace verity::server {

// Just before `reactor` starts an operation whose callback gRPC will run.
inline void HandToGrpc(const void* reactor) {
#ifdef ABSL_HAVE_THREAD_SANITIZER
  __tsan_release(const_cast<void*>(reactor));
#else
  (void)reactor;
#endif
}

// First thing in each callback gRPC runs on `reactor`.
inline void TakeFromGrpc(const void* reactor) {
#ifdef ABSL_HAVE_THREAD_SANITIZER
  __tsan_acquire(const_cast<void*>(reactor));
#else
  (void)reactor;
#endif
}

// Held through a reactor's OnDone(): gRPC's Server::Wait() returns only after
// every reactor's OnDone() has, which its uninstrumented count of calls keeps;
// this orders what OnDone() did (and the reactor's destruction, when it
// deletes itself within) before AfterServerWait(context).
class OnDoneScope {
 public:
  OnDoneScope(const void* reactor, const void* context) : context_(context) {
    TakeFromGrpc(reactor);
  }
  ~OnDoneScope() { HandToGrpc(context_); }
  OnDoneScope(const OnDoneScope&) = delete;
  OnDoneScope& operator=(const OnDoneScope&) = delete;

 private:
  const void* const context_;
};

// After Server::Wait() has returned, for the server whose reactors were given
// `context`.
inline void AfterServerWait(const void* context) { TakeFromGrpc(context); }

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_GRPC_HANDOFF_H_
