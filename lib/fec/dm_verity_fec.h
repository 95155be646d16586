// dm-verity's forward error correction, byte-identical with `veritysetup
// format --fec-device` (cryptsetup lib/verity/verity_fec.c, the kernel's
// drivers/md/dm-verity-fec.c): Reed-Solomon RS(255, 255 - roots) over GF(2^8)
// (field polynomial 0x11d, roots α^0..α^(roots-1)), encoded with ISA-L.
//
// The covered blocks (the data blocks, then the hash area's, all of one block
// size) are taken in `rounds` = ceil(blocks / k) RS groups, k = 255 - roots:
// group r holds blocks r, r + rounds, r + 2·rounds, ... (past the end: zero
// blocks), and byte o of its k blocks is one codeword (the first block the
// highest-degree symbol). The FEC area holds, for each group and each byte
// offset in turn, that codeword's `roots` parity bytes.

#ifndef VERITYD_LIB_FEC_DM_VERITY_FEC_H_
#define VERITYD_LIB_FEC_DM_VERITY_FEC_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace verity {

inline constexpr int kMinFecRoots = 2;
inline constexpr int kMaxFecRoots = 24;

// INVALID_ARGUMENT unless kMinFecRoots <= roots <= kMaxFecRoots.
absl::Status ValidateFecRoots(int roots);

// The RS groups for `blocks` covered blocks, and the FEC area's size.
uint64_t FecRounds(uint64_t blocks, int roots);
uint64_t FecSize(uint64_t blocks, int roots, uint32_t block_size);

// Encodes and repairs RS groups. Immutable, and so shared: one per number of
// roots in a process, built on first use (building one is most of what a
// small blob's FEC costs).
class FecCodec {
 public:
  // The codec for `roots`; INVALID_ARGUMENT as ValidateFecRoots. Lives for
  // the process.
  static absl::StatusOr<const FecCodec*> Create(int roots);

  int roots() const { return roots_; }
  // Blocks per group: 255 - roots.
  int k() const { return 255 - roots_; }

  // Writes the parity of one group, `blocks` (k() pointers to `block_size`
  // bytes each; nullptr for a zero block), to `out`: block_size * roots()
  // bytes, interleaved as the FEC area holds it. `scratch` is working memory,
  // grown as needed: reuse it across calls (fresh memory per group is page
  // faults, which cost more than the encoding).
  void EncodeGroup(absl::Span<const uint8_t* const> blocks, size_t block_size,
                   absl::Span<uint8_t> out,
                   std::vector<uint8_t>& scratch) const;

  // Adds block `j` of a group (`block_size` bytes) to the group's parity,
  // `rows`: roots() rows of block_size bytes, not interleaved (zero before
  // the first block).
  void AddBlock(int j, const uint8_t* block, size_t block_size,
                absl::Span<uint8_t* const> rows) const;
  // Interleaves a group's parity `rows` (roots() * block_size bytes, row
  // after row) into `out` as the FEC area holds it.
  void Interleave(const uint8_t* rows, size_t block_size,
                  absl::Span<uint8_t> out) const;

  // Rebuilds the blocks of one group at `erased` (distinct indices < k(),
  // at most roots(): blocks the Merkle tree found bad, and so erasures) from
  // the group's other blocks (`blocks` as for EncodeGroup; those at `erased`
  // are not read) and its `parity` (as EncodeGroup writes it), into
  // `rebuilt` (one block_size buffer per erased index). The parity may be
  // damaged too: a rebuilt block must be hashed again before it is used.
  // INVALID_ARGUMENT for more erasures than roots() or bad indices.
  absl::Status RepairGroup(absl::Span<const uint8_t* const> blocks,
                           absl::Span<const int> erased,
                           absl::Span<const uint8_t> parity, size_t block_size,
                           absl::Span<uint8_t* const> rebuilt) const;

 private:
  explicit FecCodec(int roots);

  int roots_;
  // The parity matrix, roots() rows of k(); and ISA-L's expanded
  // multiplication tables of it.
  std::vector<uint8_t> matrix_;
  std::vector<uint8_t> tables_;
};

// Encodes the FEC area of `blocks` covered blocks fed in order as they come
// (a Put's content, then its tree), each block added to its group's parity at
// once (ISA-L's ec_encode_data_update): nothing is read back
// (docs/tuning.md has its cost). Holds the FEC area in memory (FecSize: 2 of
// every 253 blocks with 2 roots). Thread-compatible.
class FecStreamEncoder {
 public:
  // INVALID_ARGUMENT for bad roots or no block.
  static absl::StatusOr<FecStreamEncoder> Create(int roots, uint32_t block_size,
                                                 uint64_t blocks);

  // The next bytes of the blocks; INVALID_ARGUMENT past `blocks` of them.
  absl::Status Update(absl::Span<const uint8_t> bytes);
  // Zero-pads a block begun (a partial last data block, before the tree).
  absl::Status PadBlock();
  // The FEC area. FAILED_PRECONDITION unless every block came, whole.
  absl::StatusOr<std::string> Finish() const;

 private:
  FecStreamEncoder(const FecCodec* codec, uint32_t block_size, uint64_t blocks);
  absl::Status AddBlock(const uint8_t* block);

  const FecCodec* codec_;
  uint32_t block_size_;
  uint64_t blocks_;
  uint64_t rounds_;
  uint64_t next_ = 0;             // blocks added
  std::vector<uint8_t> partial_;  // a block begun
  // Per group, its rows one after the other (AddBlock's `rows`).
  std::vector<uint8_t> parity_;
};

// Fills `out` (count * block_size bytes) with covered blocks [first, first +
// count), all below the count given to EncodeFec(); a partial last block
// zero-padded.
using FecReadFn = std::function<absl::Status(uint64_t first, uint64_t count,
                                             absl::Span<uint8_t> out)>;
// Takes the next bytes of the FEC area.
using FecWriteFn = std::function<absl::Status(absl::Span<const uint8_t> bytes)>;

// Encodes the FEC area of `blocks` covered blocks and hands it to `write`, in
// order, a window of groups at a time. The blocks are read through `read` in
// runs: a window of W consecutive groups is W consecutive blocks in each of k
// places, so each window reads k runs of W blocks (a file: k preads). Memory:
// about kFecWindowBytes, whatever `blocks`. The first error of `read` or
// `write` ends it.
inline constexpr size_t kFecWindowBytes = size_t{8} << 20;
absl::Status EncodeFec(int roots, uint32_t block_size, uint64_t blocks,
                       const FecReadFn& read, const FecWriteFn& write);

}  // namespace verity

#endif  // VERITYD_LIB_FEC_DM_VERITY_FEC_H_
