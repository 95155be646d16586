// Implements Verityd.

#include "server/verityd.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/buffer_pool.h"
#include "lib/base/file_util.h"
#include "lib/base/loopback_address.h"
#include "lib/base/metrics_exposer.h"
#include "lib/base/status_macros.h"
#include "lib/trust/ed25519_key.h"
#include "lib/trust/name_statement.h"
#include "server/dispatch/calibration.h"
#include "server/log.h"
#include "server/metrics/process_metrics.h"
#include "server/rpc/grpc_handoff.h"
#include "server/scrape_metrics.h"
#include "server/store/cache/caching_store.h"
#include "server/store/file/file_store.h"
#include "server/store/importer.h"
#include "server/store/s3/s3_store.h"
#include "server/unacked_bytes.h"

namespace verity::server {
namespace {

// PEM files are small; this stops a wrong path from reading a disk.
constexpr size_t kMaxPemBytes = size_t{1} << 20;

absl::StatusOr<std::string> ReadPem(const std::string& path) {
  absl::StatusOr<std::string> pem = ReadSmallFile(path, kMaxPemBytes);
  if (!pem.ok() || pem->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("can't read PEM file '", path, "'"));
  }
  return pem;
}

absl::StatusOr<std::vector<WitnessConfig>> ReadWitnesses(
    const std::string& path) {
  ASSIGN_OR_RETURN(const std::string text, ReadSmallFile(path, 1 << 20));
  return ParseWitnesses(text);
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> Credentials(
    const ServerOptions& options) {
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together");
  }
  if (options.tls_cert.empty()) {
    if (!options.tls_client_ca.empty()) {
      return absl::InvalidArgumentError(
          "--tls_client_ca needs --tls_cert and --tls_key");
    }
    if (!options.allow_insecure && !IsLoopbackAddress(options.listen)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "refusing plaintext on non-loopback address ", options.listen,
          ": give --tls_cert and --tls_key, or --allow_insecure"));
    }
    return grpc::InsecureServerCredentials();
  }
  grpc::SslServerCredentialsOptions ssl;
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  ASSIGN_OR_RETURN(pair.private_key, ReadPem(options.tls_key));
  ASSIGN_OR_RETURN(pair.cert_chain, ReadPem(options.tls_cert));
  ssl.pem_key_cert_pairs.push_back(std::move(pair));
  if (!options.tls_client_ca.empty()) {
    ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadPem(options.tls_client_ca));
    ssl.client_certificate_request =
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

absl::Status CheckImportDir(const std::string& dir) {
  if (dir.empty()) return absl::OkStatus();
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::NotFoundError(
        absl::StrCat("--import_dir '", dir, "' is not a directory"));
  }
  return absl::OkStatus();
}

std::string HostOf(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  return colon == std::string::npos ? listen : listen.substr(0, colon);
}

// The machine's (a pod's) name: with the address, who this replica is.
std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown-host";
  return name;
}

}  // namespace

absl::StatusOr<std::unique_ptr<NamePolicy>> Verityd::LoadNamePolicy() {
  const std::string& file = options_.name_keys_file;
  if (file.empty()) return std::make_unique<NamePolicy>();
  absl::StatusOr<std::string> pem = ReadSmallFile(file, 1 << 20);
  absl::StatusOr<std::vector<Ed25519PublicKey>> keys =
      pem.ok() ? Ed25519PublicKey::ParsePem(*pem)
               : absl::StatusOr<std::vector<Ed25519PublicKey>>(pem.status());
  if (!keys.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--name_keys=", file, ": ", keys.status().message()));
  }
  std::vector<std::string> ids;
  for (const Ed25519PublicKey& key : *keys) ids.push_back(KeyIdToHex(key.id()));
  absl::StatusOr<TrustedKeys> trusted = TrustedKeys::Create(*std::move(keys));
  if (!trusted.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--name_keys=", file, ": ", trusted.status().message()));
  }
  // Key ids name the keys and say nothing secret.
  Log(absl::StrCat("name writes need statements signed by a key of ", file,
                   " (ids ", absl::StrJoin(ids, ", "), ")"));
  return std::make_unique<NamePolicy>(*std::move(trusted));
}

absl::StatusOr<std::unique_ptr<Verityd>> Verityd::Start(
    const ServerOptions& options) {
  std::unique_ptr<Verityd> server(new Verityd(options));
  RETURN_IF_ERROR(server->Init());
  return server;
}

absl::Status Verityd::Init() {
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                   Credentials(options_));
  ASSIGN_OR_RETURN(authorizer_, Authorizer::Create(options_.auth));
  if (authorizer_->enabled()) {
    Log(absl::StrCat("auth: on, ", authorizer_->Summary()));
  }
  context_.gate.authorizer = authorizer_;
  ASSIGN_OR_RETURN(names_, LoadNamePolicy());
  context_.names = names_;
  RETURN_IF_ERROR(CheckImportDir(options_.import_dir));
  RETURN_IF_ERROR(InitDispatch());
  RETURN_IF_ERROR(InitStore());
  RETURN_IF_ERROR(InitLog());
  InitServiceParts();
  InitCollections();
  InitScrubs();
  service_ = std::make_unique<VerityService>(&context_);
  RETURN_IF_ERROR(InitMetricsEndpoint());
  RETURN_IF_ERROR(StartGrpc(std::move(credentials)));
  StartBackground();
  return absl::OkStatus();
}

absl::Status Verityd::InitStore() {
  ASSIGN_OR_RETURN(std::unique_ptr<Store> store, OpenStore());
  if (options_.max_store_bytes != 0) {
    auto quota = std::make_unique<QuotaStore>(std::move(store),
                                              options_.max_store_bytes);
    quota_ = quota.get();
    store = std::move(quota);
  }
  store_ = std::move(store);
  blobs_ = std::make_unique<ServedBlobs>(store_.get(), options_.cache,
                                         options_.service.verify_once);
  context_.store = store_;
  context_.blobs = blobs_;
  if (options_.verify_on_read) {
    context_.reader = dispatcher_;
  } else {
    unverified_reader_ = std::make_unique<UnverifiedReader>();
    context_.reader = unverified_reader_;
  }
  return absl::OkStatus();
}

absl::Status Verityd::InitLog() {
  const std::string& file = options_.log_key_file;
  if (file.empty()) {
    if (options_.witnesses_file.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(
        "--witnesses needs --log_key: witnesses cosign the log's checkpoints");
  }
  absl::StatusOr<std::string> pem = ReadPem(file);
  absl::StatusOr<Ed25519PrivateKey> key =
      pem.ok() ? Ed25519PrivateKey::ParsePem(*pem)
               : absl::StatusOr<Ed25519PrivateKey>(pem.status());
  if (!key.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--log_key=", file, ": ", key.status().message()));
  }
  if (options_.log_origin.empty()) {
    return absl::InvalidArgumentError(
        "--log_key needs --log_origin, the log's name");
  }
  StatementLogOptions log;
  log.origin = options_.log_origin;
  log.key = std::make_shared<const Ed25519PrivateKey>(*std::move(key));
  log.checkpoint_interval = options_.checkpoint_interval;
  log.witness_timeout = options_.witness_timeout;
  if (!options_.witnesses_file.empty()) {
    absl::StatusOr<std::vector<WitnessConfig>> witnesses =
        ReadWitnesses(options_.witnesses_file);
    if (!witnesses.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--witnesses=", options_.witnesses_file, ": ",
                       witnesses.status().message()));
    }
    log.witnesses = *std::move(witnesses);
  }
  absl::StatusOr<std::unique_ptr<StatementLog>> started =
      StatementLog::Start(store_, std::move(log));
  if (!started.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--log_key/--log_origin: ", started.status().message()));
  }
  log_ = *std::move(started);
  context_.log = log_;
  // What clients pass as --log-key: public, and the log's name.
  Log(
      absl::StrCat("transparency log: name statements are logged; its "
                   "verifier key is ",
                   log_->note_key().ToString()));
  return absl::OkStatus();
}

void Verityd::InitServiceParts() {
  context_.metrics = metrics_;
  // Work for a remote store waits on the network: much of it at once. A
  // local store's waits on its disk (a batch's syncfs) leave the CPU to
  // another thread's hashing and writing (docs/tuning.md).
  ExecutorOptions io;
  io.name = "store-io";
  io.threads = store_->IsLocal() ? 4 : 16;
  io_ = std::make_unique<Executor>(io);
  context_.io = io_;
  context_.options = options_.service;
  corruption_ = std::make_unique<CorruptionReporter>(
      store_.get(), blobs_.get(), metrics_.get(), io_.get(),
      options_.service.on_corruption);
  context_.corruption = corruption_;
  chunk_budget_ =
      std::make_unique<ByteBudget>(options_.service.read_window_bytes);
  context_.chunk_budget = chunk_budget_;
  batch_read_blobs_ =
      std::make_unique<ByteBudget>(options_.service.max_batch_read_blobs);
  context_.batch_read_blobs = batch_read_blobs_;
  manifest_bytes_ =
      std::make_unique<ByteBudget>(options_.service.max_manifest_bytes);
  context_.manifest_bytes = manifest_bytes_;
  batch_update_bytes_ =
      std::make_unique<ByteBudget>(options_.service.max_batch_update_bytes);
  context_.batch_update_bytes = batch_update_bytes_;
  if (!store_->IsLocal()) {
    ExecutorOptions lookups;
    lookups.name = "lookups";
    lookups.threads = 16;
    // Each FindMissing or tree check (on io_, 16 threads) queues at most
    // its window: never more than this.
    lookups.max_queued = 16 * 16;
    lookups_ = std::make_unique<Executor>(lookups);
    context_.lookups = lookups_;
  }
  context_.read_buffers =
      BufferPool::Create(ReadBufferPoolOptions(options_.service));
  watchdog_ =
      std::make_unique<StreamWatchdog>(options_.service.stream_idle_timeout);
  context_.watchdog = watchdog_;
  rate_limiter_ =
      std::make_unique<PeerRateLimiter>(options_.service.max_call_rate);
  context_.gate.rate_limiter = rate_limiter_;
}

absl::Status Verityd::StartGrpc(
    std::shared_ptr<grpc::ServerCredentials> credentials) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options_.listen, credentials, &port_);
  builder.RegisterService(service_.get());
  builder.SetMaxReceiveMessageSize(options_.max_message_bytes);
  builder.SetMaxSendMessageSize(options_.max_message_bytes);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             options_.max_streams_per_connection);
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("can't listen on ", options_.listen));
  }
  address_ = absl::StrCat(HostOf(options_.listen), ":", port_);
  return absl::OkStatus();
}

void Verityd::StartBackground() {
  collections_->Start(absl::StrCat(HostName(), "/", address_));
  scrubs_->Start(absl::StrCat(HostName(), "/", address_));
  // A store that keeps no count is counted for the quota off the gRPC
  // threads; Puts are held to what is known meanwhile.
  if (quota_ != nullptr && !store_->Totals().has_value()) {
    upkeep_
        ->Submit([this] {
          if (const absl::Status counted = quota_->Recount(); !counted.ok()) {
            Log(absl::StrCat(
                "could not count the store for --max_store_bytes: ",
                counted.ToString()));
          }
        })
        .IgnoreError();
  }
  UpdateHealth();
  import_thread_ = std::thread([this] { Import(); });
  if (!store_->IsLocal()) probe_thread_ = std::thread([this] { ProbeStore(); });
}

absl::StatusOr<std::unique_ptr<Store>> Verityd::OpenStore() {
  if (options_.store_kind == StoreLocation::Kind::kS3) {
    if (!options_.verify_on_read) {
      return absl::InvalidArgumentError(
          "--verify_on_read=false is for diagnostics of a local store, not of "
          "an S3 bucket");
    }
    S3StoreOptions s3 = options_.s3;
    if (!s3.log) s3.log = Log;
    // Threads of the S3 Puts' own, apart from io_'s, which open blobs and
    // run Stat and List for reads: a Put waiting for a part slot or for its
    // parts in flight holds one of these, never one of those.
    ExecutorOptions puts;
    puts.threads = 16;
    puts.name = "s3-put";
    put_io_ = std::make_unique<Executor>(puts);
    s3.put_executor = put_io_.get();
    s3_metrics_ = std::make_unique<S3Metrics>(*registry_);
    s3.client.observe = [metrics = s3_metrics_.get()](
                            absl::string_view op, int http_status,
                            absl::Duration latency, uint64_t bytes) {
      metrics->Observe(op, http_status, latency, bytes);
    };
    ASSIGN_OR_RETURN(std::unique_ptr<S3Store> store, S3Store::Open(s3));
    ASSIGN_OR_RETURN(
        std::unique_ptr<CachingStore> cached,
        CachingStore::Open(std::move(store), options_.remote_cache));
    caching_store_ = cached.get();
    return cached;
  }
  FileStoreOptions file = options_.store;
  if (!file.log) file.log = Log;
  return FileStore::Open(file);
}

absl::Status Verityd::InitDispatch() {
  // Flag syntax first, before any thread starts.
  RETURN_IF_ERROR(
      ParseInlineLimits(options_.inline_limit_bytes, InlineLimits()).status());
  registry_ = std::make_shared<prometheus::Registry>();
  dispatch_metrics_ = std::make_shared<DispatchMetrics>(*registry_);
  metrics_ = std::make_unique<ServiceMetrics>(*registry_);
  DispatchOptions dispatch;
  dispatch.mode = options_.dispatch;
  dispatch.budget = options_.inline_budget;
  // A local store's reads have the kernel's readahead.
  if (options_.store_kind == StoreLocation::Kind::kS3) {
    dispatch.read_ahead_bytes = options_.read_ahead_bytes;
  }
  RepairCoordinatorOptions repair;
  repair.log = Log;
  repairs_ = std::make_shared<RepairCoordinator>(repair, dispatch_metrics_);
  dispatch.repairs = repairs_;
  // Forced-inline mode has one too: what a remote store fetches is
  // verified there, never on the store's thread that brings it.
  VerifyPoolOptions pool;
  if (dispatch.mode == DispatchMode::kPoolUnbound) {
    pool.mode = VerifyPoolOptions::Mode::kUnbound;
  }
  ASSIGN_OR_RETURN(pool_, VerifyPool::Create(pool));
  const Calibration calibration = Calibrate(pool_.get());
  ASSIGN_OR_RETURN(
      dispatch.limits,
      ParseInlineLimits(options_.inline_limit_bytes,
                        InlineLimits::Uniform(calibration.urgent_limit_bytes)));
  for (PriorityClass c : kAllPriorityClasses) {
    dispatch_metrics_->SetInlineLimit(c, dispatch.limits.For(c));
  }
  if (dispatch.mode == DispatchMode::kAdaptive) {
    ASSIGN_OR_RETURN(tuner_, StartTuner(dispatch.limits, calibration));
    dispatch.tuner = tuner_;
  }
  dispatcher_ =
      std::make_shared<Dispatcher>(dispatch, pool_, dispatch_metrics_);
  Log(absl::StrCat("dispatch: ", DispatchModeName(dispatch.mode),
                   ", inline limits ", dispatch.limits.ToString(),
                   tuner_ ? ", tuned online" : "",
                   " (calibrated: ", calibration.ToString(),
                   "); pool: ", pool_->scheduling().ToString()));
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<InlineTuner>> Verityd::StartTuner(
    const InlineLimits& limits, const Calibration& calibration) {
  InlineTunerOptions tuning;
  tuning.prior = limits;
  tuning.prior_hash_4k = calibration.hash_4k;
  tuning.prior_handoff = calibration.handoff;
  // The classes --inline_limit_bytes names keep their limit.
  InlineLimits unset;
  unset.bytes.fill(UINT64_MAX);
  ASSIGN_OR_RETURN(const InlineLimits given,
                   ParseInlineLimits(options_.inline_limit_bytes, unset));
  for (PriorityClass c : kAllPriorityClasses) {
    tuning.fixed[Index(c)] = given.For(c) != UINT64_MAX;
  }
  return std::make_shared<InlineTuner>(
      tuning, [metrics = dispatch_metrics_](const InlineLimitChange& change) {
        Log(absl::StrCat("dispatch: ", PriorityClassName(change.priority_class),
                         " inline limit ", change.from, " -> ", change.to,
                         " bytes (", change.why, ")"));
        metrics->SetInlineLimit(change.priority_class, change.to);
      });
}

absl::Status Verityd::InitMetricsEndpoint() {
  if (options_.metrics_listen.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(exposer_, StartMetricsExposer(options_.metrics_listen,
                                                 "--metrics_listen"));
  scrape_metrics_ = std::make_shared<ScrapeMetrics>(
      &context_.state, store_.get(), &pool_->scheduling(), caching_store_,
      quota_);
  process_metrics_ = std::make_shared<ProcessMetrics>();
  exposer_->RegisterCollectable(registry_);
  exposer_->RegisterCollectable(scrape_metrics_);
  exposer_->RegisterCollectable(process_metrics_);
  metrics_port_ = ExposerPort(*exposer_);
  return absl::OkStatus();
}

void Verityd::InitCollections() {
  collection_metrics_ = std::make_shared<CollectionMetrics>(*registry_);
  CollectionsOptions options;
  options.grace = options_.service.gc_grace;
  options.interval = options_.gc_interval;
  options.log = [](absl::string_view line) { Log(line); };
  if (quota_ != nullptr) {
    options.counted = [this](uint64_t bytes, absl::Time started) {
      quota_->Counted(bytes, started);
    };
  }
  collections_ = std::make_unique<Collections>(
      store_,
      [blobs = blobs_](absl::Span<const ParsedDigest> digests,
                       absl::Time cutoff) {
        return blobs->DeleteUnusedSince(digests, cutoff);
      },
      collection_metrics_, std::move(options));
  ExecutorOptions upkeep;
  upkeep.name = "upkeep";
  // One for Collect calls, one for Scrub calls that wait.
  upkeep.threads = 2;
  upkeep_ = std::make_unique<Executor>(upkeep);
  context_.upkeep = upkeep_;
  context_.collect = [this](bool dry_run) {
    return collections_->RunNow(dry_run);
  };
  if (options_.gc_interval > absl::ZeroDuration()) {
    Log(absl::StrCat("garbage collection every ",
                     absl::FormatDuration(options_.gc_interval), ", grace ",
                     absl::FormatDuration(options_.service.gc_grace)));
  }
}

void Verityd::InitScrubs() {
  scrub_metrics_ = std::make_shared<ScrubMetrics>(*registry_);
  ScrubsOptions options;
  options.interval = options_.scrub_interval;
  options.bytes_per_second = options_.scrub_bytes_per_second;
  // A repair the scrub asks for is one a read would share, at IDLE.
  options.repair = [repairs = repairs_](
                       std::shared_ptr<VerifiedBlob> blob,
                       const absl::Status& bad) -> absl::StatusOr<int> {
    absl::Notification done;
    absl::StatusOr<int> result;
    RETURN_IF_ERROR(
        repairs->Repair(std::move(blob), bad, PriorityClass::kIdle,
                        [&](const RepairCoordinator::Result& repaired) {
                          result = repaired;
                          done.Notify();
                        }));
    done.WaitForNotification();
    return result;
  };
  // Damage beyond repair is reported as a read reports it.
  options.report = [corruption = corruption_](const ParsedDigest& digest,
                                              const absl::Status& damage) {
    absl::Notification done;
    corruption->Report(digest, damage, [&](absl::Status) { done.Notify(); });
    done.WaitForNotification();
  };
  options.log = [](absl::string_view line) { Log(line); };
  scrubs_ =
      std::make_unique<Scrubs>(store_, scrub_metrics_, std::move(options));
  context_.scrub = [this](bool wait) { return scrubs_->RunNow(wait); };
  if (options_.scrub_interval > absl::ZeroDuration()) {
    Log(absl::StrCat(
        "scrub every ", absl::FormatDuration(options_.scrub_interval),
        options_.scrub_bytes_per_second == 0
            ? std::string(", at no byte limit")
            : absl::StrCat(", at most ", options_.scrub_bytes_per_second,
                           " bytes/s")));
  }
}

void Verityd::Import() {
  absl::Cleanup done = [this] { import_done_.Notify(); };
  if (!options_.import_dir.empty()) {
    Log(absl::StrCat("importing ", options_.import_dir));
    absl::StatusOr<ImportStats> stats = ImportDirectory(
        store_.get(), options_.import_dir, MerkleParams(), &cancel_import_);
    if (!stats.ok()) {
      // Stay NOT_SERVING: readiness never passes, which is what an operator
      // must see.
      Log(absl::StrCat("import failed, not serving: ",
                       stats.status().message()));
      return;
    }
    Log(absl::StrCat("imported ", stats->files, " files (", stats->bytes,
                     " bytes, ", stats->already_present, " already stored, ",
                     stats->refused, " refused)"));
  }
  context_.state.serving.store(true, std::memory_order_release);
  UpdateHealth();
  const std::optional<StoreTotals> totals = store_->Totals();
  Log(totals.has_value() ? absl::StrCat("serving ", totals->blobs, " blobs")
                         : std::string("serving"));
}

void Verityd::ProbeStore() {
  while (!stop_probe_.WaitForNotificationWithTimeout(
      options_.store_probe_interval)) {
    const absl::Status status = store_->CheckHealth();
    if (status.ok() == context_.state.store_up.load()) continue;
    context_.state.store_up.store(status.ok());
    Log(status.ok() ? std::string("the store answers again: SERVING")
                    : absl::StrCat("the store does not answer, NOT_SERVING: ",
                                   status.ToString()));
    UpdateHealth();
  }
}

void Verityd::UpdateHealth() {
  absl::MutexLock lock(&health_mu_);
  const bool serving = context_.state.serving.load(std::memory_order_acquire) &&
                       context_.state.store_up;
  if (grpc::HealthCheckServiceInterface* health =
          server_->GetHealthCheckService()) {
    health->SetServingStatus(serving);
  }
}

void Verityd::Shutdown(absl::Duration grace) {
  absl::MutexLock lock(&shutdown_mu_);
  cancel_import_.store(true);
  if (import_thread_.joinable()) import_thread_.join();
  if (server_ == nullptr) return;
  const absl::Time deadline = absl::Now() + grace;
  context_.state.stopping.store(true, std::memory_order_release);
  context_.state.serving.store(false, std::memory_order_release);
  UpdateHealth();
  // A probe under way may wait on an unreachable endpoint for its timeouts:
  // the calls' grace period does not wait for it, only the server's end does.
  if (probe_thread_.joinable()) stop_probe_.Notify();
  // A collection under way stops between two pages, a scrub before its
  // next blob.
  if (collections_ != nullptr) collections_->Stop();
  if (scrubs_ != nullptr) scrubs_->Stop();
  Drain(deadline);
  server_->Shutdown(absl::ToChronoTime(deadline));
  server_->Wait();
  AfterServerWait(&context_);
  if (probe_thread_.joinable()) probe_thread_.join();
  server_.reset();
}

void Verityd::Drain(absl::Time deadline) const {
  constexpr absl::Duration kPoll = absl::Milliseconds(10);
  const absl::Time start = absl::Now();
  while (absl::Now() < deadline) {
    if (context_.state.active_streams.load() == 0) {
      // Without the kernel's tables the wait can only be for the streams.
      absl::StatusOr<int64_t> unacked = UnackedBytesOnPort(port_);
      if (!unacked.ok() || *unacked == 0) {
        Log(absl::StrCat("drained in ",
                         absl::FormatDuration(absl::Now() - start)));
        return;
      }
    }
    absl::SleepFor(kPoll);
  }
  Log("streams still in flight or unacknowledged at the end of the grace");
}

std::vector<std::string> Verityd::StatsSummary() const {
  std::vector<std::string> lines = metrics_->Summary();
  for (std::string& line : dispatch_metrics_->Summary()) {
    lines.push_back(std::move(line));
  }
  return lines;
}

Verityd::~Verityd() {
  Shutdown(absl::ZeroDuration());
  TearDown();
}

void Verityd::TearDown() {
  // No call runs now, and none starts: the calls' shares of the parts go.
  service_.reset();
  context_.ReleaseParts();
  // Scrapes the metrics, the store's totals and the pool's scheduling.
  exposer_.reset();
  scrape_metrics_.reset();
  process_metrics_.reset();
  // Appends nothing now that no call waits for it; its thread reads the
  // store.
  log_.reset();
  // Collect and Scrub calls' work, which runs collections_ and scrubs_.
  upkeep_.reset();
  // Both use the store and the served blobs; the scrubs also repairs_ and
  // corruption_. Stopped by Shutdown(), joined here.
  scrubs_.reset();
  collections_.reset();
  // Put, Delete and FindMissing work: waits for lookups_, reports damage
  // through corruption_, and uses the served blobs, the store and the
  // budgets. put_io_ runs the S3 store's Put steps.
  io_.reset();
  put_io_.reset();
  lookups_.reset();
  corruption_.reset();
  // Waits for the reads it took, which go on through the pool and repairs_.
  dispatcher_.reset();
  unverified_reader_.reset();
  repairs_.reset();
  pool_.reset();
  tuner_.reset();
  // No thread is left; what remains is let go of with the object: the
  // served blobs before the store they read, the store before s3_metrics_,
  // which observes its requests.
  blobs_.reset();
  quota_ = nullptr;
  caching_store_ = nullptr;
  store_.reset();
  s3_metrics_.reset();
}

}  // namespace verity::server
