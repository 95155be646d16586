// Implements DataHasher.

#include "lib/tree/data_hasher.h"

#include <algorithm>

namespace verity {

DataHasher::DataHasher(const BlockHasher* block_hasher)
    : block_hasher_(*block_hasher), partial_(block_hasher->Begin()) {}

absl::Span<uint8_t> DataHasher::NewDigest() {
  const size_t size = block_hasher_.digest_size();
  digests_.resize(digests_.size() + size);
  return AsMutableBytes(&digests_).last(size);
}

void DataHasher::Update(absl::Span<const uint8_t> data) {
  const uint32_t block_size = block_hasher_.block_size();
  data_size_ += data.size();
  if (partial_size_ > 0) {
    const size_t n = std::min<size_t>(data.size(), block_size - partial_size_);
    partial_.Update(data.first(n));
    partial_size_ += static_cast<uint32_t>(n);  // n < block_size
    data.remove_prefix(n);
    if (partial_size_ < block_size) return;
    block_hasher_.FinishBlock(&partial_, block_size, NewDigest());
    partial_size_ = 0;
  }
  // Whole blocks are hashed straight from the caller's buffer, two at a time
  // where the CPU allows.
  if (const size_t whole = data.size() / block_size; whole > 0) {
    const size_t digests_before = digests_.size();
    digests_.resize(digests_before + whole * block_hasher_.digest_size());
    block_hasher_.HashBlocks(data.first(whole * block_size),
                             AsMutableBytes(&digests_).subspan(digests_before));
    data.remove_prefix(whole * block_size);
  }
  if (!data.empty()) {
    partial_ = block_hasher_.Begin();
    partial_.Update(data);
    partial_size_ = static_cast<uint32_t>(data.size());  // < block_size
  }
}

void DataHasher::Finish() {
  if (partial_size_ == 0) return;
  block_hasher_.FinishBlock(&partial_, partial_size_, NewDigest());
  partial_size_ = 0;
}

}  // namespace verity
