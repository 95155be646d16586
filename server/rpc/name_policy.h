// What a name write needs: with --name_keys, a statement signed by one of
// those keys, for that name and that blob, newer than the name's current
// one; without, an optional statement that names that name and that blob.
// The statement's own checks are lib/name_statement's; this decides which
// apply, and which run before the store (everything the request alone shows)
// and which inside it (the blob's digest, once hashed, and the version, as
// the compare of the store's compare-and-set).

#ifndef VERITYD_SERVER_RPC_NAME_POLICY_H_
#define VERITYD_SERVER_RPC_NAME_POLICY_H_

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/tree/descriptor.h"
#include "lib/trust/name_statement.h"
#include "server/store/store.h"

namespace verity::server {

// Immutable and thread-safe.
class NamePolicy {
 public:
  // No keys: names work as without signatures.
  NamePolicy() = default;
  // Every name write needs a statement that `keys` sign.
  explicit NamePolicy(TrustedKeys keys)
      : keys_(std::make_shared<const TrustedKeys>(std::move(keys))) {}

  bool requires_statements() const { return keys_ != nullptr; }

  // The write of `name` (valid) with `statement` (empty: none), checked now
  // as far as the request shows: INVALID_ARGUMENT, saying which, for a
  // statement that is missing (with keys), does not parse, is not signed by
  // the keys, names another name, is expired or not yet issued (with keys,
  // at `now`), binds a digest other than `digest` (the blob's, if known
  // yet), or says the name means a file where the blob is a tree manifest
  // (`kind`: a Put's tree_manifest, or what the store says of the blob), or
  // the other way round. The write's check does the rest in the store:
  // INVALID_ARGUMENT if the blob is not the statement's, FAILED_PRECONDITION
  // (with keys) if the statement is not newer than the name's current one. Only
  // a current statement that the keys sign for the name sets that floor: one
  // they do not (planted in the store, or signed by a key since removed) is
  // replaced by any valid write.
  absl::StatusOr<NameWrite> Prepare(absl::string_view name,
                                    absl::string_view statement,
                                    const std::optional<ParsedDigest>& digest,
                                    NameKind kind, absl::Time now) const;

 private:
  std::shared_ptr<const TrustedKeys> keys_;  // null: no --name_keys
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_NAME_POLICY_H_
