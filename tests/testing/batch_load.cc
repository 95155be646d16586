// Implements the batch load: the blobs, the load clients, the fifth client
// and its latencies.

#include "tests/testing/batch_load.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "lib/testing/test_blob.h"
#include "tests/testing/test_server.h"
#include "verity/client.h"

namespace verity::testing {
namespace {

constexpr uint64_t kBlobBytes = 4096;

std::unique_ptr<sdk::Client> NewClient(const std::string& target,
                                       int attempts) {
  sdk::ClientOptions options;
  options.target = target;
  options.retry.max_attempts = attempts;
  absl::StatusOr<std::unique_ptr<sdk::Client>> client =
      sdk::Client::Create(options);
  EXPECT_TRUE(client.ok()) << client.status();
  return client.ok() ? *std::move(client) : nullptr;
}

sdk::ByteSource SourceOf(const std::string& data) {
  return [&data, at = size_t{0}](
             absl::Span<uint8_t> buffer) mutable -> absl::StatusOr<size_t> {
    const size_t n = std::min(buffer.size(), data.size() - at);
    std::copy_n(data.data() + at, n, buffer.data());
    at += n;
    return n;
  };
}

// The digests of `count` blobs of `kBlobBytes`, put 8 at a time; their
// contents in `data`.
std::vector<sdk::Digest> PutBlobs(sdk::Client& client, int count,
                                  std::vector<std::string>* data) {
  data->resize(count);
  std::vector<std::unique_ptr<sdk::Digest>> digests(count);
  std::atomic<int> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = next++; i < count; i = next++) {
        (*data)[i] = MakeData(kBlobBytes, 9000 + i);
        absl::StatusOr<sdk::PutResult> put =
            client.PutStream(SourceOf((*data)[i]), {});
        EXPECT_TRUE(put.ok()) << put.status();
        if (put.ok())
          digests[i] = std::make_unique<sdk::Digest>(put->info.digest);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<sdk::Digest> out;
  for (const auto& d : digests) {
    if (d != nullptr) out.push_back(*d);
  }
  return out;
}

// Digests of nothing stored: what FindMissing answers as missing.
std::vector<sdk::Digest> Absent(int count) {
  std::vector<sdk::Digest> out;
  for (int i = 0; i < count; ++i) {
    out.push_back(*sdk::Digest::Parse(DigestOf(absl::StrCat("absent ", i))));
  }
  return out;
}

struct Latencies {
  std::vector<absl::Duration> stat, read;
  int failures = 0;
  std::string first_failure;
};

std::string Describe(std::vector<absl::Duration> d) {
  if (d.empty()) return "none";
  std::sort(d.begin(), d.end());
  const auto at = [&d](double q) {
    return absl::FormatDuration(
        d[std::min(d.size() - 1, size_t(q * d.size()))]);
  };
  return absl::StrCat(d.size(), " calls, p50 ", at(0.5), ", p99 ", at(0.99),
                      ", worst ", absl::FormatDuration(d.back()));
}

}  // namespace

void RunBatchLoad(server::ServerOptions options, const BatchLoadOptions& load) {
  std::unique_ptr<TestServer> server = TestServer::Start(options);
  const std::string target = server->verityd().address();
  std::unique_ptr<sdk::Client> setup = NewClient(target, 4);
  ASSERT_NE(setup, nullptr);
  std::vector<std::string> data;
  const absl::Time start = absl::Now();
  const std::vector<sdk::Digest> stored = PutBlobs(*setup, load.blobs, &data);
  ASSERT_EQ(stored.size(), static_cast<size_t>(load.blobs));
  std::vector<sdk::Digest> asked = stored;
  for (const sdk::Digest& d : Absent(load.blobs)) asked.push_back(d);
  std::printf("batch load: put %d blobs in %s\n", load.blobs,
              absl::FormatDuration(absl::Now() - start).c_str());

  const absl::Time until = absl::Now() + load.duration;
  std::atomic<int> batches{0}, finds{0}, load_errors{0}, wrong{0};
  std::vector<std::thread> loaders;
  for (int c = 0; c < load.load_clients; ++c) {
    loaders.emplace_back([&] {
      // The SDK's own retries, as any client has them.
      std::unique_ptr<sdk::Client> client = NewClient(target, 4);
      while (absl::Now() < until) {
        absl::StatusOr<std::vector<absl::StatusOr<std::string>>> blobs =
            client->BatchRead(stored, {});
        if (!blobs.ok()) {
          load_errors++;
        } else {
          batches++;
          for (size_t i = 0; i < blobs->size(); ++i) {
            if (!(*blobs)[i].ok()) {
              load_errors++;
            } else if (*(*blobs)[i] != data[i]) {
              wrong++;
            }
          }
        }
        absl::StatusOr<std::vector<sdk::Digest>> missing =
            client->FindMissing(asked);
        missing.ok() ? finds++ : load_errors++;
      }
    });
  }
  Latencies fifth;
  {
    std::unique_ptr<sdk::Client> client = NewClient(target, 1);
    for (int i = 0; absl::Now() < until; ++i) {
      const sdk::Digest& digest = stored[(i * 7919) % stored.size()];
      absl::Time t = absl::Now();
      absl::Status status = client->Stat(digest).status();
      fifth.stat.push_back(absl::Now() - t);
      if (status.ok()) {
        t = absl::Now();
        status = client->ReadRange(digest, 0, kBlobBytes, {}).status();
        fifth.read.push_back(absl::Now() - t);
      }
      if (!status.ok() && fifth.failures++ == 0) {
        fifth.first_failure = status.ToString();
      }
    }
  }
  for (std::thread& t : loaders) t.join();
  std::printf(
      "batch load: %d clients, %d BatchReads of %d and %d FindMissing of %d "
      "in %s, %d load errors (after the SDK's retries)\n"
      "batch load: the fifth client: Stat %s; 4 KiB read %s; %d failed\n",
      load.load_clients, batches.load(), load.blobs, finds.load(),
      2 * load.blobs, absl::FormatDuration(load.duration).c_str(),
      load_errors.load(), Describe(fifth.stat).c_str(),
      Describe(fifth.read).c_str(), fifth.failures);
  std::fflush(stdout);
  EXPECT_EQ(fifth.failures, 0)
      << "the fifth client's calls failed; the first: " << fifth.first_failure;
  EXPECT_EQ(wrong.load(), 0) << "BatchRead returned other bytes";
  EXPECT_GT(batches.load(), 0);
  EXPECT_GT(finds.load(), 0);
}

}  // namespace verity::testing
