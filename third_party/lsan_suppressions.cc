// LeakSanitizer suppressions for leaks inside Debian's libraries, which this
// project cannot fix. Linked into every binary that links gRPC; the runtime
// asks for them only when a binary runs under LeakSanitizer
// (bazel test --config=asan), and otherwise nothing calls this.

extern "C" const char* __lsan_default_suppressions() {
  // c-ares, gRPC's DNS resolver, keeps a 10-byte copy of its resolver
  // configuration from ares_init that gRPC never frees: LeakSanitizer reports
  // it at the exit of any process that resolved a name ("localhost:PORT").
  return "leak:libcares.so\n";
}
