// The verityd server as an object: the store, the Verity service, health and
// reflection on one gRPC server. main.cc runs one; integration tests run them
// in-process on port 0.

#ifndef VERITYD_SERVER_VERITYD_H_
#define VERITYD_SERVER_VERITYD_H_

#include <grpcpp/grpcpp.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "lib/base/executor.h"
#include "server/auth/authorizer.h"
#include "server/dispatch/calibration.h"
#include "server/dispatch/dispatch_metrics.h"
#include "server/dispatch/dispatcher.h"
#include "server/dispatch/inline_tuner.h"
#include "server/dispatch/repair_coordinator.h"
#include "server/dispatch/unverified_reader.h"
#include "server/dispatch/verify_pool.h"
#include "server/log/statement_log.h"
#include "server/log/witness_client.h"
#include "server/metrics/s3_metrics.h"
#include "server/metrics/service_metrics.h"
#include "server/rpc/chunk_window.h"
#include "server/rpc/name_policy.h"
#include "server/rpc/peer_rate_limiter.h"
#include "server/rpc/service_context.h"
#include "server/rpc/stream_watchdog.h"
#include "server/rpc/verity_service.h"
#include "server/server_options.h"
#include "server/store/cache/caching_store.h"
#include "server/store/quota_store.h"
#include "server/store/served_blobs.h"
#include "server/store/store.h"
#include "server/upkeep/collections.h"
#include "server/upkeep/scrubs.h"

namespace verity::server {

// Thread-safe. Destroying it shuts it down with no grace period.
class Verityd {
 public:
  // Opens the store and starts listening. Returns once the port is bound; the
  // import of options.import_dir (if any) continues in the background and
  // serving starts after it. INVALID_ARGUMENT for inconsistent options (e.g.
  // plaintext off loopback), NOT_FOUND for a missing import directory,
  // UNAVAILABLE if the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<Verityd>> Start(
      const ServerOptions& options);
  ~Verityd();

  // The port actually bound, and "host:port" to connect to.
  int port() const { return port_; }
  const std::string& address() const { return address_; }

  // Blocks until start-up is over: the import is done and the server reports
  // SERVING, or the import failed (logged) and it stays NOT_SERVING.
  void WaitUntilServing() { import_done_.WaitForNotification(); }

  // The port /metrics is served on; 0 without ServerOptions::metrics_listen.
  int metrics_port() const { return metrics_port_; }

  // Reads ServerOptions::auth's files again (on SIGHUP): on success the new
  // grants hold from the next call on; on error the old ones stay.
  absl::Status ReloadAuth() { return authorizer_->Reload(); }
  // "off", or what the grants hold ("N tokens, M identities").
  std::string AuthSummary() const {
    return authorizer_->enabled() ? authorizer_->Summary() : "off";
  }

  // Read and Put streams and ReadSmall calls under way: what --max_streams
  // counts (and the verityd_active_streams gauge shows).
  int active_streams() const { return context_.state.active_streams.load(); }

  // What the verification dispatch did so far.
  const DispatchMetrics& dispatch_metrics() const { return *dispatch_metrics_; }
  // Call latencies and dispatch figures as "stats ..." lines, for the log.
  std::vector<std::string> StatsSummary() const;

  // Reports NOT_SERVING, refuses new calls with UNAVAILABLE, lets in-flight
  // calls finish and their last bytes reach the clients for up to `grace`,
  // then stops the gRPC server, cancelling what remains. Idempotent.
  void Shutdown(absl::Duration grace) ABSL_LOCKS_EXCLUDED(shutdown_mu_);

 private:
  explicit Verityd(const ServerOptions& options) : options_(options) {}
  absl::Status Init();
  // The store; for S3 with the slab cache in front (caching_store_), and its
  // requests observed by s3_metrics_.
  absl::StatusOr<std::unique_ptr<Store>> OpenStore();
  // The verification pool, the calibrated limits and the dispatcher.
  absl::Status InitDispatch();
  // The store (with the quota in front if any), the served blobs and the
  // reader the calls verify with.
  absl::Status InitStore();
  // What the calls share beside the store: executors, budgets, buffers,
  // the watchdog and the rate limiter (context_).
  void InitServiceParts();
  // Listens and starts serving; sets port_ and address_.
  absl::Status StartGrpc(std::shared_ptr<grpc::ServerCredentials> credentials);
  // Upkeep that runs once serving: leases, the quota's count, the import
  // and the store probe.
  void StartBackground();
  // The NamePolicy of --name_keys (the keys' ids logged).
  absl::StatusOr<std::unique_ptr<NamePolicy>> LoadNamePolicy();
  // The transparency log of --log_key, on the store; none without.
  absl::Status InitLog();
  // The online tuner of the inline limits, starting from `limits`.
  absl::StatusOr<std::shared_ptr<InlineTuner>> StartTuner(
      const InlineLimits& limits, const Calibration& calibration);
  // Serves the registry and the scrape-time metrics on metrics_listen.
  absl::Status InitMetricsEndpoint();
  // Garbage collections (collections_, upkeep_, context_.collect).
  void InitCollections();
  void InitScrubs();
  void Import();
  // Probes a remote store every store_probe_interval until Shutdown().
  void ProbeStore();
  // Health reports SERVING once the import is done and while the store is up.
  void UpdateHealth() ABSL_LOCKS_EXCLUDED(health_mu_);
  // Waits until no stream is in flight and the clients have acknowledged every
  // byte sent to them, or until `deadline`. Only then may gRPC close the
  // connections: see unacked_bytes.h.
  void Drain(absl::Time deadline) const;
  // After Shutdown(): stops and lets go of every part, each after what uses
  // it (the destructor's one step; the members' order does not matter).
  void TearDown();

  const ServerOptions options_;
  // The parts, each stopped and let go of in TearDown(), in the order it
  // gives: what uses a part goes before it.
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<S3Metrics> s3_metrics_;
  std::shared_ptr<Store> store_;
  // The cache in front of a remote store: store_ itself; null for a local one.
  const CachingStore* caching_store_ = nullptr;
  // The quota in front of it all (--max_store_bytes): store_ itself; null
  // without one.
  QuotaStore* quota_ = nullptr;
  // The store with the cache of blobs open for reading: what the service reads
  // through and changes the store through.
  std::shared_ptr<ServedBlobs> blobs_;
  std::shared_ptr<DispatchMetrics> dispatch_metrics_;
  std::shared_ptr<ServiceMetrics> metrics_;
  // Tunes the dispatcher's inline limits in adaptive mode.
  std::shared_ptr<InlineTuner> tuner_;
  // Holds the pool and the repairs it uses; waits for its reads when let go.
  std::shared_ptr<Dispatcher> dispatcher_;
  // Only with --verify_on_read=false; otherwise the dispatcher reads.
  std::shared_ptr<UnverifiedReader> unverified_reader_;
  std::shared_ptr<VerifyPool> pool_;
  // FEC repairs: blocking reads of a whole RS group and a durable write (a
  // group of 64 KiB blocks is 16 MiB); shared with the dispatcher and the
  // scrubs, which ask for them.
  std::shared_ptr<RepairCoordinator> repairs_;
  // What Read streams' chunks and BatchReads' blobs may hold, together; the
  // blobs BatchReads open at once; the manifests tree Puts hold.
  std::shared_ptr<ByteBudget> chunk_budget_;
  std::shared_ptr<ByteBudget> batch_read_blobs_;
  std::shared_ptr<ByteBudget> manifest_bytes_;
  std::shared_ptr<ByteBudget> batch_update_bytes_;
  std::shared_ptr<StreamWatchdog> watchdog_;
  std::shared_ptr<Authorizer> authorizer_;
  std::shared_ptr<PeerRateLimiter> rate_limiter_;
  // --name_keys; never null once Init() has run.
  std::shared_ptr<NamePolicy> names_;
  // --log_key's log; null without.
  std::shared_ptr<StatementLog> log_;
  ServiceContext context_;
  // What a read that finds damage does; runs its work on io_.
  std::shared_ptr<CorruptionReporter> corruption_;
  // FindMissing's lookups of a remote store, which its calls on io_ wait for.
  std::shared_ptr<Executor> lookups_;
  // Put's and Delete's store work.
  std::shared_ptr<Executor> io_;
  // The S3 store's Put steps (S3StoreOptions::put_executor); null for a
  // local store.
  std::unique_ptr<Executor> put_io_;
  // Garbage collections, on upkeep_ when asked, and every --gc_interval.
  std::shared_ptr<CollectionMetrics> collection_metrics_;
  std::unique_ptr<Collections> collections_;
  // Scrub passes, on a thread of their own. Their repairs go through
  // repairs_, and damage through corruption_.
  std::shared_ptr<ScrubMetrics> scrub_metrics_;
  std::unique_ptr<Scrubs> scrubs_;
  // Collect and Scrub calls' work.
  std::shared_ptr<Executor> upkeep_;
  std::unique_ptr<VerityService> service_;
  // Written by Init(), then only by Shutdown(); the import and probe threads
  // use it until joined.
  std::unique_ptr<grpc::Server> server_;
  std::thread import_thread_;
  std::atomic<bool> cancel_import_{false};
  absl::Notification import_done_;
  std::thread probe_thread_;
  absl::Notification stop_probe_;
  absl::Mutex health_mu_;    // orders the health updates of both threads
  absl::Mutex shutdown_mu_;  // serializes Shutdown() calls
  int port_ = 0;
  std::string address_;
  std::shared_ptr<prometheus::Collectable> scrape_metrics_;
  std::shared_ptr<prometheus::Collectable> process_metrics_;
  int metrics_port_ = 0;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_VERITYD_H_
