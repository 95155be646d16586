// Implements BlockHasher.

#include "lib/tree/block_hasher.h"

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

// fs-verity's salt zero-padded to whole compression-function blocks of
// `unit` bytes (none if there is no salt), so that the salted state is a
// clean prefix computed once.
std::string PaddedSalt(absl::string_view salt, size_t unit) {
  std::string padded(salt);
  padded.resize((salt.size() + unit - 1) / unit * unit, '\0');
  return padded;
}

// The SHA-256 state after the whole 64-byte units of `prefix`.
Sha256State Sha256StateAfter(absl::string_view prefix) {
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  Sha256State state;
  std::memcpy(state.h, ctx.h, sizeof(state.h));
  const size_t units = prefix.size() / 64;
  if (units == 0) return state;  // the assembly requires >= 1 block
  SHA256_TransformBlocks(state.h, AsBytes(prefix).data(), units);
  return state;
}

// The SHA-512 state after the whole 128-byte units of `prefix`.
Sha512State Sha512StateAfter(absl::string_view prefix) {
  SHA512_CTX ctx;
  SHA512_Init(&ctx);
  for (size_t i = 0; i + 128 <= prefix.size(); i += 128) {
    SHA512_Transform(&ctx, AsBytes(prefix).data() + i);
  }
  Sha512State state;
  std::memcpy(state.h, ctx.h, sizeof(state.h));
  return state;
}

// What follows a block of `block_size` bytes in the hash's last units:
// `suffix`, 0x80, zeros, and the length in bits of the whole message
// (`prefix_size` + block + suffix), so that `head_size` + block + this is a
// whole number of `unit`-byte units.
std::string Tail(size_t unit, size_t prefix_size, size_t head_size,
                 uint64_t block_size, absl::string_view suffix) {
  const size_t length_bytes = unit / 8;  // 8 for SHA-256, 16 for SHA-512
  const uint64_t message = prefix_size + block_size + suffix.size();
  const size_t used = (head_size + block_size + suffix.size() + 1) % unit;
  const size_t zeros = (unit + unit - length_bytes - used) % unit;
  std::string tail(suffix);
  tail.push_back('\x80');
  tail.append(zeros + length_bytes, '\0');
  const uint64_t bits = message * 8;
  for (int i = 0; i < 8; ++i) {
    tail[tail.size() - 1 - i] = static_cast<char>(bits >> (8 * i));
  }
  return tail;
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
    : BlockHasher(params.hash_algorithm, params.block_size, params.salt,
                  params.format == TreeFormat::kDmVerity
                      ? SaltPlacement::kBefore
                      : SaltPlacement::kFsVerity) {}

BlockHasher::BlockHasher(HashAlgorithm algorithm, uint32_t block_size,
                         absl::string_view salt, SaltPlacement placement)
    : block_size_(block_size),
      algorithm_(algorithm),
      prefix_(placement == SaltPlacement::kFsVerity
                  ? PaddedSalt(salt, HashBlockSize(algorithm))
              : placement == SaltPlacement::kBefore ? std::string(salt)
                                                    : std::string()),
      suffix_(placement == SaltPlacement::kAfter ? std::string(salt)
                                                 : std::string()),
      salted_(algorithm),
      prefix_sha256_(
          Sha256StateAfter(algorithm == HashAlgorithm::kSha256 ? prefix_ : "")),
      prefix_sha512_(Sha512StateAfter(
          algorithm == HashAlgorithm::kSha512 ? prefix_ : "")) {
  salted_.Update(AsBytes(prefix_));
  const size_t unit = HashBlockSize(algorithm_);
  head_ = prefix_.substr(prefix_.size() / unit * unit);
  tail_ = Tail(unit, prefix_.size(), head_.size(), block_size_, suffix_);
}

size_t BlockHasher::Lanes() const {
  if (algorithm_ == HashAlgorithm::kSha256 && Sha256X2Available()) return 2;
  // The SHA-512 lanes take the block where it is, so only a block that
  // starts a unit of the message (no head_).
  if (algorithm_ == HashAlgorithm::kSha512 && Sha512X4Available() &&
      head_.empty()) {
    return 4;
  }
  return 1;
}

void BlockHasher::FinishBlock(Hasher* hasher, uint64_t filled,
                              absl::Span<uint8_t> out) const {
  if (filled < block_size_) UpdateZeros(hasher, block_size_ - filled);
  hasher->Update(AsBytes(suffix_));
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
  Sha256State state_a = prefix_sha256_;
  Sha256State state_b = prefix_sha256_;
  // A head_ shifts the block in the message: its first unit is the head and
  // the block's start, the units after it lie inside the block, and its
  // last head_.size() bytes go before the tail.
  const size_t head = head_.size();
  if (head > 0) {
    uint8_t first_a[64], first_b[64];
    std::memcpy(first_a, head_.data(), head);
    std::memcpy(first_a + head, a, 64 - head);
    std::memcpy(first_b, head_.data(), head);
    std::memcpy(first_b + head, b, 64 - head);
    Sha256CompressX2(&state_a, &state_b, first_a, first_b, 1);
  }
  const size_t inside = head > 0 ? block_size_ / 64 - 1 : block_size_ / 64;
  Sha256CompressX2(&state_a, &state_b, a + (64 - head) % 64,
                   b + (64 - head) % 64, inside);
  if (head == 0) {
    Sha256CompressX2(&state_a, &state_b, AsBytes(tail_).data(),
                     AsBytes(tail_).data(), tail_.size() / 64);
  } else {
    uint8_t last_a[128], last_b[128];  // head < 64, and then tail_ <= 64 + 8
    std::memcpy(last_a, a + block_size_ - head, head);
    std::memcpy(last_a + head, tail_.data(), tail_.size());
    std::memcpy(last_b, b + block_size_ - head, head);
    std::memcpy(last_b + head, tail_.data(), tail_.size());
    Sha256CompressX2(&state_a, &state_b, last_a, last_b,
                     (head + tail_.size()) / 64);
  }
  WriteDigest(state_a.h, digest_a);
  WriteDigest(state_b.h, digest_b);
}

void BlockHasher::HashSha512Blocks(const uint8_t* data, size_t count,
                                   uint8_t* digests) const {
  Sha512State states[4];
  Sha512State* lanes[4];
  const uint8_t* blocks[4];
  for (size_t lane = 0; lane < 4; ++lane) {
    states[lane] = prefix_sha512_;
    lanes[lane] = &states[lane];
    // Lanes past `count` hash the last block again, for nothing.
    blocks[lane] = data + std::min(lane, count - 1) * block_size_;
  }
  Sha512CompressX4(lanes, blocks, block_size_ / 128);
  const uint8_t* const tail = AsBytes(tail_).data();
  const uint8_t* const tails[4] = {tail, tail, tail, tail};
  Sha512CompressX4(lanes, tails, tail_.size() / 128);
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
  if (!head_.empty()) {  // the block is shifted in the message: copied
    std::string blocks(2 * size_t{block_size_}, '\0');
    a.Read(AsMutableBytes(&blocks).first(block_size_));
    b.Read(AsMutableBytes(&blocks).subspan(block_size_));
    const uint8_t* const at = AsBytes(blocks).data();
    HashTwoBlocks(at, at + block_size_, digest_a, digest_b);
    return;
  }
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
  Sha256State state_a = prefix_sha256_;
  Sha256State state_b = prefix_sha256_;
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
  Sha256CompressX2(&state_a, &state_b, AsBytes(tail_).data(),
                   AsBytes(tail_).data(), tail_.size() / 64);
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
