// Repairs a blob's bad blocks from its FEC area, as dm-verity's FEC does, but
// with the Merkle tree locating the bad blocks (erasures: up to `roots` per
// RS group, twice what decoding errors at unknown places would fix).

#ifndef VERITYD_SERVER_STORE_FEC_REPAIR_H_
#define VERITYD_SERVER_STORE_FEC_REPAIR_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "server/store/verified_blob.h"

namespace verity::server {

// Repairs the RS group of block `bad` (numbered as BadBlockOf() numbers it)
// of `blob`, whose fec_roots() must not be 0, and returns how many of its
// blocks were rebuilt and written back.
//
// Reads `bad` first, past any cache (Blob::Stored), with the tree blocks its
// check needs: 0 if it checks good now (a repair that raced this one), with
// nothing more read. Otherwise reads every other block of the group and
// checks each against the tree (a data block's tree blocks, a tree block's
// parents, read and verified first; no tree block is read twice, and one
// verified already is not read at all); a block that fails its check, or
// cannot be read, is an erasure. One that cannot be checked, because a tree
// block it needs is bad, is used as it is: most are good (a tree block's 128
// data blocks would be too many erasures), and what they rebuild is checked.
// Rebuilds the erasures from the rest and the group's parity
// (lib/fec/dm_verity_fec.h), checks each rebuilt block again (nothing but
// the tree is trusted: a damaged parity byte, or a bad block used as it was,
// rebuilds a wrong block, which the check refuses), and rewrites those that
// pass where the blob is stored (Blob::Rewrite, durable on return).
//
// DATA_LOSS if `bad` cannot be rebuilt: more erasures than roots, a parity
// area that cannot be read, or a rebuilt block that fails its check. The
// rewrite's error if it fails. Blocking I/O, on the calling thread: never a
// gRPC one.
absl::StatusOr<int> RepairFecGroup(VerifiedBlob& blob, uint64_t bad);

// The RS group of block `bad` of `blob` (fec_roots() not 0): blocks of one
// group are repaired together, by one RepairFecGroup().
uint64_t FecGroupOf(const VerifiedBlob& blob, uint64_t bad);

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_FEC_REPAIR_H_
