// What a blob reference means now, checked: the digest a name or a digest on
// the command line names, and whether to read it as a tree. Shared by get,
// ls, sync and mount (and its follower).

#ifndef VERITYD_CLIENT_NAMES_RESOLVED_BLOB_H_
#define VERITYD_CLIENT_NAMES_RESOLVED_BLOB_H_

#include "absl/status/statusor.h"
#include "client/names/blob_ref.h"
#include "verity/blob_info.h"
#include "verity/client.h"
#include "verity/digest.h"

namespace verity::client {

// What a blob reference names. Plain value.
struct ResolvedBlob {
  sdk::BlobInfo info;  // Stat's, or StatName's (its statement checked)
  bool tree = false;   // the blob is a tree manifest
  // `tree` is what a verified name statement says (else the server's word:
  // BlobInfo::tree_manifest).
  bool tree_is_signed = false;

  const sdk::Digest& digest() const { return info.digest; }
};

// The digest `blob` names and whether it is a tree: a name as the server
// says, its statement checked as the client's trust options say (StatName),
// so that a verified statement decides both; a digest as Stat says.
absl::StatusOr<ResolvedBlob> ResolveBlob(sdk::Client& client,
                                         const BlobRef& blob);

// OK if `blob` may be read as a tree: it is one, or nothing signed says it
// is a file and `insist` (the user said --tree, or the command reads only
// trees). FAILED_PRECONDITION naming `ref` otherwise: a name signed as a
// file is never read as a tree.
absl::Status CheckTree(const ResolvedBlob& blob, const BlobRef& ref,
                       bool insist);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_NAMES_RESOLVED_BLOB_H_
