// Implements the read stress: the blobs, the readers, and the checks.

#include "tests/testing/read_stress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "lib/testing/test_blob.h"
#include "tests/testing/test_server.h"
#include "verity/client.h"

namespace verity::testing {
namespace {

constexpr uint64_t kSlabBytes = uint64_t{4} << 20;
constexpr uint64_t kBlockBytes = 4096;
constexpr size_t kQuoted = 10;  // findings quoted in full in a failure

// What many threads found: how many, and the first kQuoted in full.
class Findings {
 public:
  void Add(std::string what) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    ++count_;
    if (quoted_.size() < kQuoted) quoted_.push_back(std::move(what));
  }
  int count() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return count_;
  }
  std::string Summary() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return absl::StrCat(count_, " in all; the first:\n  ",
                        absl::StrJoin(quoted_, "\n  "));
  }

 private:
  mutable absl::Mutex mu_;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> quoted_ ABSL_GUARDED_BY(mu_);
};

// A blob as put. Plain value.
struct Blob {
  std::string data;
  sdk::Digest digest;
};

// One read. Plain value.
struct Range {
  int blob = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
};

Range Draw(std::mt19937_64& random, const ReadStressOptions& stress) {
  Range range;
  range.blob = std::uniform_int_distribution<int>(0, stress.blobs - 1)(random);
  range.offset =
      std::uniform_int_distribution<uint64_t>(0, stress.blob_bytes - 1)(random);
  const double log_length = std::uniform_real_distribution<double>(
      std::log(kBlockBytes), std::log(stress.max_read_bytes))(random);
  range.length = std::min<uint64_t>(std::llround(std::exp(log_length)),
                                    stress.blob_bytes - range.offset);
  return range;
}

absl::StatusOr<std::unique_ptr<sdk::Client>> NewClient(
    const std::string& target) {
  sdk::ClientOptions options;
  options.target = target;
  // One attempt: an error from the server is a failure here, which a retry
  // would hide.
  options.retry.max_attempts = 1;
  return sdk::Client::Create(options);
}

// Every byte of `data`, from memory.
sdk::ByteSource SourceOf(absl::string_view data) {
  return [data, at = size_t{0}](
             absl::Span<uint8_t> buffer) mutable -> absl::StatusOr<size_t> {
    const size_t n = std::min(buffer.size(), data.size() - at);
    std::copy_n(data.data() + at, n, buffer.data());
    at += n;
    return n;
  };
}

// Puts the blobs, each with the digest it must get; empty after a failure.
std::vector<Blob> PutBlobs(sdk::Client& client,
                           const ReadStressOptions& stress) {
  std::vector<Blob> blobs;
  for (int i = 0; i < stress.blobs; ++i) {
    std::string data =
        MakeData(stress.blob_bytes, uint64_t{stress.seed} * 1000 + i);
    absl::StatusOr<sdk::Digest> digest = sdk::Digest::Parse(DigestOf(data));
    if (!digest.ok()) {
      ADD_FAILURE() << "digest of blob " << i << ": " << digest.status();
      return {};
    }
    sdk::PutOptions options;
    options.expected_digest = *digest;
    absl::StatusOr<sdk::PutResult> put =
        client.PutStream(SourceOf(data), options);
    if (!put.ok()) {
      ADD_FAILURE() << "put of blob " << i << ": " << put.status();
      return {};
    }
    blobs.push_back({std::move(data), *std::move(digest)});
  }
  return blobs;
}

size_t FirstDifference(absl::string_view a, absl::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  return std::mismatch(a.begin(), a.begin() + n, b.begin()).first - a.begin();
}

void CheckRead(sdk::Client& client, const Blob& blob, const Range& range,
               absl::string_view who, Findings* failures) {
  const std::string what =
      absl::StrCat(who, ": blob ", range.blob, " (", blob.digest.ToString(),
                   ") bytes [", range.offset, ", +", range.length, ")");
  absl::StatusOr<std::string> got =
      client.ReadRange(blob.digest, range.offset, range.length);
  if (!got.ok()) {
    failures->Add(absl::StrCat(what, " failed: ", got.status().ToString()));
    return;
  }
  const absl::string_view want =
      absl::string_view(blob.data).substr(range.offset, range.length);
  if (*got == want) return;
  failures->Add(absl::StrCat(what, " returned other bytes: ", got->size(),
                             " bytes, the first wrong at blob offset ",
                             range.offset + FirstDifference(*got, want)));
}

// One reader: its own client (connection) and its own ranges.
void Read(int reader, int reads, const std::string& target,
          const std::vector<Blob>& blobs, const ReadStressOptions& stress,
          Findings* failures) {
  absl::StatusOr<std::unique_ptr<sdk::Client>> client = NewClient(target);
  if (!client.ok()) {
    failures->Add(
        absl::StrCat("reader ", reader, ": ", client.status().ToString()));
    return;
  }
  std::mt19937_64 random((uint64_t{stress.seed} << 8) + reader);
  for (int i = 0; i < reads; ++i) {
    const Range range = Draw(random, stress);
    CheckRead(**client, blobs[range.blob], range,
              absl::StrCat("reader ", reader, " read ", i), failures);
  }
}

void RunReaders(const std::string& target, const std::vector<Blob>& blobs,
                const ReadStressOptions& stress, Findings* failures) {
  std::vector<std::thread> readers;
  for (int r = 0; r < stress.readers; ++r) {
    const int reads = stress.reads / stress.readers +
                      (r < stress.reads % stress.readers ? 1 : 0);
    readers.emplace_back(
        [&, r, reads] { Read(r, reads, target, blobs, stress, failures); });
  }
  for (std::thread& reader : readers) reader.join();
}

}  // namespace

uint32_t ReadStressSeed() {
  uint32_t seed = 0;
  const char* given = std::getenv("READ_STRESS_SEED");
  if (given == nullptr || !absl::SimpleAtoi(given, &seed)) {
    seed = static_cast<uint32_t>(absl::ToUnixMicros(absl::Now()));
  }
  std::printf(
      "read stress: seed %u (--test_env=READ_STRESS_SEED=%u repeats the "
      "blobs and ranges)\n",
      seed, seed);
  std::fflush(stdout);
  return seed;
}

server::ServerOptions UnderCachePressure(server::ServerOptions options,
                                         int slabs) {
  options.remote_cache.slabs.slab_bytes = kSlabBytes;
  options.remote_cache.slabs.memory_bytes = slabs * kSlabBytes;
  options.remote_cache.disk.dir.clear();
  options.read_ahead_bytes = kSlabBytes;
  return options;
}

void RunReadStress(server::ServerOptions options,
                   const ReadStressOptions& stress) {
  // Shared with the server, which may log until it is gone.
  auto corruption = std::make_shared<Findings>();
  options.s3.log = [corruption](absl::string_view line) {
    std::fprintf(stderr, "verityd store log: %.*s\n",
                 static_cast<int>(line.size()), line.data());
    if (absl::StrContains(line, "corruption detected")) {
      corruption->Add(std::string(line));
    }
  };
  std::unique_ptr<TestServer> server = TestServer::Start(options);
  const std::string target = server->verityd().address();
  absl::StatusOr<std::unique_ptr<sdk::Client>> client = NewClient(target);
  ASSERT_TRUE(client.ok()) << client.status();
  const absl::Time start = absl::Now();
  const std::vector<Blob> blobs = PutBlobs(**client, stress);
  ASSERT_EQ(blobs.size(), static_cast<size_t>(stress.blobs));
  const absl::Time put = absl::Now();
  Findings failures;
  RunReaders(target, blobs, stress, &failures);
  std::printf(
      "read stress: put %d x %llu bytes in %s, %d reads by %d "
      "readers in %s\n",
      stress.blobs, static_cast<unsigned long long>(stress.blob_bytes),
      absl::FormatDuration(put - start).c_str(), stress.reads, stress.readers,
      absl::FormatDuration(absl::Now() - put).c_str());
  EXPECT_EQ(failures.count(), 0)
      << "reads that failed or returned other bytes (seed " << stress.seed
      << "): " << failures.Summary();
  EXPECT_EQ(corruption->count(), 0)
      << "the server logged corruption of blobs that are intact (seed "
      << stress.seed << "): " << corruption->Summary();
}

}  // namespace verity::testing
