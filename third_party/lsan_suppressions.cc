// LeakSanitizer suppressions for leaks inside Debian's libraries, which this
// project cannot fix. Linked into every binary that links gRPC; the runtime
// asks for them only when a binary runs under LeakSanitizer
// (bazel test --config=asan), and otherwise nothing calls this.

extern "C" const char* __lsan_default_suppressions() {
  // c-ares, gRPC's DNS resolver, keeps a 10-byte copy of its resolver
  // configuration from ares_init that gRPC never frees: LeakSanitizer reports
  // it at the exit of any process that resolved a name ("localhost:PORT").
  //
  // OpenSSL 3 (libcrypto.so.3, gRPC's TLS through Debian's libssl): a client
  // that exits while gRPC's TLS handshake with an untrusted server is still
  // being torn down leaves that handshake's OpenSSL objects (certificate
  // stacks, strings) allocated; seen once in four cold CI runs, in
  // cli_e2e_test's "TLS client trusting another CA". Every reported stack
  // ended in libcrypto (it has no frame pointers to unwind past). The price:
  // a leak of OpenSSL 3 objects in this project's one caller of it,
  // lib/trust/openssl3_pkcs7 (which frees them by RAII), is hidden too.
  return "leak:libcares.so\n"
         "leak:libcrypto.so.3\n";
}
