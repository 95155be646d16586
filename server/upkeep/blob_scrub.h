// One stored blob checked whole, as a scrub does: every tree block against
// its parent from the digest down, every data block against the tree, and the
// FEC area against parity encoded again from the verified blocks. What fails
// is repaired from FEC where the blob has it, or reported as the damage a
// read would have found.

#ifndef VERITYD_SERVER_UPKEEP_BLOB_SCRUB_H_
#define VERITYD_SERVER_UPKEEP_BLOB_SCRUB_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/store/store.h"
#include "server/store/verified_blob.h"

namespace verity::server {

// What a scrub does besides reading. Each may block; none is called on a
// thread that must not.
struct ScrubHooks {
  // Repairs the RS group of the block `bad` names (BadBlockOf) of `blob`,
  // which has an FEC area, and returns how many blocks it rebuilt and wrote
  // back (0: the block checks good now). RepairFecGroup() unless the server
  // shares its repairs with its reads.
  std::function<absl::StatusOr<int>(std::shared_ptr<VerifiedBlob> blob,
                                    const absl::Status& bad)>
      repair;
  // Called before reading `bytes` more of the store: waits as long as the
  // scrub's rate asks. An error (the scrub was stopped) ends the scrub with
  // it. Empty: no limit.
  std::function<absl::Status(uint64_t bytes)> pace;
  // The largest FEC area checked from parity held in memory as the blocks
  // go by; a larger one is encoded again from a second verified read.
  uint64_t max_parity_in_memory = kMaxStreamedFecBytes;
};

// What checking one blob found. Plain value.
struct BlobScrub {
  uint64_t bytes = 0;  // read from the store: data, tree and FEC area
  // Data and tree blocks that failed their check, and FEC-area blocks whose
  // parity did not match the verified blocks.
  uint64_t bad_blocks = 0;
  // Of them, blocks rebuilt from FEC, and FEC-area blocks encoded again,
  // written back where the store allows (Blob::Rewrite).
  uint64_t repaired_blocks = 0;
  // Not OK: damage that could not be repaired, the DATA_LOSS a read of the
  // blob would report (IsTreeCorruption, BadBlockOf); the rest of the blob
  // was not checked.
  absl::Status damage;
};

// Checks `blob` whole, reading past any cache in front of the store
// (Blob::Stored): its tree top-down, its data in order, then its FEC area, if
// it has one, against parity encoded from the verified data and tree (held
// in memory up to hooks.max_parity_in_memory, else encoded again from a
// second verified read). A bad data or tree block is repaired through
// hooks.repair when the blob has an FEC area and read again; one that stays bad
// is the result's damage. FEC-area blocks that differ are rewritten from the
// parity encoded here. Errors: the store's read errors other than damage
// (NOT_FOUND once the blob is deleted meanwhile, UNAVAILABLE, INTERNAL), and
// the pace hook's. Memory: the blob's verified tree, 1 MiB of reads, and the
// parity as said.
absl::StatusOr<BlobScrub> ScrubBlob(std::shared_ptr<const Blob> blob,
                                    const ScrubHooks& hooks);

}  // namespace verity::server

#endif  // VERITYD_SERVER_UPKEEP_BLOB_SCRUB_H_
