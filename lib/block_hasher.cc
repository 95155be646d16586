// Implements BlockHasher.

#include "lib/block_hasher.h"

#include <openssl/sha.h>

#include <algorithm>
#include <cstring>

namespace verity {
namespace {

void UpdateZeros(Hasher* hasher, uint64_t count) {
  static constexpr uint8_t kZeros[4096] = {};
  while (count > 0) {
    const uint64_t n = std::min<uint64_t>(count, sizeof(kZeros));
    hasher->Update(absl::MakeConstSpan(kZeros, n));
    count -= n;
  }
}

// fs-verity pads the salt to a whole number of compression-function blocks
// so the salted state is a clean prefix that can be computed once.
Hasher SaltedHasher(HashAlgorithm algorithm, absl::string_view salt) {
  Hasher hasher(algorithm);
  if (salt.empty()) return hasher;
  const size_t unit = HashBlockSize(algorithm);
  hasher.Update(AsBytes(salt));
  UpdateZeros(&hasher, (unit - salt.size() % unit) % unit);
  return hasher;
}

// fs-verity's salt zero-padded to whole compression-function blocks of
// `unit` bytes (none if there is no salt).
std::string PaddedSalt(absl::string_view salt, size_t unit) {
  std::string padded(salt);
  padded.resize((salt.size() + unit - 1) / unit * unit, '\0');
  return padded;
}

// The SHA-256 state after fs-verity's padded salt.
Sha256State SaltedSha256State(absl::string_view salt) {
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  Sha256State state;
  std::memcpy(state.h, ctx.h, sizeof(state.h));
  if (salt.empty()) return state;  // the assembly requires >= 1 block
  const std::string padded = PaddedSalt(salt, 64);
  SHA256_TransformBlocks(state.h, AsBytes(padded).data(), padded.size() / 64);
  return state;
}

Sha512State SaltedSha512State(absl::string_view salt) {
  SHA512_CTX ctx;
  SHA512_Init(&ctx);
  const std::string padded = PaddedSalt(salt, 128);
  for (size_t i = 0; i < padded.size(); i += 128) {
    SHA512_Transform(&ctx, AsBytes(padded).data() + i);
  }
  Sha512State state;
  std::memcpy(state.h, ctx.h, sizeof(state.h));
  return state;
}

template <typename Word>
void WriteDigest(const Word (&words)[8], uint8_t* digest) {
  for (Word word : words) {
    for (int shift = 8 * sizeof(Word) - 8; shift >= 0; shift -= 8) {
      *digest++ = static_cast<uint8_t>(word >> shift);
    }
  }
}

}  // namespace

BlockHasher::BlockHasher(const MerkleParams& params)
    : block_size_(params.block_size),
      salted_(SaltedHasher(params.hash_algorithm, params.salt)),
      algorithm_(params.hash_algorithm),
      salted_sha256_(algorithm_ == HashAlgorithm::kSha256
                         ? SaltedSha256State(params.salt)
                         : Sha256State{}),
      salted_sha512_(algorithm_ == HashAlgorithm::kSha512
                         ? SaltedSha512State(params.salt)
                         : Sha512State{}),
      final_padding_{0x80} {
  // The padding block ends with the message length: 64 bits for SHA-256, 128
  // (of which the high 64 are zero here) for SHA-512.
  const size_t unit = HashBlockSize(algorithm_);
  const uint64_t salted_bytes = PaddedSalt(params.salt, unit).size();
  const uint64_t bits = (salted_bytes + block_size_) * 8;
  for (int i = 0; i < 8; ++i) final_padding_[unit - 1 - i] = bits >> (8 * i);
}

size_t BlockHasher::Lanes() const {
  if (algorithm_ == HashAlgorithm::kSha256 && Sha256X2Available()) return 2;
  if (algorithm_ == HashAlgorithm::kSha512 && Sha512X4Available()) return 4;
  return 1;
}

void BlockHasher::FinishBlock(Hasher* hasher, uint64_t filled,
                              absl::Span<uint8_t> out) const {
  if (filled < block_size_) UpdateZeros(hasher, block_size_ - filled);
  hasher->Finish(out);
}

void BlockHasher::HashTwoBlocks(const uint8_t* a, const uint8_t* b,
                                uint8_t* digest_a, uint8_t* digest_b) const {
  if (Lanes() != 2) {  // not SHA-256 with SHA-NI
    HashBlock(absl::MakeConstSpan(a, block_size_),
              absl::MakeSpan(digest_a, digest_size()));
    HashBlock(absl::MakeConstSpan(b, block_size_),
              absl::MakeSpan(digest_b, digest_size()));
    return;
  }
  Sha256State state_a = salted_sha256_;
  Sha256State state_b = salted_sha256_;
  Sha256CompressX2(&state_a, &state_b, a, b, block_size_ / 64);
  Sha256CompressX2(&state_a, &state_b, final_padding_, final_padding_, 1);
  WriteDigest(state_a.h, digest_a);
  WriteDigest(state_b.h, digest_b);
}

void BlockHasher::HashSha512Blocks(const uint8_t* data, size_t count,
                                   uint8_t* digests) const {
  Sha512State states[4];
  Sha512State* lanes[4];
  const uint8_t* blocks[4];
  for (size_t lane = 0; lane < 4; ++lane) {
    states[lane] = salted_sha512_;
    lanes[lane] = &states[lane];
    // Lanes past `count` hash the last block again, for nothing.
    blocks[lane] = data + std::min(lane, count - 1) * block_size_;
  }
  Sha512CompressX4(lanes, blocks, block_size_ / 128);
  const uint8_t* const padding[4] = {final_padding_, final_padding_,
                                     final_padding_, final_padding_};
  Sha512CompressX4(lanes, padding, 1);
  for (size_t lane = 0; lane < count; ++lane) {
    WriteDigest(states[lane].h, digests + 64 * lane);
  }
}

void BlockHasher::HashBlocks(absl::Span<const uint8_t> data,
                             absl::Span<uint8_t> out) const {
  const size_t digest_size = this->digest_size();
  const size_t lanes = Lanes();
  // The four SHA-512 lanes cost about two blocks one at a time, so three
  // whole blocks left over go through them too, but not two.
  const size_t min_blocks = lanes == 4 ? 3 : lanes;
  while (lanes > 1 && data.size() >= min_blocks * block_size_) {
    const size_t n = std::min(lanes, data.size() / block_size_);
    if (lanes == 2) {
      HashTwoBlocks(data.data(), data.data() + block_size_, out.data(),
                    out.data() + digest_size);
    } else {
      HashSha512Blocks(data.data(), n, out.data());
    }
    data.remove_prefix(n * block_size_);
    out.remove_prefix(n * digest_size);
  }
  while (!data.empty()) {  // the blocks left over, the last maybe short
    const size_t n = std::min<size_t>(data.size(), block_size_);
    HashBlock(data.first(n), out.first(digest_size));
    data.remove_prefix(n);
    out.remove_prefix(digest_size);
  }
}

void BlockHasher::HashBlocks(const ByteChain& data,
                             absl::Span<uint8_t> out) const {
  if (Lanes() != 2) {
    HashPieces(data, out);
    return;
  }
  const size_t digest_size = this->digest_size();
  ByteChain::Reader a(data);
  while (a.left() >= 2 * size_t{block_size_}) {
    ByteChain::Reader b = a;
    b.Skip(block_size_);
    HashTwoBlocks(a, b, out.data(), out.data() + digest_size);
    a = b;
    out.remove_prefix(2 * digest_size);
  }
  HashPieces(data.Sub(data.size() - a.left(), a.left()), out);
}

void BlockHasher::HashTwoBlocks(ByteChain::Reader& a, ByteChain::Reader& b,
                                uint8_t* digest_a, uint8_t* digest_b) const {
  // One lane's next run of whole 64-byte units, at most `units`: where they
  // are, or one unit copied to `copy` if the pieces split it.
  const auto next_run = [](ByteChain::Reader& reader, size_t units,
                           uint8_t(&copy)[64], size_t* run) {
    const ByteChain::Piece piece = reader.Peek(units * 64);
    *run = piece.size() / 64;
    if (*run > 0) {
      reader.Skip(*run * 64);
      return piece.data();
    }
    reader.Read(absl::MakeSpan(copy));
    *run = 1;
    return static_cast<const uint8_t*>(copy);
  };
  Sha256State state_a = salted_sha256_;
  Sha256State state_b = salted_sha256_;
  uint8_t copy_a[64], copy_b[64];
  const uint8_t* run_a = nullptr;
  const uint8_t* run_b = nullptr;
  size_t units_a = 0, units_b = 0;  // in the runs
  // Both lanes have as many units left, and the runs are taken from that.
  for (size_t left = block_size_ / 64; left > 0;) {
    if (units_a == 0) run_a = next_run(a, left, copy_a, &units_a);
    if (units_b == 0) run_b = next_run(b, left, copy_b, &units_b);
    const size_t n = std::min(units_a, units_b);
    Sha256CompressX2(&state_a, &state_b, run_a, run_b, n);
    run_a += n * 64;
    run_b += n * 64;
    units_a -= n;
    units_b -= n;
    left -= n;
  }
  Sha256CompressX2(&state_a, &state_b, final_padding_, final_padding_, 1);
  WriteDigest(state_a.h, digest_a);
  WriteDigest(state_b.h, digest_b);
}

void BlockHasher::HashPieces(const ByteChain& data,
                             absl::Span<uint8_t> out) const {
  const size_t digest_size = this->digest_size();
  // A block begun in one piece and continued in the next: `filled` > 0.
  Hasher spanning = salted_;
  size_t filled = 0;
  data.ForEachPiece([&](ByteChain::Piece piece) {
    if (filled > 0) {
      const size_t take = std::min<size_t>(block_size_ - filled, piece.size());
      spanning.Update(piece.first(take));
      filled += take;
      piece.remove_prefix(take);
      if (filled < block_size_) return true;
      FinishBlock(&spanning, filled, out.first(digest_size));
      out.remove_prefix(digest_size);
      filled = 0;
    }
    const size_t whole = piece.size() / block_size_ * block_size_;
    const size_t digests = whole / block_size_ * digest_size;
    HashBlocks(piece.first(whole), out.first(digests));
    out.remove_prefix(digests);
    piece.remove_prefix(whole);
    if (!piece.empty()) {
      spanning = salted_;
      spanning.Update(piece);
      filled = piece.size();
    }
    return true;
  });
  // The last block, short or spanning pieces.
  if (filled > 0) FinishBlock(&spanning, filled, out.first(digest_size));
}

void BlockHasher::HashBlock(absl::Span<const uint8_t> block,
                            absl::Span<uint8_t> out) const {
  block = block.first(std::min<size_t>(block.size(), block_size_));
  Hasher hasher = salted_;
  hasher.Update(block);
  FinishBlock(&hasher, block.size(), out);
}

}  // namespace verity
