// Cost of checking a signed name statement, what a client with trusted keys
// adds to a fetch by name before any data moves: ParseNameStatement, then
// CheckNameStatement (Ed25519 verification per trusted signer), for 1 and 3
// signers; and, for scale, what signing one costs a publisher.
// Run: bazel run -c opt //tests/bench:name_statement_bench

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "lib/trust/ed25519_key.h"
#include "lib/trust/name_statement.h"

namespace verity {
namespace {

struct Fixture {
  explicit Fixture(int signers) {
    for (int i = 0; i < signers; ++i) {
      keys.push_back(Ed25519PrivateKey::Generate());
      public_keys.push_back(keys.back().public_key());
    }
    for (const Ed25519PrivateKey& key : keys) key_pointers.push_back(&key);
    claim.name = "models/resnet50/latest";
    claim.digest.digest = std::string(32, 'd');
    claim.version = 42;
    claim.issued = absl::Now();
    claim.expires = claim.issued + absl::Hours(24 * 30);
    encoded = SignNameStatement(claim, key_pointers).value();
  }

  std::vector<Ed25519PrivateKey> keys;
  std::vector<const Ed25519PrivateKey*> key_pointers;
  std::vector<Ed25519PublicKey> public_keys;
  NameClaim claim;
  std::string encoded;
};

void BM_ParseAndCheck(benchmark::State& state) {
  const Fixture fixture(static_cast<int>(state.range(0)));
  const TrustedKeys trusted =
      TrustedKeys::Create(fixture.public_keys, static_cast<int>(state.range(0)))
          .value();
  const absl::Time now = absl::Now();
  for (auto _ : state) {
    absl::StatusOr<NameStatement> statement =
        ParseNameStatement(fixture.encoded);
    absl::Status checked =
        CheckNameStatement(*statement, trusted, fixture.claim.name, now);
    if (!checked.ok()) state.SkipWithError("refused");
    benchmark::DoNotOptimize(checked);
  }
}
BENCHMARK(BM_ParseAndCheck)->Arg(1)->Arg(3)->Unit(benchmark::kMicrosecond);

void BM_Sign(benchmark::State& state) {
  const Fixture fixture(1);
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        SignNameStatement(fixture.claim, fixture.key_pointers));
  }
}
BENCHMARK(BM_Sign)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace verity

BENCHMARK_MAIN();
