// What every RPC of the Verity service shares: the served blobs (the store and
// the cache of open blobs), the service's options and its state. Owned by the
// server; outlives every call.

#ifndef VERITYD_SERVER_RPC_SERVICE_CONTEXT_H_
#define VERITYD_SERVER_RPC_SERVICE_CONTEXT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/base/buffer_pool.h"
#include "lib/base/executor.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/read_plan.h"
#include "proto/verity/v1/verity.pb.h"
#include "server/auth/authorizer.h"
#include "server/dispatch/chunk_reader.h"
#include "server/log/statement_log.h"
#include "server/metrics/service_metrics.h"
#include "server/rpc/call_admission.h"
#include "server/rpc/chunk_window.h"
#include "server/rpc/corruption_reporter.h"
#include "server/rpc/name_policy.h"
#include "server/rpc/peer_rate_limiter.h"
#include "server/rpc/request_checks.h"
#include "server/rpc/service_state.h"
#include "server/rpc/stream_watchdog.h"
#include "server/store/served_blobs.h"
#include "server/store/store.h"
#include "server/store/verified_blob.h"
#include "server/upkeep/collector.h"
#include "server/upkeep/scrubber.h"

namespace verity::server {

struct ServiceOptions {
  OnCorruption on_corruption = OnCorruption::kError;
  // Blobs remember which data blocks they verified and skip hashing them again
  // (see VerifiedBlob::Create); forgotten when a blob leaves the cache. The
  // server hands it to ServedBlobs, which opens the blobs.
  bool verify_once = false;
  // Data bytes per Read response message (rounded down to whole blocks, at
  // least one block): each stream's chunks grow from the first to the second
  // while its client keeps up (ChunkWindow), by at most read_window_bytes for
  // all streams together.
  uint32_t read_chunk_bytes = 256 << 10;
  uint32_t max_read_chunk_bytes = 2 << 20;
  uint64_t read_window_bytes = uint64_t{32} << 20;
  // Concurrent Read and Put streams across all clients, and Put streams among
  // them; more get RESOURCE_EXHAUSTED.
  int max_streams = 256;
  int max_puts = 32;
  // How long a Read's client may leave a message untaken, or a Put's client
  // the next message unsent, before the stream is cancelled; zero for ever.
  absl::Duration stream_idle_timeout = absl::Seconds(60);
  // Calls each client connection may start per second (PeerRateLimiter);
  // zero for no limit. A backstop, not a share: well above what one
  // connection of back-to-back small reads sustains (docs/bench-small-reads.md
  // has the figures), so it refuses no legitimate client and still cuts off a
  // connection gone wild.
  double max_call_rate = 50000;
  // Entries of ReadRequest.have_tree_blocks; more is INVALID_ARGUMENT.
  size_t max_have_tree_blocks = kMaxHaveTreeBlocks;
  // Blobs that all BatchRead calls together open and read at once, each
  // call holding at most kBatchReadWindow of them: what 1,000-blob calls
  // may keep of a remote store's attention, and of its opens' queue.
  int max_batch_read_blobs = 64;
  // Bytes of tree manifests that all tree Puts together hold until their
  // check (one manifest may be 128 MiB); past it a Put is RESOURCE_EXHAUSTED.
  uint64_t max_manifest_bytes = uint64_t{256} << 20;
  // Data bytes that all BatchUpdate calls together hold while they store
  // their blobs (one call holds at most 4 MiB); past it a call is
  // RESOURCE_EXHAUSTED.
  uint64_t max_batch_update_bytes = uint64_t{64} << 20;
  // Garbage collection's grace (every replica of a store the same): blobs
  // a call relies on (FindMissing, a Put that finds its blob, a tree Put's
  // files, SetName) are marked used at least every half of it.
  absl::Duration gc_grace = absl::Hours(1);
};

// The read path's buffer pool, sized from the read window. A stream holds at
// most three chunks at once (one being read and verified, one ready, one that
// gRPC is still writing), each of read_chunk_bytes to max_read_chunk_bytes
// (the window doubles and halves, so a power of two times the first), and all
// windows together grow by at most read_window_bytes beyond the minimum. So
// the pool's sizes run from a tree block (4 KiB) to the largest chunk, a chunk
// taking a buffer of its own size (a slow stream's 256 KiB chunk does not pin
// a 2 MiB buffer). Idle: four of the largest buffers (8 MiB by default), what
// one full-speed stream cycles through (its three chunks and the next), so a
// fetch reuses its buffers from one message to the next and from one fetch
// to the next; busier servers reuse them across streams, whose takes and
// returns interleave. Not read_window_bytes (32 MiB): that kept the same
// faults and CPU per fetch (a 512 MiB fetch: ~1 fault either way) but up to
// 32 MiB more resident after a burst.
BufferPoolOptions ReadBufferPoolOptions(const ServiceOptions& options);

// What the calls of the Verity service use, each part shared with the server
// that made it: a part lives as long as the context or anything that took
// it from the context does. Each part is given to what needs it alone:
// admission the gate and the state, ScrapeMetrics the state, a read that
// finds damage the corruption reporter.
struct ServiceContext {
  // What changes nothing: names, Stat, List, Totals, IsLocal, the log.
  std::shared_ptr<const Store> store;
  // Everything else: opening blobs for reading (cached, with their verified
  // trees), Put, Delete and quarantine, which decide what stays cached.
  std::shared_ptr<ServedBlobs> blobs;
  // How Read chunks come out of the store: verified (the Dispatcher, inline or
  // on the verification pool) unless --verify_on_read=false.
  std::shared_ptr<ChunkReader> reader;
  // Call latencies, bytes and corruption.
  std::shared_ptr<ServiceMetrics> metrics;
  // Runs Put's and Delete's store work off the gRPC callback threads.
  std::shared_ptr<Executor> io;
  // Runs Collect and Scrub calls off the I/O threads.
  std::shared_ptr<Executor> upkeep;
  // One garbage collection now (dry run or not), as the server runs them
  // (its grace, its holder name, its metrics). Blocking.
  std::function<absl::StatusOr<CollectReport>(bool dry_run)> collect;
  // Asks for a scrub pass now and, with `wait`, waits for it (Scrubs::RunNow).
  std::function<absl::StatusOr<ScrubStatus>(bool wait)> scrub;
  // What Read streams' chunks may grow by beyond read_chunk_bytes, and
  // BatchRead calls' blobs may hold, together: the read window.
  std::shared_ptr<ByteBudget> chunk_budget;
  // ServiceOptions::max_batch_read_blobs, shared.
  std::shared_ptr<ByteBudget> batch_read_blobs;
  // ServiceOptions::max_manifest_bytes, shared.
  std::shared_ptr<ByteBudget> manifest_bytes;
  // ServiceOptions::max_batch_update_bytes, shared.
  std::shared_ptr<ByteBudget> batch_update_bytes;
  // FindMissing's and the tree Put check's lookups of a remote store, shared
  // by every call (tree_checks.h); null for a local store.
  std::shared_ptr<Executor> lookups;
  // Every Read chunk's buffers (its data and the tree blocks it reads): one
  // pool for the server, sized by ReadBufferPoolOptions().
  std::shared_ptr<BufferPool> read_buffers;
  // Cancels Read and Put streams whose client stalls; null watches none.
  std::shared_ptr<StreamWatchdog> watchdog;
  // What a name write needs (--name_keys). Never null.
  std::shared_ptr<const NamePolicy> names;
  // The transparency log name statements go into (--log_key); null: none.
  std::shared_ptr<StatementLog> log;
  // Who may call what, and how often each connection may start a call.
  CallGate gate;
  // What a read that finds its blob damaged does. Never null.
  std::shared_ptr<const CorruptionReporter> corruption;
  ServiceOptions options;
  ServiceState state;

  // Lets go of every part, and of collect and scrub, once no call runs: the
  // server then stops them in its own order.
  void ReleaseParts();
};

// Counts one stream against a limit (ServiceOptions::max_streams or
// max_puts) until Release() or its destruction. Thread-compatible.
class StreamSlot {
 public:
  // A slot among all streams.
  explicit StreamSlot(ServiceContext* context)
      : StreamSlot(&context->state.active_streams, context->options.max_streams,
                   "streams") {}
  // A slot among `*active`, of which `limit` may run; `what` names them.
  StreamSlot(std::atomic<int>* active, int limit, const char* what)
      : active_(active), what_(what) {
    admitted_ = active_->fetch_add(1) < limit;
  }
  ~StreamSlot() { Release(); }
  StreamSlot(const StreamSlot&) = delete;
  StreamSlot& operator=(const StreamSlot&) = delete;

  absl::Status status() const {
    if (admitted_) return absl::OkStatus();
    return absl::ResourceExhaustedError(
        absl::StrCat("too many concurrent ", what_, "; retry later"));
  }

  // Gives the slot back: a call that finishes does so before its client
  // hears the status, so that the client's next call finds it free.
  void Release() {
    if (released_) return;
    released_ = true;
    active_->fetch_sub(1);
  }

 private:
  std::atomic<int>* const active_;
  const char* const what_;
  bool admitted_ = false;
  bool released_ = false;
};

// The blob a checked request names: its own digest, or the one its name
// points at (NOT_FOUND if unknown) with the name's statement.
absl::StatusOr<NamedBlob> ResolveBlob(const Store& store,
                                      const BlobSelector& blob);

v1::BlobInfo BlobInfoToProto(const BlobInfo& info);
v1::NameVersion NameVersionToProto(const NameVersion& version);

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_SERVICE_CONTEXT_H_
