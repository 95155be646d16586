// Implements dm-verity FEC: the parity matrix from the RS generator
// polynomial, then ISA-L's table-driven encoding of each group's blocks; a
// repair solves for the erased blocks from as many parity rows (ISA-L's
// gf_invert_matrix of that small system) and applies the inverse the same
// way.

#include "lib/fec/dm_verity_fec.h"

#include <isa-l/erasure_code.h>

#include <algorithm>
#include <array>
#include <utility>

#include "absl/base/call_once.h"
#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"

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

// ISA-L's AVX2 and AVX-512 kernels return with the upper halves of the
// vector registers dirty (no vzeroupper). Code after them that uses legacy
// SSE encodings, as the SHA-NI hashing does, then pays for that state on
// every instruction (docs/tuning.md). vzeroupper clears it; only on CPUs
// with AVX, where it exists.
void ClearUpperVectorState() {
  static const bool avx = __builtin_cpu_supports("avx");
  if (avx) asm volatile("vzeroupper" ::: "memory");
}

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

absl::StatusOr<const FecCodec*> FecCodec::Create(int roots) {
  RETURN_IF_ERROR(ValidateFecRoots(roots));
  struct Slot {
    absl::once_flag built;
    const FecCodec* codec = nullptr;
  };
  static Slot* const slots = new Slot[kMaxFecRoots + 1];
  Slot& slot = slots[roots];
  absl::call_once(slot.built, [&] { slot.codec = new FecCodec(roots); });
  return slot.codec;
}

FecCodec::FecCodec(int roots)
    : roots_(roots),
      matrix_(ParityMatrix(roots)),
      tables_(static_cast<size_t>(32) * k() * roots) {
  ec_init_tables(k(), roots_, matrix_.data(), tables_.data());
}

void FecCodec::EncodeGroup(absl::Span<const uint8_t* const> blocks,
                           size_t block_size, absl::Span<uint8_t> out,
                           std::vector<uint8_t>& scratch) const {
  // A zero block, then the parity rows.
  scratch.resize(block_size * (1 + roots_));
  std::fill_n(scratch.begin(), block_size, 0);
  std::vector<uint8_t*> data(k());
  for (int j = 0; j < k(); ++j) {
    // ISA-L only reads the sources.
    data[j] =
        const_cast<uint8_t*>(blocks[j] != nullptr ? blocks[j] : scratch.data());
  }
  uint8_t* const parity = scratch.data() + block_size;
  std::vector<uint8_t*> coding(roots_);
  for (int t = 0; t < roots_; ++t) coding[t] = parity + t * block_size;
  ec_encode_data(static_cast<int>(block_size), k(), roots_,
                 const_cast<uint8_t*>(tables_.data()), data.data(),
                 coding.data());
  ClearUpperVectorState();
  Interleave(parity, block_size, out);
}

void FecCodec::AddBlock(int j, const uint8_t* block, size_t block_size,
                        absl::Span<uint8_t* const> rows) const {
  // ISA-L only reads the source and the tables.
  ec_encode_data_update(static_cast<int>(block_size), k(), roots_, j,
                        const_cast<uint8_t*>(tables_.data()),
                        const_cast<uint8_t*>(block),
                        const_cast<uint8_t**>(rows.data()));
  ClearUpperVectorState();
}

void FecCodec::Interleave(const uint8_t* rows, size_t block_size,
                          absl::Span<uint8_t> out) const {
  for (size_t o = 0; o < block_size; ++o) {
    for (int t = 0; t < roots_; ++t) {
      out[o * roots_ + t] = rows[t * block_size + o];
    }
  }
}

absl::Status FecCodec::RepairGroup(absl::Span<const uint8_t* const> blocks,
                                   absl::Span<const int> erased,
                                   absl::Span<const uint8_t> parity,
                                   size_t block_size,
                                   absl::Span<uint8_t* const> rebuilt) const {
  const int n = k();
  const int e = static_cast<int>(erased.size());
  if (e > roots_) {
    return absl::InvalidArgumentError(
        absl::StrCat(e, " bad blocks in one group; ", roots_,
                     " roots rebuild at most ", roots_));
  }
  std::vector<bool> is_erased(n, false);
  for (int j : erased) {
    if (j < 0 || j >= n || is_erased[j]) {
      return absl::InvalidArgumentError(absl::StrCat("bad erasure index ", j));
    }
    is_erased[j] = true;
  }
  if (e == 0) return absl::OkStatus();
  // Parity row t is the sum over members j of P[t][j] · block j. With the
  // erased blocks taken as zero, the first e rows give s_t = parity_t -
  // (that sum) = the sum over erased j of P[t][j] · block j: e equations in e
  // unknowns, whose matrix, a square submatrix of a systematic MDS code's
  // parity matrix, is invertible. So: one encoding pass over the survivors,
  // and an e × e inversion rather than an n × n one.
  std::vector<uint8_t> zeros(block_size, 0);
  std::vector<uint8_t*> sources(n);
  for (int j = 0; j < n; ++j) {
    sources[j] = const_cast<uint8_t*>(
        is_erased[j] || blocks[j] == nullptr ? zeros.data() : blocks[j]);
  }
  std::vector<uint8_t> syndromes(static_cast<size_t>(e) * block_size);
  std::vector<uint8_t*> rows(e);
  for (int t = 0; t < e; ++t) rows[t] = &syndromes[t * block_size];
  // The expanded tables of the first e parity rows are a prefix of tables_.
  ec_encode_data(static_cast<int>(block_size), n, e,
                 const_cast<uint8_t*>(tables_.data()), sources.data(),
                 rows.data());
  ClearUpperVectorState();
  for (int t = 0; t < e; ++t) {
    for (size_t o = 0; o < block_size; ++o) {
      rows[t][o] ^= parity[o * roots_ + t];
    }
  }
  std::vector<uint8_t> system(static_cast<size_t>(e) * e);
  for (int t = 0; t < e; ++t) {
    for (int i = 0; i < e; ++i) system[t * e + i] = matrix_[t * n + erased[i]];
  }
  std::vector<uint8_t> inverse(static_cast<size_t>(e) * e);
  if (gf_invert_matrix(system.data(), inverse.data(), e) != 0) {
    return absl::InternalError("the RS decoding matrix is singular");
  }
  std::vector<uint8_t> decode_tables(static_cast<size_t>(32) * e * e);
  ec_init_tables(e, e, inverse.data(), decode_tables.data());
  std::vector<uint8_t*> out(rebuilt.begin(), rebuilt.end());
  ec_encode_data(static_cast<int>(block_size), e, e, decode_tables.data(),
                 rows.data(), out.data());
  ClearUpperVectorState();
  return absl::OkStatus();
}

absl::StatusOr<FecStreamEncoder> FecStreamEncoder::Create(int roots,
                                                          uint32_t block_size,
                                                          uint64_t blocks) {
  ASSIGN_OR_RETURN(const FecCodec* const codec, FecCodec::Create(roots));
  if (blocks == 0 || block_size == 0) {
    return absl::InvalidArgumentError("FEC over no block");
  }
  return FecStreamEncoder(codec, block_size, blocks);
}

FecStreamEncoder::FecStreamEncoder(const FecCodec* codec, uint32_t block_size,
                                   uint64_t blocks)
    : codec_(codec),
      block_size_(block_size),
      blocks_(blocks),
      rounds_(FecRounds(blocks, codec_->roots())),
      parity_(FecSize(blocks, codec_->roots(), block_size), 0) {
  partial_.reserve(block_size);
}

absl::Status FecStreamEncoder::Update(absl::Span<const uint8_t> bytes) {
  if (!partial_.empty()) {
    const size_t take = std::min(bytes.size(), block_size_ - partial_.size());
    partial_.insert(partial_.end(), bytes.begin(), bytes.begin() + take);
    bytes.remove_prefix(take);
    if (partial_.size() < block_size_) return absl::OkStatus();
    RETURN_IF_ERROR(AddBlock(partial_.data()));
    partial_.clear();
  }
  for (; bytes.size() >= block_size_; bytes.remove_prefix(block_size_)) {
    RETURN_IF_ERROR(AddBlock(bytes.data()));
  }
  if (!bytes.empty() && next_ >= blocks_) {
    return absl::InvalidArgumentError("FEC input past its blocks");
  }
  partial_.assign(bytes.begin(), bytes.end());
  return absl::OkStatus();
}

absl::Status FecStreamEncoder::PadBlock() {
  if (partial_.empty()) return absl::OkStatus();
  partial_.resize(block_size_, 0);
  RETURN_IF_ERROR(AddBlock(partial_.data()));
  partial_.clear();
  return absl::OkStatus();
}

absl::Status FecStreamEncoder::AddBlock(const uint8_t* block) {
  if (next_ >= blocks_) {
    return absl::InvalidArgumentError("FEC input past its blocks");
  }
  // Block p is member p / rounds of group p % rounds.
  const uint64_t group = next_ % rounds_;
  const int j = static_cast<int>(next_ / rounds_);
  const size_t group_bytes = size_t{block_size_} * codec_->roots();
  uint8_t* const first = &parity_[group * group_bytes];
  std::array<uint8_t*, kMaxFecRoots> rows;
  for (int t = 0; t < codec_->roots(); ++t) rows[t] = first + t * block_size_;
  codec_->AddBlock(j, block, block_size_,
                   absl::MakeSpan(rows.data(), codec_->roots()));
  ++next_;
  return absl::OkStatus();
}

absl::StatusOr<std::string> FecStreamEncoder::Finish() const {
  if (next_ != blocks_ || !partial_.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("FEC over ", blocks_, " blocks was given ", next_,
                     partial_.empty() ? "" : " and a part of one"));
  }
  std::string fec(parity_.size(), '\0');
  const size_t group_bytes = size_t{block_size_} * codec_->roots();
  for (uint64_t r = 0; r < rounds_; ++r) {
    codec_->Interleave(
        &parity_[r * group_bytes], block_size_,
        absl::MakeSpan(reinterpret_cast<uint8_t*>(fec.data()) + r * group_bytes,
                       group_bytes));
  }
  return fec;
}

absl::Status EncodeFec(int roots, uint32_t block_size, uint64_t blocks,
                       const FecReadFn& read, const FecWriteFn& write) {
  ASSIGN_OR_RETURN(const FecCodec* const shared, FecCodec::Create(roots));
  const FecCodec& codec = *shared;
  const int k = codec.k();
  const uint64_t rounds = FecRounds(blocks, roots);
  // Groups per window: k blocks of each fill about kFecWindowBytes.
  const uint64_t window = std::max<uint64_t>(
      1,
      std::min<uint64_t>(rounds, kFecWindowBytes / (size_t{block_size} * k)));
  // Row j holds block j of each group of the window, in group order. Rows
  // are a cache line more than a power of two apart, so that a group's k
  // blocks, read together by the encoder, do not all fall in the same cache
  // sets.
  const size_t row_bytes = window * block_size + 64;
  std::vector<uint8_t> rows(k * row_bytes);
  std::vector<uint8_t> parity(window * block_size * roots);
  std::vector<const uint8_t*> group(k);
  std::vector<uint8_t> scratch;
  for (uint64_t r0 = 0; r0 < rounds; r0 += window) {
    const uint64_t groups = std::min(window, rounds - r0);
    // Blocks past the end are zero: row j is present for groups whose block
    // r + j * rounds exists.
    std::vector<uint64_t> present(k, 0);
    for (int j = 0; j < k; ++j) {
      const uint64_t first = r0 + j * rounds;
      if (first >= blocks) break;
      present[j] = std::min(groups, blocks - first);
      RETURN_IF_ERROR(
          read(first, present[j],
               absl::MakeSpan(&rows[j * row_bytes], present[j] * block_size)));
    }
    for (uint64_t g = 0; g < groups; ++g) {
      for (int j = 0; j < k; ++j) {
        group[j] =
            g < present[j] ? &rows[j * row_bytes + g * block_size] : nullptr;
      }
      codec.EncodeGroup(group, block_size,
                        absl::MakeSpan(&parity[g * block_size * roots],
                                       size_t{block_size} * roots),
                        scratch);
    }
    RETURN_IF_ERROR(
        write(absl::MakeConstSpan(parity.data(), groups * block_size * roots)));
  }
  return absl::OkStatus();
}

}  // namespace verity
