// The transparency log's costs (issue 45), reported, never asserted:
//   appends   statements sequenced per second on one replica: by the log
//             alone (StatementLog over a file store, 4,096 in flight), and by
//             SetName end to end through a real verityd (1,024 calls in
//             flight), with --checkpoint_interval=1s
//   statname  Stat-by-name latency, p50 and p99, of a verityd with a log
//             (each answer carrying its proofs) and of one without,
//             alternating rounds of sequential calls
//   million   a log of 1,000,000 entries: proof sizes, the server's time to
//             read a proof from the tiles, the client's time to check one
//   ceph      appends on the radosgw tests/testing/with_ceph.sh started: by
//             the log alone over an S3 store, and SetName end to end through
//             a verityd on it (1 s interval, 8 connections); not in the default
//             run (tests/bench/tlog_ceph_bench.sh starts the cluster)
// Run: bazel build //tests/bench:tlog_bench &&
//   bazel-bin/tests/bench/tlog_bench DIR [SECTION]  (DIR: scratch space on the
//   disk to measure; SECTION: one of the five). docs/bench-transparency-log.md
//   has the figures.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/types/span.h"
#include "lib/tlog/log_prover.h"
#include "lib/tlog/log_sequencer.h"
#include "lib/tlog/memory_log_storage.h"
#include "lib/trust/ed25519_key.h"
#include "lib/trust/name_statement.h"
#include "server/log/statement_log.h"
#include "server/store/file/file_store.h"
#include "server/store/s3/s3_store.h"
#include "server/store/s3/testing/radosgw.h"
#include "tests/testing/test_server.h"

namespace verity {
namespace {

constexpr int kRounds = 3;

std::string Statement(const Ed25519PrivateKey& key, const std::string& name,
                      const ParsedDigest& digest, uint64_t version) {
  const absl::Time now =
      absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now()));
  NameClaim claim{name, digest, version, now - absl::Minutes(1),
                  now + absl::Hours(24)};
  const Ed25519PrivateKey* keys[] = {&key};
  return SignNameStatement(claim, keys).value();
}

// Calls in flight, at most `limit`.
struct Flight {
  bool Room() const { return running < limit; }
  bool Idle() const { return running == 0; }
  int running = 0;
  int limit = 0;
};

// Keeps `in_flight` appends queued for `duration`; returns receipts per second.
double LogAppendRate(server::StatementLog& log, int in_flight,
                     absl::Duration duration, const std::string& statement) {
  absl::Mutex mu;
  Flight flight{0, in_flight};
  std::atomic<int64_t> done{0};
  const absl::Time start = absl::Now();
  const absl::Time end = start + duration;
  uint64_t n = 0;
  while (absl::Now() < end) {
    {
      absl::MutexLock lock(&mu);
      if (!mu.AwaitWithDeadline(absl::Condition(&flight, &Flight::Room), end)) {
        break;
      }
      ++flight.running;
    }
    const absl::Status status =
        log.Append(absl::StrCat(statement, ++n),
                   [&](absl::StatusOr<server::LogReceipt> receipt) {
                     // Counted only if sequenced within the measured time.
                     if (receipt.ok() && absl::Now() <= end) ++done;
                     absl::MutexLock lock(&mu);
                     --flight.running;
                   });
    if (!status.ok()) {
      absl::MutexLock lock(&mu);
      --flight.running;
    }
  }
  absl::MutexLock lock(&mu);
  mu.Await(absl::Condition(&flight, &Flight::Idle));
  return done.load() / absl::ToDoubleSeconds(duration);
}

// The log alone over `store`, 4,096 statements in flight, 1 s interval.
void LogAppends(std::shared_ptr<server::Store> store, const char* where) {
  server::StatementLogOptions options;
  options.origin = "bench/log";
  options.key =
      std::make_shared<Ed25519PrivateKey>(Ed25519PrivateKey::Generate());
  std::unique_ptr<server::StatementLog> log =
      server::StatementLog::Start(store, options).value();
  const std::string statement(300, 's');  // a statement's usual size
  for (int round = 1; round <= kRounds; ++round) {
    std::printf("appends: log alone%s, round %d: %.0f statements/s\n", where,
                round, LogAppendRate(*log, 4096, absl::Seconds(10), statement));
    std::fflush(stdout);
  }
}

void Appends(const std::string& dir) {
  server::FileStoreOptions store_options;
  store_options.root = dir + "/append-store";
  LogAppends(server::FileStore::Open(store_options).value(), "");
}

// SetName calls in flight through the callback API, spread over `stubs`
// (one connection each); returns names per second.
// Statement i names `prefix` i, and digests[i] (or the one digest there is).
double SetNameRate(absl::Span<v1::Verity::Stub* const> stubs,
                   absl::string_view prefix,
                   const std::vector<std::string>& statements,
                   const std::vector<std::string>& digests, int in_flight) {
  absl::Mutex mu;
  Flight flight{0, in_flight};
  int ok = 0;
  int failed = 0;
  const absl::Time start = absl::Now();
  for (size_t i = 0; i < statements.size(); ++i) {
    {
      absl::MutexLock lock(&mu);
      mu.Await(absl::Condition(&flight, &Flight::Room));
      ++flight.running;
    }
    auto* context = new grpc::ClientContext;
    auto* request = new v1::SetNameRequest;
    auto* response = new v1::BlobInfo;
    request->set_name(absl::StrCat(prefix, i));
    request->set_digest(digests.size() == 1 ? digests[0] : digests[i]);
    request->set_name_statement(statements[i]);
    stubs[i % stubs.size()]->async()->SetName(
        context, request, response,
        [&, context, request, response](grpc::Status status) {
          delete context;
          delete request;
          delete response;
          absl::MutexLock lock(&mu);
          --flight.running;
          (status.ok() ? ok : failed)++;
        });
  }
  absl::MutexLock lock(&mu);
  mu.Await(absl::Condition(&flight, &Flight::Idle));
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (failed != 0) std::printf("  (%d SetName calls failed)\n", failed);
  return ok / seconds;
}

double SetNameRate(testing::TestServer& server,
                   const std::vector<std::string>& statements,
                   const std::string& digest, int in_flight) {
  v1::Verity::Stub* const stub = &server.stub();
  return SetNameRate({&stub, 1}, "bench/", statements, {digest}, in_flight);
}

// `n` stubs of `server`, each on a connection of its own.
std::vector<std::unique_ptr<v1::Verity::Stub>> Connections(
    testing::TestServer& server, int n) {
  std::vector<std::unique_ptr<v1::Verity::Stub>> stubs;
  for (int i = 0; i < n; ++i) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    stubs.push_back(v1::Verity::NewStub(grpc::CreateCustomChannel(
        server.verityd().address(), grpc::InsecureChannelCredentials(), args)));
  }
  return stubs;
}

server::ServerOptions LoggedOptions(
    const std::string& dir, bool logged,
    absl::Duration interval = absl::Seconds(1)) {
  server::ServerOptions options;
  options.store.root = dir;
  if (logged) {
    const std::string key_file = dir + ".log-key.pem";
    std::ofstream(key_file) << Ed25519PrivateKey::Generate().ToPem();
    options.log_key_file = key_file;
    options.log_origin = "bench/log";
    options.checkpoint_interval = interval;
  }
  return options;
}

void SetNames(const std::string& dir) {
  const Ed25519PrivateKey publisher = Ed25519PrivateKey::Generate();
  const std::string blob = testing::RandomBytes(4096, 7);
  const ParsedDigest digest = ParseDigest(testing::DigestOf(blob)).value();
  constexpr int kNames = 4000;
  // The log with a 1 s and a 100 ms interval, and no log.
  const absl::Duration intervals[] = {absl::Seconds(1), absl::Milliseconds(100),
                                      absl::ZeroDuration()};
  for (int round = 1; round <= kRounds; ++round) {
    for (const absl::Duration interval : intervals) {
      const bool logged = interval > absl::ZeroDuration();
      auto server = testing::TestServer::Start(
          LoggedOptions(absl::StrCat(dir, "/setname-", round, "-",
                                     absl::ToInt64Milliseconds(interval)),
                        logged, interval));
      testing::PutBlob(server->stub(), blob).IgnoreError();
      std::vector<std::string> statements;
      for (int i = 0; i < kNames; ++i) {
        statements.push_back(
            Statement(publisher, absl::StrCat("bench/", i), digest, 1));
      }
      const std::string what =
          logged ? absl::StrCat("with the log, interval ",
                                absl::FormatDuration(interval))
                 : "without a log";
      std::printf("appends: SetName end to end, %s, round %d: %.0f names/s\n",
                  what.c_str(), round,
                  SetNameRate(*server, statements, digest.ToString(), 1024));
      std::fflush(stdout);
      if (interval != absl::Seconds(1)) continue;
      // Eight connections: each carries up to 100 calls at once.
      for (int i = 0; i < kNames; ++i) {
        statements[i] =
            Statement(publisher, absl::StrCat("bench/8/", i), digest, 1);
      }
      std::vector<std::unique_ptr<v1::Verity::Stub>> stubs =
          Connections(*server, 8);
      std::vector<v1::Verity::Stub*> raw;
      for (auto& stub : stubs) raw.push_back(stub.get());
      std::printf(
          "appends: SetName end to end, %s, 8 connections, round %d: %.0f "
          "names/s\n",
          what.c_str(), round,
          SetNameRate(raw, "bench/8/", statements, {digest.ToString()}, 1024));
      std::fflush(stdout);
    }
  }
}

// Sequential Stat-by-name calls; returns the sorted latencies in µs.
std::vector<double> StatLatencies(testing::TestServer& server, int names,
                                  int calls, uint64_t seen_size) {
  std::vector<double> micros;
  std::mt19937 random(1);
  for (int i = 0; i < calls; ++i) {
    grpc::ClientContext context;
    v1::StatRequest request;
    request.set_name(absl::StrCat("bench/", random() % names));
    request.set_log_size_seen(seen_size);
    v1::BlobInfo info;
    const absl::Time start = absl::Now();
    const grpc::Status status = server.stub().Stat(&context, request, &info);
    micros.push_back(absl::ToDoubleMicroseconds(absl::Now() - start));
    if (!status.ok())
      std::printf("  Stat failed: %s\n", status.error_message().c_str());
  }
  std::sort(micros.begin(), micros.end());
  return micros;
}

// `n` releases, each a 4 KiB blob of its own (random from `seed` on) and a
// statement signed by one publisher naming it `prefix` i.
struct Releases {
  std::vector<std::string> blobs, digests, statements;
};
Releases BlobPerName(int n, absl::string_view prefix, uint32_t seed) {
  const Ed25519PrivateKey publisher = Ed25519PrivateKey::Generate();
  Releases releases;
  for (int i = 0; i < n; ++i) {
    releases.blobs.push_back(testing::RandomBytes(4096, seed + i));
    releases.digests.push_back(testing::DigestOf(releases.blobs.back()));
    releases.statements.push_back(
        Statement(publisher, absl::StrCat(prefix, i),
                  ParseDigest(releases.digests.back()).value(), 1));
  }
  return releases;
}

void StatName(const std::string& dir) {
  constexpr int kNames = 1000;
  const Releases releases = BlobPerName(kNames, "bench/", 1000);
  const std::vector<std::string>& blobs = releases.blobs;
  const std::vector<std::string>& digests = releases.digests;
  const std::vector<std::string>& statements = releases.statements;
  std::unique_ptr<testing::TestServer> servers[2];
  for (const bool logged : {true, false}) {
    auto& server = servers[logged ? 0 : 1];
    server = testing::TestServer::Start(LoggedOptions(
        absl::StrCat(dir, "/stat", logged ? "-logged" : ""), logged));
    for (const std::string& blob : blobs) {
      testing::PutBlob(server->stub(), blob).IgnoreError();
    }
    v1::Verity::Stub* const stub = &server->stub();
    SetNameRate({&stub, 1}, "bench/", statements, digests, 256);
  }
  for (int round = 1; round <= 5; ++round) {
    for (const bool logged : {true, false}) {
      // A client that has seen half the log asks for consistency too.
      const std::vector<double> micros = StatLatencies(
          *servers[logged ? 0 : 1], kNames, 3000, logged ? kNames / 2 : 0);
      std::printf("statname: %s, round %d: p50 %.0f us, p99 %.0f us\n",
                  logged ? "with proofs" : "without a log", round,
                  micros[micros.size() / 2], micros[micros.size() * 99 / 100]);
      std::fflush(stdout);
    }
  }
}

void Million() {
  auto storage = std::make_shared<tlog::MemoryLogStorage>();
  tlog::SequencerOptions options;
  options.origin = "bench/log";
  options.key =
      std::make_shared<Ed25519PrivateKey>(Ed25519PrivateKey::Generate());
  int names = 0;
  options.unique_name = [&names] { return absl::StrCat(++names); };
  const std::unique_ptr<tlog::LogSequencer> sequencer =
      tlog::LogSequencer::Create(storage, options).value();
  constexpr uint64_t kSize = 1000000;
  const absl::Time start = absl::Now();
  tlog::AppendedBatch last;
  for (uint64_t first = 0; first < kSize; first += 4096) {
    std::vector<std::string> entries;
    for (uint64_t i = first; i < std::min(kSize, first + 4096); ++i) {
      entries.push_back(absl::StrCat("statement ", i, std::string(280, 's')));
    }
    last = sequencer->Append(entries).value();
  }
  std::printf("million: 1,000,000 entries appended in memory in %.1f s\n",
              absl::ToDoubleSeconds(absl::Now() - start));
  const tlog::NoteKey key =
      tlog::NoteKey::Make("bench/log", tlog::NoteKeyType::kEd25519,
                          options.key->public_key())
          .value();
  const tlog::LogProver prover(storage);
  std::mt19937_64 random(2);
  constexpr int kProofs = 2000;
  size_t hashes = 0;
  absl::Duration prove, verify, open;
  for (int i = 0; i < kProofs; ++i) {
    const uint64_t index = random() % kSize;
    const std::string entry =
        absl::StrCat("statement ", index, std::string(280, 's'));
    absl::Time t = absl::Now();
    const std::vector<tlog::LogHash> proof =
        prover.Inclusion(index, entry, last.checkpoint).value();
    prove += absl::Now() - t;
    hashes += proof.size();
    t = absl::Now();
    const tlog::SignedCheckpoint opened =
        tlog::OpenCheckpoint(last.note, key).value();
    open += absl::Now() - t;
    t = absl::Now();
    tlog::VerifyInclusion(index, kSize, tlog::LeafHash(entry), proof,
                          opened.checkpoint.root)
        .IgnoreError();
    verify += absl::Now() - t;
  }
  std::printf(
      "million: inclusion proof %.1f hashes (%.0f bytes) on average; server "
      "reads and checks one in %.0f us (tiles in memory); client checks the "
      "checkpoint's signature in %.0f us and the proof in %.1f us\n",
      double(hashes) / kProofs, 32.0 * hashes / kProofs,
      absl::ToDoubleMicroseconds(prove) / kProofs,
      absl::ToDoubleMicroseconds(open) / kProofs,
      absl::ToDoubleMicroseconds(verify) / kProofs);
  size_t consistency_hashes = 0;
  absl::Duration consistency_verify;
  for (int i = 0; i < kProofs; ++i) {
    const uint64_t old_size = 1 + random() % (kSize - 1);
    const std::vector<tlog::LogHash> proof =
        prover.Consistency(old_size, kSize, last.checkpoint).value();
    consistency_hashes += proof.size();
    tlog::TileHashReader reader(kSize, [&](const tlog::TileId& id) {
      return storage->Read(id.Path());
    });
    const tlog::LogHash old_root = tlog::TreeHash(old_size, reader).value();
    const absl::Time t = absl::Now();
    tlog::VerifyConsistency(old_size, kSize, old_root, last.checkpoint.root,
                            proof)
        .IgnoreError();
    consistency_verify += absl::Now() - t;
  }
  std::printf(
      "million: consistency proof from a random size %.1f hashes (%.0f bytes) "
      "on average; client checks one in %.1f us\n",
      double(consistency_hashes) / kProofs, 32.0 * consistency_hashes / kProofs,
      absl::ToDoubleMicroseconds(consistency_verify) / kProofs);
}

// Appends on the radosgw with_ceph.sh started, each run under a prefix of
// its own. The log alone's 4,096 a second is its batch (4,096 statements)
// per interval (1 s).
void Ceph() {
  if (!server::HaveTestRadosgw()) {
    std::fprintf(stderr, "ceph: run under tests/bench/tlog_ceph_bench.sh\n");
    std::exit(1);
  }
  const std::string prefix = absl::StrCat("tlogbench-", getpid(), "-");
  server::S3StoreOptions store_options;
  store_options.client = server::TestRadosgwOptions();
  store_options.prefix = prefix + "log/";
  LogAppends(server::S3Store::Open(store_options).value(), " on radosgw");
  // A blob per name, as releases have: an S3 Stat (which SetName makes)
  // lists the names of its blob, one GET each, so names sharing one blob
  // cost in proportion to their number.
  const Releases releases = BlobPerName(600, "bench/8/", 2000);
  const std::vector<std::string>& blobs = releases.blobs;
  const std::vector<std::string>& digests = releases.digests;
  const std::vector<std::string>& statements = releases.statements;
  for (int round = 1; round <= kRounds; ++round) {
    server::ServerOptions options = LoggedOptions(
        absl::StrCat("/tmp/tlogbench-", getpid(), "-", round), true);
    options.store_kind = server::StoreLocation::Kind::kS3;
    options.s3.client = server::TestRadosgwOptions();
    options.s3.prefix = absl::StrCat(prefix, "setname-", round, "/");
    auto server = testing::TestServer::Start(options);
    for (const std::string& blob : blobs) {
      testing::PutBlob(server->stub(), blob).IgnoreError();
    }
    std::vector<std::unique_ptr<v1::Verity::Stub>> stubs =
        Connections(*server, 8);
    std::vector<v1::Verity::Stub*> raw;
    for (auto& stub : stubs) raw.push_back(stub.get());
    std::printf(
        "appends: SetName end to end on radosgw, with the log, interval 1s, 8 "
        "connections, round %d: %.0f names/s\n",
        round, SetNameRate(raw, "bench/8/", statements, digests, 1024));
    std::fflush(stdout);
  }
}

}  // namespace
}  // namespace verity

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr,
                 "usage: tlog_bench DIR "
                 "[appends|setname|statname|million|ceph]\n");
    return 1;
  }
  const std::string dir = argv[1];
  const std::string only = argc == 3 ? argv[2] : "";
  if (only.empty() || only == "appends") verity::Appends(dir);
  if (only.empty() || only == "setname") verity::SetNames(dir);
  if (only.empty() || only == "statname") verity::StatName(dir);
  if (only.empty() || only == "million") verity::Million();
  if (only == "ceph") verity::Ceph();
  return 0;
}
