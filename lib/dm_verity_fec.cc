// Implements dm-verity FEC: the parity matrix from the RS generator
// polynomial, then ISA-L's table-driven encoding of each group's blocks.

#include "lib/dm_verity_fec.h"

#include <isa-l/erasure_code.h>

#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/status_macros.h"

namespace verity {
namespace {

constexpr int kFieldSize = 255;  // nonzero elements of GF(2^8)
constexpr unsigned kFieldPolynomial = 0x11d;

// GF(2^8) by log and antilog tables.
class Field {
 public:
  Field() {
    unsigned x = 1;
    for (int i = 0; i < kFieldSize; ++i) {
      exp_[i] = exp_[i + kFieldSize] = static_cast<uint8_t>(x);
      log_[x] = i;
      x <<= 1;
      if (x & 0x100) x ^= kFieldPolynomial;
    }
  }
  uint8_t Exp(int i) const { return exp_[i]; }
  uint8_t Mul(uint8_t a, uint8_t b) const {
    return a == 0 || b == 0 ? 0 : exp_[log_[a] + log_[b]];
  }

 private:
  std::array<uint8_t, 2 * kFieldSize> exp_{};
  std::array<int, 256> log_{};
};

// The generator polynomial ∏ (x - α^i), i < roots, highest degree first.
std::vector<uint8_t> Generator(const Field& field, int roots) {
  std::vector<uint8_t> g = {1};
  for (int i = 0; i < roots; ++i) {
    std::vector<uint8_t> next(g.size() + 1, 0);
    for (size_t j = 0; j < g.size(); ++j) {
      next[j] ^= g[j];
      next[j + 1] ^= field.Mul(g[j], field.Exp(i));
    }
    g = std::move(next);
  }
  return g;
}

// The parity matrix, `roots` rows of k: row t, column j is what message
// symbol j (the first the highest degree) adds to parity byte t. Each column
// is the systematic encoding (the remainder of m(x)·x^roots by g(x)) of the
// message that is 1 at j and 0 elsewhere.
std::vector<uint8_t> ParityMatrix(int roots) {
  const Field field;
  const std::vector<uint8_t> g = Generator(field, roots);
  const int k = kFieldSize - roots;
  std::vector<uint8_t> matrix(static_cast<size_t>(roots) * k);
  for (int j = 0; j < k; ++j) {
    std::vector<uint8_t> remainder(roots, 0);
    for (int i = 0; i < k; ++i) {
      const uint8_t feedback = (i == j ? 1 : 0) ^ remainder[0];
      remainder.erase(remainder.begin());
      remainder.push_back(0);
      for (int t = 0; t < roots; ++t) {
        remainder[t] ^= field.Mul(feedback, g[t + 1]);
      }
    }
    for (int t = 0; t < roots; ++t) matrix[t * k + j] = remainder[t];
  }
  return matrix;
}

}  // namespace

absl::Status ValidateFecRoots(int roots) {
  if (roots < kMinFecRoots || roots > kMaxFecRoots) {
    return absl::InvalidArgumentError(
        absl::StrCat("FEC roots must be from ", kMinFecRoots, " to ",
                     kMaxFecRoots, ", not ", roots));
  }
  return absl::OkStatus();
}

uint64_t FecRounds(uint64_t blocks, int roots) {
  const uint64_t k = kFieldSize - roots;
  return blocks / k + (blocks % k != 0);
}

uint64_t FecSize(uint64_t blocks, int roots, uint32_t block_size) {
  return FecRounds(blocks, roots) * block_size * roots;
}

absl::StatusOr<FecEncoder> FecEncoder::Create(int roots) {
  RETURN_IF_ERROR(ValidateFecRoots(roots));
  return FecEncoder(roots);
}

FecEncoder::FecEncoder(int roots)
    : roots_(roots), tables_(static_cast<size_t>(32) * k() * roots) {
  std::vector<uint8_t> matrix = ParityMatrix(roots);
  ec_init_tables(k(), roots_, matrix.data(), tables_.data());
}

void FecEncoder::EncodeGroup(absl::Span<const uint8_t* const> blocks,
                             size_t block_size, absl::Span<uint8_t> out) const {
  const std::vector<uint8_t> zeros(block_size, 0);
  std::vector<uint8_t*> data(k());
  for (int j = 0; j < k(); ++j) {
    // ISA-L only reads the sources.
    data[j] =
        const_cast<uint8_t*>(blocks[j] != nullptr ? blocks[j] : zeros.data());
  }
  std::vector<uint8_t> parity(block_size * roots_);
  std::vector<uint8_t*> coding(roots_);
  for (int t = 0; t < roots_; ++t) coding[t] = &parity[t * block_size];
  ec_encode_data(static_cast<int>(block_size), k(), roots_,
                 const_cast<uint8_t*>(tables_.data()), data.data(),
                 coding.data());
  for (size_t o = 0; o < block_size; ++o) {
    for (int t = 0; t < roots_; ++t) {
      out[o * roots_ + t] = parity[t * block_size + o];
    }
  }
}

absl::StatusOr<std::string> ComputeFec(int roots, uint32_t block_size,
                                       uint64_t blocks,
                                       const FecBlockFn& block_at) {
  ASSIGN_OR_RETURN(const FecEncoder encoder, FecEncoder::Create(roots));
  const uint64_t rounds = FecRounds(blocks, roots);
  std::string fec(FecSize(blocks, roots, block_size), '\0');
  std::vector<const uint8_t*> group(encoder.k());
  for (uint64_t r = 0; r < rounds; ++r) {
    for (int j = 0; j < encoder.k(); ++j) {
      const uint64_t index = r + j * rounds;
      group[j] = nullptr;
      if (index >= blocks) continue;
      ASSIGN_OR_RETURN(const absl::Span<const uint8_t> block, block_at(index));
      group[j] = block.data();
    }
    const size_t group_bytes = size_t{block_size} * roots;
    encoder.EncodeGroup(
        group, block_size,
        absl::MakeSpan(reinterpret_cast<uint8_t*>(fec.data()) + r * group_bytes,
                       group_bytes));
  }
  return fec;
}

}  // namespace verity
