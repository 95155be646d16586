// Bytes that lie back to back in several pieces of memory, such as the slices
// a gRPC message arrived in: a view, so that they can be hashed and handed on
// where they are instead of being joined into one buffer first.

#ifndef VERITYD_LIB_BASE_BYTE_CHAIN_H_
#define VERITYD_LIB_BASE_BYTE_CHAIN_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/types/span.h"

namespace verity {

// A view: the pieces (and the memory they point into) must outlive it.
// Empty pieces are allowed. Copyable and cheap to copy.
class ByteChain {
 public:
  using Piece = absl::Span<const uint8_t>;

  // All the bytes of `pieces`, in order.
  explicit ByteChain(absl::Span<const Piece> pieces);

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Bytes [offset, offset + length), which must lie inside this chain.
  ByteChain Sub(size_t offset, size_t length) const;

  // Calls `visit(Piece)` for each non-empty contiguous part, in order, and
  // stops at the first call that returns false; false then, else true.
  template <typename Visit>
  bool ForEachPiece(Visit visit) const;

  // Copies bytes from `offset` (at most size()) into `out` until either
  // ends; returns how many.
  size_t CopyOut(size_t offset, absl::Span<uint8_t> out) const;

  // A copy of the bytes, for tests and small parts.
  std::string ToString() const;

  // Reads a chain front to back, a contiguous run at a time. Copyable: a
  // copy goes on from the same position.
  class Reader {
   public:
    explicit Reader(const ByteChain& chain)
        : pieces_(chain.pieces_), offset_(chain.skip_), left_(chain.size_) {
      Settle();
    }

    // Bytes not yet consumed.
    size_t left() const { return left_; }
    // The contiguous bytes at the position, at most `max`; not consumed.
    // Empty only when nothing is left.
    Piece Peek(size_t max) const;
    // Consumes `n` <= left() bytes.
    void Skip(size_t n);
    // Copies the next out.size() <= left() bytes to `out`, consuming them.
    void Read(absl::Span<uint8_t> out);

   private:
    // Moves past the pieces before the position: while bytes are left,
    // pieces_[0] holds the next one.
    void Settle();

    absl::Span<const Piece> pieces_;
    size_t offset_;  // into pieces_[0]
    size_t left_;
  };

 private:
  ByteChain(absl::Span<const Piece> pieces, size_t skip, size_t size)
      : pieces_(pieces), skip_(skip), size_(size) {}

  absl::Span<const Piece> pieces_;
  size_t skip_ = 0;  // bytes of the first piece before the chain's start
  size_t size_ = 0;
};

template <typename Visit>
bool ByteChain::ForEachPiece(Visit visit) const {
  size_t skip = skip_;
  size_t left = size_;
  for (const Piece& piece : pieces_) {
    if (left == 0) break;
    if (skip >= piece.size()) {
      skip -= piece.size();
      continue;
    }
    const Piece part = piece.subspan(skip, left);
    skip = 0;
    left -= part.size();
    if (!visit(part)) return false;
  }
  return true;
}

}  // namespace verity

#endif  // VERITYD_LIB_BASE_BYTE_CHAIN_H_
