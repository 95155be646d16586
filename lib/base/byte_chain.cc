// Implements ByteChain: offsets are found by walking the pieces, which are few
// (a message's slices), so no index is kept.

#include "lib/base/byte_chain.h"

#include <algorithm>
#include <cassert>

namespace verity {

ByteChain::ByteChain(absl::Span<const Piece> pieces) : pieces_(pieces) {
  for (const Piece& piece : pieces) size_ += piece.size();
}

ByteChain ByteChain::Sub(size_t offset, size_t length) const {
  assert(offset <= size_ && length <= size_ - offset);
  size_t skip = skip_ + offset;
  size_t first = 0;
  // Skips whole pieces before the start, so that Sub() of a Sub() does not
  // walk them again.
  while (first < pieces_.size() && skip >= pieces_[first].size()) {
    skip -= pieces_[first].size();
    ++first;
  }
  return ByteChain(pieces_.subspan(first), skip, length);
}

size_t ByteChain::CopyOut(size_t offset, absl::Span<uint8_t> out) const {
  size_t copied = 0;
  Sub(offset, std::min(out.size(), size_ - offset))
      .ForEachPiece([&](Piece piece) {
        std::copy(piece.begin(), piece.end(), out.begin() + copied);
        copied += piece.size();
        return true;
      });
  return copied;
}

std::string ByteChain::ToString() const {
  std::string out;
  out.reserve(size_);
  ForEachPiece([&out](Piece piece) {
    out.append(reinterpret_cast<const char*>(piece.data()), piece.size());
    return true;
  });
  return out;
}

ByteChain::Piece ByteChain::Reader::Peek(size_t max) const {
  if (left_ == 0) return {};
  return pieces_[0].subspan(offset_, std::min(max, left_));
}

void ByteChain::Reader::Skip(size_t n) {
  assert(n <= left_);
  left_ -= n;
  offset_ += n;
  Settle();
}

void ByteChain::Reader::Read(absl::Span<uint8_t> out) {
  assert(out.size() <= left_);
  while (!out.empty()) {
    const Piece piece = Peek(out.size());
    std::copy(piece.begin(), piece.end(), out.begin());
    out.remove_prefix(piece.size());
    Skip(piece.size());
  }
}

void ByteChain::Reader::Settle() {
  while (!pieces_.empty() && offset_ >= pieces_[0].size() && left_ > 0) {
    offset_ -= pieces_[0].size();
    pieces_.remove_prefix(1);
  }
}

}  // namespace verity
