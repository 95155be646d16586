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
      "race:IncrementSynchSem\n";
}
