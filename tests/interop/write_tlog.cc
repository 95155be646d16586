// Writes a transparency log for tests/tlog_interop_test.sh to check with an
// independent implementation: N statements appended by 8 threads at once
// (so that checkpoints cover batches of several) through verityd's own
// StatementLog, on a file store at DIR, signed with the log key KEY.pem
// under ORIGIN. One process: the 270 `verity sign --store` processes this
// replaces cost about a minute under ASan, and exercised nothing the format
// check needs.
//
// Usage: write_tlog KEY.pem ORIGIN DIR N

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/time/time.h"
#include "lib/base/file_util.h"
#include "lib/trust/ed25519_key.h"
#include "server/log/statement_log.h"
#include "server/store/file/file_store.h"

namespace {

constexpr int kThreads = 8;

int Fail(const std::string& why) {
  std::fprintf(stderr, "write_tlog: %s\n", why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace verity;
  int n = 0;
  if (argc != 5 || !absl::SimpleAtoi(argv[4], &n) || n <= 0) {
    return Fail("usage: write_tlog KEY.pem ORIGIN DIR N");
  }
  absl::StatusOr<std::string> pem = ReadSmallFile(argv[1], 1 << 16);
  absl::StatusOr<Ed25519PrivateKey> key =
      pem.ok() ? Ed25519PrivateKey::ParsePem(*pem)
               : absl::StatusOr<Ed25519PrivateKey>(pem.status());
  if (!key.ok()) return Fail(std::string(key.status().message()));
  server::FileStoreOptions store_options;
  store_options.root = argv[3];
  absl::StatusOr<std::unique_ptr<server::FileStore>> store =
      server::FileStore::Open(store_options);
  if (!store.ok()) return Fail(std::string(store.status().message()));
  server::StatementLogOptions options;
  options.origin = argv[2];
  options.key = std::make_shared<Ed25519PrivateKey>(*std::move(key));
  options.checkpoint_interval = absl::Milliseconds(5);
  absl::StatusOr<std::unique_ptr<server::StatementLog>> log =
      server::StatementLog::Start(*std::move(store), options);
  if (!log.ok()) return Fail(std::string(log.status().message()));

  absl::BlockingCounter sequenced(n);
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < n; i += kThreads) {
        const absl::Status queued =
            (*log)->Append(absl::StrCat("statement ", i, " of the interop log"),
                           [&](absl::StatusOr<server::LogReceipt> receipt) {
                             if (!receipt.ok()) ++failed;
                             sequenced.DecrementCount();
                           });
        if (!queued.ok()) {
          ++failed;
          sequenced.DecrementCount();
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  sequenced.Wait();
  (*log)->Stop();
  if (failed > 0) return Fail(absl::StrCat(failed.load(), " appends failed"));
  std::printf("wrote %d statements\n", n);
  return 0;
}
