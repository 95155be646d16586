// Turns a stream of file data, in chunks of any size, into the hashes of its
// blocks: the entries of tree level 0.

#ifndef VERITYD_LIB_TREE_DATA_HASHER_H_
#define VERITYD_LIB_TREE_DATA_HASHER_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "lib/hash/hash.h"
#include "lib/tree/block_hasher.h"

namespace verity {

// Thread-compatible. Does not own the BlockHasher, which must outlive it.
class DataHasher {
 public:
  explicit DataHasher(const BlockHasher* block_hasher);

  // Hashes every block that `data` completes; a trailing partial block is
  // carried in a hash state rather than copied.
  void Update(absl::Span<const uint8_t> data);

  // Hashes the trailing partial block, zero-padded, if there is one.
  void Finish();

  // Bytes passed to Update so far.
  uint64_t data_size() const { return data_size_; }

  // Digests of the blocks completed since the last ClearDigests().
  absl::string_view digests() const { return digests_; }
  // Keeps the buffer's capacity, so draining after every Update does not
  // allocate.
  void ClearDigests() { digests_.clear(); }

 private:
  // Appends room for one digest and returns it.
  absl::Span<uint8_t> NewDigest();

  const BlockHasher& block_hasher_;
  Hasher partial_;             // state of the unfinished block, if any
  uint32_t partial_size_ = 0;  // bytes in the unfinished block
  uint64_t data_size_ = 0;
  std::string digests_;
};

}  // namespace verity

#endif  // VERITYD_LIB_TREE_DATA_HASHER_H_
