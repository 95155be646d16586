// Everything verityd is configured with. main.cc fills it from flags and
// VERITYD_* variables; tests fill it directly.

#ifndef VERITYD_SERVER_SERVER_OPTIONS_H_
#define VERITYD_SERVER_SERVER_OPTIONS_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "server/auth/authorizer.h"
#include "server/dispatch/dispatch_policy.h"
#include "server/dispatch/inline_budget.h"
#include "server/rpc/service_context.h"
#include "server/store/cache/caching_store.h"
#include "server/store/file/file_store.h"
#include "server/store/s3/s3_store.h"
#include "server/store/served_blobs.h"
#include "server/store_location.h"

namespace verity::server {

struct ServerOptions {
  // host:port; port 0 picks a free port (Verityd::port() tells which).
  std::string listen = "127.0.0.1:50051";
  // Where the blobs live: a FileStore (`store`: root, max_blob_bytes, ...) or
  // an S3Store (`s3`: bucket, prefix, endpoint, credentials, ...).
  StoreLocation::Kind store_kind = StoreLocation::Kind::kFile;
  FileStoreOptions store;
  S3StoreOptions s3;
  // In front of a remote store (S3): its blobs' bytes cached in memory and,
  // with a directory, on a local disk (see CachingStore), and fetched
  // read_ahead_bytes ahead of each Read stream.
  CachingStoreOptions remote_cache;
  uint64_t read_ahead_bytes = uint64_t{16} << 20;
  // How often a remote store is probed (Store::CheckHealth) for health.
  absl::Duration store_probe_interval = absl::Seconds(5);
  // If set, every regular file under it is put at start-up, named by its
  // relative path; the server reports NOT_SERVING until that is done.
  std::string import_dir;
  // PEM files. Both cert and key enable TLS; a client CA also requires client
  // certificates.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  // Plaintext is refused on a non-loopback address unless this is set.
  bool allow_insecure = false;
  // Who may call what; without files, everyone everything.
  AuthOptions auth;
  // A PEM file of Ed25519 public keys ("PUBLIC KEY" blocks, as `openssl pkey
  // -pubout` writes them) allowed to sign names: every name write then needs
  // a statement one of them signed (NamePolicy). Empty: names need none.
  std::string name_keys_file;
  // The transparency log of name statements: a PEM file of the Ed25519
  // private key that signs its checkpoints (`verity keygen` makes one).
  // Empty: no log. Every replica of a store runs with the same key and
  // origin, which the key needs.
  std::string log_key_file;
  std::string log_origin;
  // At most one checkpoint per this long: statements accepted meanwhile share
  // it (and their calls wait for it).
  absl::Duration checkpoint_interval = absl::Seconds(1);
  // A file of the witnesses asked to cosign each checkpoint ("<verifier key>
  // <URL>" lines, server/log/witness_client.h), each given witness_timeout.
  // Empty: none.
  std::string witnesses_file;
  absl::Duration witness_timeout = absl::Seconds(5);
  ServiceOptions service;
  // Garbage collection every this long (zero: only when an admin asks, the
  // Collect RPC), with service.gc_grace.
  absl::Duration gc_interval = absl::ZeroDuration();
  // A scrub pass over the whole store every this long (zero: only when an
  // admin asks, the Scrub RPC), reading at most scrub_bytes_per_second (0:
  // no limit) at the IDLE priority.
  absl::Duration scrub_interval = absl::ZeroDuration();
  // The most data bytes the store holds (QuotaStore); 0: no quota.
  uint64_t max_store_bytes = 0;
  uint64_t scrub_bytes_per_second = uint64_t{64} << 20;
  // Verify every block read from the store before sending it. Off only for
  // benchmarks and diagnostics: clients still verify, but the server would
  // send corrupt data.
  bool verify_on_read = true;
  VerifiedBlobCacheOptions cache;
  // host:port serving Prometheus metrics at /metrics; port 0 picks one
  // (Verityd::metrics_port()); empty: none.
  std::string metrics_listen;
  // Where reads are verified: see Dispatcher.
  DispatchMode dispatch = DispatchMode::kAdaptive;
  // "rt=N,be=N,idle=N" (any subset): overrides the inline limits calibrated
  // at start-up.
  std::string inline_limit_bytes;
  // How long each gRPC thread may verify inline per window (see
  // InlineBudget); past it, reads go to the pool.
  InlineBudgetOptions inline_budget;
  // Largest message accepted or sent. Read responses stay well below it; Put
  // chunks from a client must too.
  int max_message_bytes = 8 << 20;
  // Concurrent streams per client connection (HTTP/2
  // SETTINGS_MAX_CONCURRENT_STREAMS).
  int max_streams_per_connection = 100;
  // How long in-flight calls may run after shutdown begins before they are
  // cancelled.
  absl::Duration grace_period = absl::Seconds(10);
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_SERVER_OPTIONS_H_
