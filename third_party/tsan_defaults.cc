// Linked into every binary under --config=tsan (through //third_party:absl), so
// that a test, a server or a hand-run binary reports the same way without
// TSAN_OPTIONS, and Bazel's test sandbox needs no suppression file at a known
// path. TSAN_OPTIONS, when set, overrides these options, and its suppressions=
// file adds to the list below.

extern "C" const char* __tsan_default_options() {
  // A report fails the test (exit 66) but the run goes on, so one run shows
  // every race.
  return "halt_on_error=0:exitcode=66:second_deadlock_stack=1:history_size=4:"
         "print_suppressions=1";
}

extern "C" const char* __tsan_default_suppressions() {
  // Keep this list short: every line must name a known false positive outside
  // verityd's code.
  return
      // Abseil 20220623 (Debian's, built here with -fsanitize=thread): Mutex
      // hides its internal synchronization from TSan (__tsan_mutex_pre_lock
      // ignores it), so the unlocking thread's Post on the waiter's semaphore,
      // in the waiter's ThreadIdentity that the waiter allocated
      // (LowLevelAlloc's mmap), looks unordered with that allocation. Upstream
      // Abseil later wrapped exactly this call in
      // ABSL_ANNOTATE_IGNORE_READS_AND_WRITES (IncrementSynchSem: "We miss
      // synchronization around passing PerThreadSynch between threads since it
      // happens inside of the Mutex code"); see also google/sanitizers#953.
      // Only reports with a frame in IncrementSynchSem are dropped: no verityd
      // code runs inside it. (A pattern matches anywhere in a frame's name:
      // clang names the inlined frame plain "IncrementSynchSem".)
      "race:IncrementSynchSem\n"
      // grpc++'s own machinery, compiled from its headers into our objects:
      // the call's operation sets, interceptor hooks and callback tags that
      // gRPC's threads hand to each other through libgrpc's lock-free queues,
      // which TSan cannot see. A report with one of these functions in either
      // stack is such a handoff. None of them calls verityd's code (a
      // reactor's callbacks run after FinalizeResult has returned, from
      // lambdas whose names do not end as these patterns do: "$" anchors the
      // end of a function's name, after the first match of the text before
      // it), so no race of verityd's is hidden.
      "race:grpc::internal::CallOpSet\n"
      "race:grpc::internal::CallOpRecvMessage\n"
      "race:grpc::internal::CallOpSendMessage\n"
      "race:grpc::internal::InterceptorBatchMethodsImpl\n"
      "race:CallbackWithSuccessTag::~CallbackWithSuccessTag()$\n"
      // (A unary call's request and response, freed after the call is done.)
      "race:grpc::internal::DefaultMessageHolder\n"
      "race:ServerCallbackUnaryImpl::ServerCallbackUnaryImpl(*std::function<"
      "void ()>)$\n"
      "race:ServerCallbackReaderImpl::ServerCallbackReaderImpl(*std::function<"
      "void ()>)$\n"
      "race:ServerCallbackWriterImpl::ServerCallbackWriterImpl(*std::function<"
      "void ()>)$\n"
      "race:ServerCallbackUnaryImpl::Finish(grpc::Status)$\n"
      "race:ServerCallbackReaderImpl::Finish(grpc::Status)$\n"
      "race:ServerCallbackWriterImpl::Finish(grpc::Status)$\n"
      "race:::SetupReactor(grpc::ServerWriteReactor<grpc::ByteBuffer>*)$\n"
      "race:::SetupReactor(grpc::ServerReadReactor<verity::v1::PutRequest>*)$\n"
      // gRPC's reactor bases: what their Start* and Finish read of the
      // reactor after it handed the operation over (HandToGrpc) comes before
      // the callback in gRPC's order too.
      "race:grpc::ServerWriteReactor<grpc::ByteBuffer>::Finish(grpc::Status)$\n"
      "race:grpc::ServerWriteReactor<grpc::ByteBuffer>::StartWrite(*)$\n"
      "race:grpc::ServerReadReactor<verity::v1::PutRequest>::Finish(grpc::"
      "Status)$\n"
      "race:grpc::ServerReadReactor<verity::v1::PutRequest>::StartRead(*)$\n"
      "race:grpc::ServerUnaryReactor::Finish(grpc::Status)$\n"
      // And a race whose access at either end is in grpc++'s headers: one
      // in verityd's code is reported at that code, its top frame ours.
      "race_top:/usr/include/grpcpp/\n"
      // gRPC's own threads (its timer threads retire themselves and are
      // joined by the next one to run): one that finished and was not yet
      // joined when the process exits is reported as a leak. verityd starts
      // no thread through grpc_core::Thread.
      "thread:grpc_core::Thread::Thread\n"
      // Debian's uninstrumented libraries that libgrpc loads
      // (third_party/BUILD, :grpcpp): what they read and write through the
      // interceptors (memcpy, malloc, recvmsg) is ordered by their own
      // lock-free code, which TSan cannot see, so those calls are ignored, as
      // for any uninstrumented library. Their locks are Abseil's Mutex, bound
      // to the instrumented one, and still seen. A pattern must match one
      // library: each Abseil library is named.
      "called_from_lib:libgrpc.so\n"
      "called_from_lib:libgrpc++.so\n"
      "called_from_lib:libgpr.so\n"
      "called_from_lib:libupb.so\n"
      "called_from_lib:libprotobuf.so\n"
      "called_from_lib:libssl.so.3\n"
      "called_from_lib:libcrypto.so.3\n"
      "called_from_lib:libabsl_bad_optional_access.so\n"
      "called_from_lib:libabsl_bad_variant_access.so\n"
      "called_from_lib:libabsl_base.so\n"
      "called_from_lib:libabsl_city.so\n"
      "called_from_lib:libabsl_cord.so\n"
      "called_from_lib:libabsl_cord_internal.so\n"
      "called_from_lib:libabsl_cordz_functions.so\n"
      "called_from_lib:libabsl_cordz_handle.so\n"
      "called_from_lib:libabsl_cordz_info.so\n"
      "called_from_lib:libabsl_debugging_internal.so\n"
      "called_from_lib:libabsl_demangle_internal.so\n"
      "called_from_lib:libabsl_exponential_biased.so\n"
      "called_from_lib:libabsl_graphcycles_internal.so\n"
      "called_from_lib:libabsl_hash.so\n"
      "called_from_lib:libabsl_int128.so\n"
      "called_from_lib:libabsl_low_level_hash.so\n"
      "called_from_lib:libabsl_malloc_internal.so\n"
      "called_from_lib:libabsl_random_internal_platform.so\n"
      "called_from_lib:libabsl_random_internal_pool_urbg.so\n"
      "called_from_lib:libabsl_random_internal_randen.so\n"
      "called_from_lib:libabsl_random_internal_randen_hwaes.so\n"
      "called_from_lib:libabsl_random_internal_randen_hwaes_impl.so\n"
      "called_from_lib:libabsl_random_internal_randen_slow.so\n"
      "called_from_lib:libabsl_random_internal_seed_material.so\n"
      "called_from_lib:libabsl_random_seed_gen_exception.so\n"
      "called_from_lib:libabsl_raw_hash_set.so\n"
      "called_from_lib:libabsl_raw_logging_internal.so\n"
      "called_from_lib:libabsl_spinlock_wait.so\n"
      "called_from_lib:libabsl_stacktrace.so\n"
      "called_from_lib:libabsl_status.so\n"
      "called_from_lib:libabsl_statusor.so\n"
      "called_from_lib:libabsl_str_format_internal.so\n"
      "called_from_lib:libabsl_strerror.so\n"
      "called_from_lib:libabsl_strings.so\n"
      "called_from_lib:libabsl_strings_internal.so\n"
      "called_from_lib:libabsl_symbolize.so\n"
      "called_from_lib:libabsl_synchronization.so\n"
      "called_from_lib:libabsl_throw_delegate.so\n"
      "called_from_lib:libabsl_time.so\n"
      "called_from_lib:libabsl_time_zone.so\n";
}
