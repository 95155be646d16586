// What the server reports about stored blobs, after the SDK has checked that
// each report is consistent with the digest it names.

#ifndef VERITYD_CLIENT_INCLUDE_VERITY_BLOB_INFO_H_
#define VERITYD_CLIENT_INCLUDE_VERITY_BLOB_INFO_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "verity/digest.h"

namespace verity::sdk {

// What a name's signed statement says. Plain value.
struct NameStatementInfo {
  // The name means a tree (the digest is a tree manifest's: verity/tree.h),
  // else a file. A statement signed before statements said so (version 1)
  // means a file.
  bool tree = false;
  uint64_t version = 0;
  absl::Time issued;
  absl::Time expires;
  // Lowercase hex key ids of the keys that signed it: the SHA-256 of each
  // DER public key, as `openssl pkey -pubin -outform DER | sha256sum` prints.
  std::vector<std::string> signer_key_ids;
  // Checked against ClientOptions::trusted_keys (signatures, name, expiry,
  // digest, rollback). False without trusted keys: then nothing above was
  // checked and it is the server's word.
  bool verified = false;
  std::string encoded;  // the statement as stored and sent
};

// A stored blob. The descriptor fields (size, block size, salt, format, root
// hash) hash to `digest`, which the SDK checks; the names and tree size are as
// the server says. Plain value.
struct BlobInfo {
  Digest digest;
  uint64_t size = 0;
  uint32_t block_size = 0;
  std::string salt;  // raw bytes; empty if unsalted
  TreeFormat format = TreeFormat::kFsVerity;
  // The tree's root hash, raw: for a dm-verity blob, the root hash
  // `veritysetup format` prints.
  std::string root_hash;
  uint64_t tree_size = 0;
  std::vector<std::string> names;  // the names that refer to the blob
  // StatName, SetName and a Put with a name only: the name's statement, if
  // the server stores one (without trusted keys, one that parses).
  std::optional<NameStatementInfo> name_statement;
  // The blob's detached fs-verity signature (DER PKCS#7), if one is stored;
  // as the server says: fetches check it against ClientOptions::fsverity_certs.
  std::string fsverity_signature;
  // The blob was stored as a tree manifest (PutOptions::tree_manifest), as
  // the server says: what a verified name statement says overrides it.
  bool tree_manifest = false;
};

// One version of a name's history (Client::History). Plain value.
struct NameVersionInfo {
  Digest digest;
  // When the server wrote it; InfinitePast if it does not know (a version
  // written before it kept histories). The server's word.
  absl::Time written = absl::InfinitePast();
  // The statement stored with it, if one parses. `verified` here means that
  // the statement names this name and this digest and carries enough
  // signatures of ClientOptions::trusted_keys: an old version is expired and
  // below the name's current version by nature, so neither is checked.
  std::optional<NameStatementInfo> statement;
};

// What one garbage collection found and did (Client::Collect). Plain value.
struct CollectResult {
  uint64_t blobs = 0;  // stored blobs it saw
  uint64_t bytes = 0;  // their data bytes
  uint64_t reachable = 0;
  uint64_t reachable_bytes = 0;
  // Unreachable and unused within the server's grace: deleted (a dry run:
  // would be).
  uint64_t freed = 0;
  uint64_t freed_bytes = 0;
  uint64_t young = 0;  // unreachable, but used within the grace: kept
  // Quarantined blobs seen, and of them those freed (unreachable, and
  // quarantined before the grace; a dry run: would be).
  uint64_t quarantined = 0;
  uint64_t quarantined_freed = 0;
  // Objects no blob owns (a Put or a delete cut short, a staged upload),
  // written before the grace: freed (a dry run: would be).
  uint64_t leftovers = 0;
  uint64_t leftover_bytes = 0;
  uint64_t names = 0;  // names marked from
  uint64_t trees = 0;  // trees read
  absl::Duration took;
};

// A scrub of the server's store (Client::Scrub). Plain value.
struct ScrubResult {
  bool running = false;  // a pass runs on the server now
  // When the pass under way began and when the last one completed (the
  // epoch: none).
  absl::Time pass_started;
  absl::Time last_completed;
  // Only when waited for: what the pass found (the part this server ran).
  bool waited = false;
  uint64_t blobs = 0;  // checked whole
  uint64_t bytes = 0;  // read: data, tree and FEC area
  uint64_t bad_blocks = 0;
  uint64_t repaired_blocks = 0;  // rebuilt from FEC and written back
  uint64_t unrepairable = 0;     // blobs damaged beyond repair, reported
  uint64_t unread = 0;           // blobs an I/O error kept from being checked
  absl::Duration took;
};

// One page of a listing. Plain value.
struct ListPage {
  std::vector<BlobInfo> blobs;  // in digest order
  // Pass to the next List call; empty on the last page.
  std::string next_page_token;
};

// The outcome of a Put. Plain value.
struct PutResult {
  BlobInfo info;
  // The same content was stored already; the server keeps one copy.
  bool already_present = false;
};

}  // namespace verity::sdk

#endif  // VERITYD_CLIENT_INCLUDE_VERITY_BLOB_INFO_H_
