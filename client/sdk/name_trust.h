// The client's check of a name: the statement the server sent with it must
// be signed by trusted keys, name exactly that name, be current, bind the
// digest the server named, and not roll back what this client has seen.

#ifndef VERITYD_CLIENT_SDK_NAME_TRUST_H_
#define VERITYD_CLIENT_SDK_NAME_TRUST_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/sdk/seen_names.h"
#include "lib/trust/name_statement.h"
#include "proto/verity/v1/verity.pb.h"
#include "verity/options.h"

namespace verity::client {

// Thread-safe: immutable, and the seen-names store locks its file.
class NameTrust {
 public:
  // Null when options.trusted_keys is empty (names are the server's word).
  // INVALID_ARGUMENT for keys that do not parse or a threshold outside
  // [1, number of keys]; FAILED_PRECONDITION if no state directory is known.
  static absl::StatusOr<std::unique_ptr<NameTrust>> Create(
      const sdk::ClientOptions& options);

  // `max_unseen_age`: ClientOptions::max_unseen_statement_age.
  NameTrust(TrustedKeys keys, std::string state_dir,
            absl::Duration max_unseen_age = absl::InfiniteDuration());

  // Checks the statement of a Stat by `name` (`info`) at `now`, in this
  // order, each failure DATA_LOSS saying which check failed and naming the
  // name: present, well-formed, signed by enough trusted keys for this name
  // and current (CheckNameStatement), binding the digest `info` names, and
  // not older than the newest this client accepted for the name while any of
  // these keys was trusted, nor of that version with another body. Records
  // the statement as seen only once all of that passed, and only under the
  // trusted keys whose signatures of it verify: a version that keys since
  // removed alone vouched for stops counting with their removal. Errors of
  // the state file keep their code (DATA_LOSS for a damaged one).
  absl::StatusOr<NameStatement> Check(absl::string_view name,
                                      const v1::BlobInfo& info,
                                      absl::Time now) const;

  const TrustedKeys& keys() const { return keys_; }

 private:
  // Refused unless every trusted key's record lets `statement` follow it,
  // and, if none has a record of the name, unless it was issued within
  // max_unseen_age_ of `now`; then records it in those of its trusted
  // signers.
  absl::Status CheckAndRecordSeen(absl::string_view name,
                                  const NameStatement& statement,
                                  absl::Time now) const;
  // The store of `signer`, a trusted key.
  const SeenNamesStore& StoreOf(const KeyId& signer) const;

  const TrustedKeys keys_;
  const std::vector<SeenNamesStore> seen_;  // one per trusted key, in order
  const absl::Duration max_unseen_age_;
};

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_NAME_TRUST_H_
