// verityd: serves blobs with fs-verity Merkle trees over gRPC, verifying every
// block it reads from its store before sending it. Every flag can also be set
// as VERITYD_<FLAG> (flags win).

#include <grpc/grpc.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "lib/base/retained_memory.h"
#include "lib/base/status_macros.h"
#include "lib/base/stop_signals.h"
#include "lib/tree/read_plan.h"
#include "server/dispatch/dispatch_policy.h"
#include "server/env_flags.h"
#include "server/log.h"
#include "server/s3_settings.h"
#include "server/server_options.h"
#include "server/store_location.h"
#include "server/verityd.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051",
          "host:port to serve gRPC on; port 0 picks a free one (logged)");
ABSL_FLAG(std::string, store, "",
          "where the blobs live: a directory, file://DIR, or "
          "s3://BUCKET/PREFIX (default: --store_dir)");
ABSL_FLAG(std::string, store_dir, "./verityd-data",
          "the blob store directory; --store=DIR says the same");
ABSL_FLAG(std::string, s3_endpoint, "",
          "with --store=s3://...: the S3 endpoint, https://HOST[:PORT] "
          "(default: AWS, https://s3.REGION.amazonaws.com)");
ABSL_FLAG(std::string, s3_region, "",
          "with --store=s3://...: the region requests are signed for "
          "(default: $AWS_REGION, else $AWS_DEFAULT_REGION, else us-east-1)");
ABSL_FLAG(std::string, s3_addressing, "auto",
          "with --store=s3://...: path (ENDPOINT/BUCKET/KEY), virtual "
          "(BUCKET.HOST/KEY) or auto (virtual for AWS, path otherwise)");
ABSL_FLAG(std::string, s3_ca, "",
          "with --store=s3://...: a PEM CA bundle for TLS to the endpoint "
          "(default: the system's)");
ABSL_FLAG(std::string, cache_dir, "",
          "with --store=s3://...: a local directory for the disk cache of "
          "blob bytes (emptied at start-up; default: no disk cache)");
ABSL_FLAG(uint64_t, cache_bytes, uint64_t{10} << 30,
          "with --cache_dir: the most bytes the disk cache keeps");
ABSL_FLAG(uint64_t, memory_cache_bytes, uint64_t{64} << 20,
          "with --store=s3://...: the most blob bytes kept in memory");
ABSL_FLAG(uint64_t, cache_slab_bytes, uint64_t{4} << 20,
          "with --store=s3://...: the unit blob bytes are fetched (one ranged "
          "GET) and cached in");
ABSL_FLAG(uint64_t, read_ahead_bytes, uint64_t{16} << 20,
          "with --store=s3://...: how far past the chunk being verified a "
          "Read stream's bytes are fetched; 0 turns read-ahead off");
ABSL_FLAG(absl::Duration, store_probe_interval, absl::Seconds(5),
          "with --store=s3://...: how often the bucket is probed; while it "
          "does not answer, health reports NOT_SERVING");
ABSL_FLAG(std::string, import_dir, "",
          "put every regular file under this directory at start-up, named by "
          "its relative path; NOT_SERVING until done");
ABSL_FLAG(uint64_t, max_blob_bytes, uint64_t{4} << 30,
          "largest blob a Put may store (RESOURCE_EXHAUSTED above)");
ABSL_FLAG(int, fec_roots, 2,
          "Reed-Solomon roots of the FEC area (dm-verity's) each Put writes, "
          "2 to 24, or 0 for none: a read repairs up to this many bad blocks "
          "per RS group; costs roots/(255-roots) of a blob's size in the "
          "store. Blobs stored with an FEC area are repaired from it whatever "
          "this flag says. S3: an area over 64 MiB is not written (logged), "
          "and a repaired block is served from memory and the blob marked "
          "damaged/ in the bucket until a Put of it replaces its objects");
ABSL_FLAG(int, name_history, 5,
          "versions each name keeps, 1 to 100: what it points at and those "
          "before, newest first (`verity history NAME`); a blob any of them "
          "reaches is kept (rm refuses it without --force)");
ABSL_FLAG(absl::Duration, gc_interval, absl::ZeroDuration(),
          "run a garbage collection this often (e.g. 6h; 0: only when an "
          "admin asks, `verity gc`); replicas sharing a store take turns");
ABSL_FLAG(absl::Duration, gc_grace, absl::Hours(1),
          "garbage collection keeps an unreachable blob used within this "
          "long (stored, found by FindMissing or a Put, named): a `put DIR` "
          "must finish within half of it; the same on every replica");
ABSL_FLAG(uint64_t, max_store_bytes, 0,
          "the most data bytes the store holds: a Put that would pass it is "
          "refused (RESOURCE_EXHAUSTED, \"the store is full\") and stores "
          "nothing (0: no quota; `verity du` shows the use)");
ABSL_FLAG(absl::Duration, scrub_interval, absl::ZeroDuration(),
          "scrub the whole store this often (e.g. 168h: every blob's data, "
          "tree and FEC area read and checked at IDLE priority, repaired "
          "from FEC or reported; 0: only when an admin asks, `verity "
          "scrub`); replicas sharing a store take turns");
ABSL_FLAG(uint64_t, scrub_bytes_per_second, uint64_t{64} << 20,
          "the most a scrub reads from the store per second (0: no limit)");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain: enables TLS");
ABSL_FLAG(std::string, tls_key, "", "PEM private key for --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA bundle: require client certificates it signed (mTLS)");
ABSL_FLAG(bool, allow_insecure, false,
          "allow plaintext on a non-loopback --listen address");
ABSL_FLAG(bool, verify_on_read, true,
          "verify every block read from the store before sending it; false is "
          "for benchmarks and diagnostics only");
ABSL_FLAG(bool, verify_once, false,
          "remember verified data blocks (one bit each) and do not hash them "
          "again, like dm-verity's check_at_most_once: for stores trusted "
          "after the first read");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9464",
          "host:port serving Prometheus metrics at /metrics; port 0 picks a "
          "free one (logged); empty disables it");
ABSL_FLAG(std::string, dispatch, "adaptive",
          "where reads are verified: adaptive (inline on the completion "
          "thread when small, urgent and cheap, else the CPU-pinned "
          "high-priority pool); inline, pool or pool_unbound force one path, "
          "for experiments");
ABSL_FLAG(std::string, inline_limit_bytes, "",
          "fix the inline limits of the priority classes named, e.g. "
          "rt=16384,be=8192,idle=0 (any subset; none=N too); the others are "
          "calibrated at start-up and tuned online");
ABSL_FLAG(std::string, on_corruption, "error",
          "error: fail the read with DATA_LOSS; quarantine: also stop serving "
          "the blob until it is put again");
ABSL_FLAG(int, max_streams, 256,
          "concurrent Read and Put streams; more get RESOURCE_EXHAUSTED");
ABSL_FLAG(int, max_streams_per_connection, 100,
          "concurrent streams on one client connection (HTTP/2 "
          "SETTINGS_MAX_CONCURRENT_STREAMS): more wait for one to end");
ABSL_FLAG(int, max_message_bytes, 8 << 20,
          "largest message accepted or sent, at least 3 MiB (Put chunks "
          "must be smaller; Read messages stay below 2 MiB plus tree blocks)");
ABSL_FLAG(int, max_puts, 32,
          "concurrent Put streams, counted in --max_streams too; more get "
          "RESOURCE_EXHAUSTED");
ABSL_FLAG(std::string, auth_tokens, "",
          "file of `ROLE TOKEN` lines (roles read < write < admin, # "
          "comments): calls must then send `authorization: Bearer TOKEN` (over "
          "TLS, or from loopback) or a client certificate named in "
          "--auth_identities; reloaded on SIGHUP");
ABSL_FLAG(std::string, auth_identities, "",
          "file of `ROLE IDENTITY` lines: a client certificate's subject "
          "alternative name or common name gets that role (with "
          "--tls_client_ca); reloaded on SIGHUP");
ABSL_FLAG(std::string, name_keys, "",
          "PEM file of Ed25519 public keys (as `openssl pkey -pubout` writes "
          "them) allowed to sign names: every Put with a name and every "
          "SetName then needs a statement signed by one of them, for that "
          "name and blob, of a higher version than the name's current one");
ABSL_FLAG(std::string, log_key, "",
          "PEM file of the Ed25519 private key (`verity keygen` makes one) "
          "that signs the transparency log's checkpoints: every name "
          "statement the server accepts is appended to the log before its "
          "name is written, and Stat by name answers with its proof; every "
          "replica of a store runs with the same key and --log_origin");
ABSL_FLAG(std::string, log_origin, "",
          "the transparency log's name (its checkpoints' origin, and the "
          "key's name in clients' --log-key), e.g. example.com/verityd; "
          "required with --log_key");
ABSL_FLAG(absl::Duration, checkpoint_interval, absl::Seconds(1),
          "at most one log checkpoint per this long: statements accepted "
          "meanwhile share the next one, and their Put or SetName answers "
          "once it is written");
ABSL_FLAG(std::string, witnesses, "",
          "file of the transparency-log witnesses asked to cosign each "
          "checkpoint before it is published (C2SP tlog-witness), one per "
          "line: \"<verifier key> <URL>\" (`verity witness`; its key from "
          "`verity keygen --witness-name`); needs --log_key");
ABSL_FLAG(absl::Duration, witness_timeout, absl::Seconds(5),
          "how long a checkpoint waits for each witness: one that does not "
          "answer in time is left out of it");
ABSL_FLAG(double, max_call_rate, 50000,
          "calls (new streams and unary calls) each client connection may "
          "start per second, a second's worth at once; more get "
          "RESOURCE_EXHAUSTED (a backstop against a runaway client, well "
          "above what one connection sustains); 0 for no limit");
ABSL_FLAG(absl::Duration, stream_idle_timeout, absl::Seconds(60),
          "cancel a Read stream whose client leaves a message untaken, or a "
          "Put whose client sends nothing, for this long; 0 never does");
ABSL_FLAG(uint64_t, max_have_tree_blocks, verity::kMaxHaveTreeBlocks,
          "entries a Read request may list in have_tree_blocks; more is "
          "INVALID_ARGUMENT");
ABSL_FLAG(uint64_t, read_window_bytes, uint64_t{32} << 20,
          "what Read streams' messages may grow by, all streams together: "
          "each stream's chunks double from 256 KiB up to 2 MiB while its "
          "client keeps up; 0 keeps them at 256 KiB");
ABSL_FLAG(absl::Duration, grace_period, absl::Seconds(10),
          "on SIGTERM/SIGINT, how long in-flight calls may finish");

namespace verity::server {
namespace {

constexpr char kEnvPrefix[] = "VERITYD_";

bool IsOwnFlagFile(absl::string_view path) {
  return absl::EndsWith(path, "server/main.cc");
}

// The flags this file defines, which are the ones the environment may set.
std::vector<std::string> OwnFlags() {
  std::vector<std::string> names;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (IsOwnFlagFile(flag->Filename())) names.emplace_back(name);
  }
  return names;
}

// --store, else --store_dir; giving both is a mistake the user should hear of.
absl::StatusOr<StoreLocation> StoreLocationFromFlags() {
  const std::string store = absl::GetFlag(FLAGS_store);
  const std::string store_dir = absl::GetFlag(FLAGS_store_dir);
  if (store.empty()) return ParseStoreLocation(store_dir);
  if (store_dir != "./verityd-data") {
    return absl::InvalidArgumentError(
        "give --store or --store_dir, not both (--store_dir=DIR is "
        "--store=DIR)");
  }
  return ParseStoreLocation(store);
}

// INVALID_ARGUMENT unless the flags that bound something are in range.
absl::Status CheckBounds(const ServerOptions& options) {
  const struct {
    const char* flag;
    int64_t value;
  } counts[] = {
      {"--max_streams", options.service.max_streams},
      {"--max_puts", options.service.max_puts},
      {"--max_streams_per_connection", options.max_streams_per_connection},
      {"--max_message_bytes", options.max_message_bytes},
  };
  for (const auto& count : counts) {
    if (count.value < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(count.flag, " must be at least 1, not ", count.value));
    }
  }
  // A Read message holds a chunk of blocks (at most max_read_chunk_bytes),
  // the tree blocks that prove them (under 512 KiB at any block size) and
  // the first message's head.
  const int64_t read_message =
      int64_t{options.service.max_read_chunk_bytes} + (1 << 20);
  if (options.max_message_bytes < read_message) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_message_bytes must be at least ", read_message,
                     " (a Read message's blocks and their tree blocks), not ",
                     options.max_message_bytes));
  }
  if (options.service.max_call_rate < 0) {
    return absl::InvalidArgumentError("--max_call_rate must not be negative");
  }
  if (options.service.stream_idle_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "--stream_idle_timeout must not be negative");
  }
  return absl::OkStatus();
}

absl::StatusOr<ServerOptions> OptionsFromFlags() {
  ServerOptions options;
  options.listen = absl::GetFlag(FLAGS_listen);
  absl::StatusOr<StoreLocation> store = StoreLocationFromFlags();
  if (!store.ok()) return store.status();
  options.store_kind = store->kind;
  options.store.root = store->dir;
  options.store.max_blob_bytes = absl::GetFlag(FLAGS_max_blob_bytes);
  options.store.fec_roots = absl::GetFlag(FLAGS_fec_roots);
  options.store.name_history = absl::GetFlag(FLAGS_name_history);
  options.gc_interval = absl::GetFlag(FLAGS_gc_interval);
  options.service.gc_grace = absl::GetFlag(FLAGS_gc_grace);
  options.scrub_interval = absl::GetFlag(FLAGS_scrub_interval);
  options.max_store_bytes = absl::GetFlag(FLAGS_max_store_bytes);
  options.scrub_bytes_per_second = absl::GetFlag(FLAGS_scrub_bytes_per_second);
  if (store->kind == StoreLocation::Kind::kS3) {
    S3Settings s3;
    s3.bucket = store->bucket;
    s3.endpoint = absl::GetFlag(FLAGS_s3_endpoint);
    s3.region = absl::GetFlag(FLAGS_s3_region);
    s3.addressing = absl::GetFlag(FLAGS_s3_addressing);
    s3.ca_file = absl::GetFlag(FLAGS_s3_ca);
    absl::StatusOr<S3ClientOptions> client = ResolveS3Client(s3, ProcessEnv);
    if (!client.ok()) return client.status();
    options.s3.client = *std::move(client);
    options.s3.prefix = store->prefix;
    options.s3.max_blob_bytes = options.store.max_blob_bytes;
    options.s3.fec_roots = options.store.fec_roots;
    options.s3.name_history = options.store.name_history;
    options.remote_cache.disk.dir = absl::GetFlag(FLAGS_cache_dir);
    options.remote_cache.disk.max_bytes = absl::GetFlag(FLAGS_cache_bytes);
    options.remote_cache.slabs.memory_bytes =
        absl::GetFlag(FLAGS_memory_cache_bytes);
    options.remote_cache.slabs.slab_bytes =
        absl::GetFlag(FLAGS_cache_slab_bytes);
    options.read_ahead_bytes = absl::GetFlag(FLAGS_read_ahead_bytes);
    options.store_probe_interval = absl::GetFlag(FLAGS_store_probe_interval);
  }
  options.import_dir = absl::GetFlag(FLAGS_import_dir);
  options.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key = absl::GetFlag(FLAGS_tls_key);
  options.tls_client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  options.allow_insecure = absl::GetFlag(FLAGS_allow_insecure);
  options.verify_on_read = absl::GetFlag(FLAGS_verify_on_read);
  options.service.verify_once = absl::GetFlag(FLAGS_verify_once);
  options.service.max_streams = absl::GetFlag(FLAGS_max_streams);
  options.service.max_puts = absl::GetFlag(FLAGS_max_puts);
  options.max_streams_per_connection =
      absl::GetFlag(FLAGS_max_streams_per_connection);
  options.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.service.stream_idle_timeout =
      absl::GetFlag(FLAGS_stream_idle_timeout);
  options.service.max_call_rate = absl::GetFlag(FLAGS_max_call_rate);
  options.auth.tokens_file = absl::GetFlag(FLAGS_auth_tokens);
  options.auth.identities_file = absl::GetFlag(FLAGS_auth_identities);
  options.name_keys_file = absl::GetFlag(FLAGS_name_keys);
  options.log_key_file = absl::GetFlag(FLAGS_log_key);
  options.log_origin = absl::GetFlag(FLAGS_log_origin);
  options.checkpoint_interval = absl::GetFlag(FLAGS_checkpoint_interval);
  options.witnesses_file = absl::GetFlag(FLAGS_witnesses);
  options.witness_timeout = absl::GetFlag(FLAGS_witness_timeout);
  options.service.max_have_tree_blocks =
      absl::GetFlag(FLAGS_max_have_tree_blocks);
  options.service.read_window_bytes = absl::GetFlag(FLAGS_read_window_bytes);
  options.grace_period = absl::GetFlag(FLAGS_grace_period);
  absl::StatusOr<DispatchMode> dispatch =
      ParseDispatchMode(absl::GetFlag(FLAGS_dispatch));
  if (!dispatch.ok()) return dispatch.status();
  options.dispatch = *dispatch;
  options.inline_limit_bytes = absl::GetFlag(FLAGS_inline_limit_bytes);
  options.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  const std::string on_corruption = absl::GetFlag(FLAGS_on_corruption);
  if (on_corruption == "quarantine") {
    options.service.on_corruption = OnCorruption::kQuarantine;
  } else if (on_corruption != "error") {
    return absl::InvalidArgumentError(
        absl::StrCat("--on_corruption must be error or quarantine, not '",
                     on_corruption, "'"));
  }
  RETURN_IF_ERROR(CheckBounds(options));
  return options;
}

// Where the blobs are, for the log: never a credential.
std::string StoreDescription(const ServerOptions& options) {
  if (options.store_kind == StoreLocation::Kind::kFile) {
    return options.store.root;
  }
  const std::string& cache = options.remote_cache.disk.dir;
  return absl::StrCat("s3://", options.s3.client.bucket, "/", options.s3.prefix,
                      " at ", options.s3.client.endpoint, ", disk cache ",
                      cache.empty() ? "none" : cache);
}

// Waits for SIGTERM or SIGINT, reloading the auth files on each SIGHUP.
int WaitForShutdownSignal(const sigset_t& signals, Verityd& server) {
  for (;;) {
    int signal = 0;
    sigwait(&signals, &signal);
    if (signal != SIGHUP) return signal;
    const absl::Status reloaded = server.ReloadAuth();
    Log(reloaded.ok()
            ? absl::StrCat("SIGHUP: auth reloaded: ", server.AuthSummary())
            : absl::StrCat("SIGHUP: auth not reloaded, the old "
                           "grants stay: ",
                           reloaded.message()));
  }
}

// Shuts `server` down with `grace` for in-flight calls; false if that has not
// finished a moment after the grace period.
bool ShutdownWithin(Verityd* server, absl::Duration grace) {
  auto stopped = std::make_shared<absl::Notification>();
  std::thread([server, grace, stopped] {
    server->Shutdown(grace);
    stopped->Notify();
  }).detach();
  return stopped->WaitForNotificationWithTimeout(grace + absl::Seconds(1));
}

int Run(int argc, char** argv) {
  // Debian builds Abseil without NDEBUG, which leaves absl::Mutex's deadlock
  // detection on: every lock and unlock then updates one process-wide lock
  // graph under one global spinlock. The tests keep it (it finds lock-order
  // inversions); the server turns it off.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // A reference to the gRPC library for the whole process. Without it the
  // grpc::Server's destructor releases the last one and shuts gRPC down
  // synchronously, joining gRPC's executor threads; one of them can be asleep
  // in epoll until its next timer, which made a SIGTERM with nothing in flight
  // take the whole grace period. The process exits right after instead.
  grpc_init();
  // gRPC's freed receive buffers reused rather than returned to the kernel
  // and faulted in again (docs/tuning.md).
  RetainFreedMemory(size_t{32} << 20);
  std::vector<std::string> args =
      ArgvWithEnvironment(argc, argv, kEnvPrefix, OwnFlags());
  std::vector<char*> arg_ptrs;
  for (std::string& arg : args) arg_ptrs.push_back(arg.data());
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = IsOwnFlagFile;  // --help lists this file's flags
  absl::SetFlagsUsageConfig(usage);
  absl::SetProgramUsageMessage(
      "verityd [flags]: serves fs-verity-verified blobs over gRPC. Each flag "
      "can "
      "also be set as VERITYD_<FLAG>; flags win.");
  absl::ParseCommandLine(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  absl::StatusOr<ServerOptions> options = OptionsFromFlags();
  if (!options.ok()) {
    Log(options.status().message());
    return 2;
  }
  // What Run() waits for (SIGTERM and SIGINT shut down, SIGHUP reloads the
  // auth files), blocked in every thread so that only its sigwait() gets them.
  const sigset_t signals = BlockStopSignals();
  if (!options->verify_on_read) {
    Log("WARNING: --verify_on_read=false: blocks are sent WITHOUT "
        "verification. "
        "For benchmarks and diagnostics only.");
  }
  absl::StatusOr<std::unique_ptr<Verityd>> server = Verityd::Start(*options);
  if (!server.ok()) {
    Log(absl::StrCat("can't start: ", server.status().ToString()));
    return 1;
  }
  Log(absl::StrCat("listening on ", (*server)->address(), " (store ",
                   StoreDescription(*options), ")"));
  if ((*server)->metrics_port() != 0) {
    const std::string& listen = options->metrics_listen;
    Log(absl::StrCat("metrics on http://", listen.substr(0, listen.rfind(':')),
                     ":", (*server)->metrics_port(), "/metrics"));
  }
  const int signal = WaitForShutdownSignal(signals, **server);
  Log(absl::StrCat("received ", strsignal(signal), "; shutting down within ",
                   absl::FormatDuration(options->grace_period)));
  if (!ShutdownWithin(server->get(), options->grace_period)) {
    // A client that stopped reading keeps its last write pending, and gRPC
    // waits for it however long that takes. Everything acknowledged is already
    // durable, and the next start cleans up staging, so leaving now loses
    // nothing.
    Log("in-flight calls did not end within the grace period; exiting anyway");
    _exit(0);
  }
  for (const std::string& line : (*server)->StatsSummary()) {
    Log(line);
  }
  Log("stopped");
  return 0;
}

}  // namespace
}  // namespace verity::server

int main(int argc, char** argv) { return verity::server::Run(argc, argv); }
