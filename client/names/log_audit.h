// A monitor of a transparency log (verity audit): reads the log from where
// the last audit stopped up to the server's newest checkpoint, checks that
// checkpoint's consistency with the last one audited, proves every new
// entry under it, and lists the statements a publisher's keys signed, each
// marked known or not by the publisher's own journal of what it signed.

#ifndef VERITYD_CLIENT_NAMES_LOG_AUDIT_H_
#define VERITYD_CLIENT_NAMES_LOG_AUDIT_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "client/sdk/log_trust.h"
#include "lib/trust/name_statement.h"
#include "verity/client.h"

namespace verity::client {

struct AuditedStatement {
  uint64_t index = 0;
  NameStatement statement;
  // Its body's SHA-256 is in the publisher's journal.
  bool known = false;
};

struct AuditReport {
  uint64_t from = 0;  // the size audited before
  uint64_t to = 0;    // the newest checkpoint's size, now audited
  // The statements the publisher's keys signed among entries [from, to).
  std::vector<AuditedStatement> statements;
  size_t unknown = 0;
  // Entries that are not name statements, or not the publisher's.
  uint64_t others = 0;
};

// Audits entries [the size `position` has seen, the newest checkpoint) of
// `client`'s log: the checkpoint must follow the one `position` has seen
// (LogTrust::Follow, refusing and keeping evidence alike: DATA_LOSS), and
// each entry must be proved under it (DATA_LOSS naming the entry). Only
// then is the checkpoint recorded in `position`, so an audit that fails
// starts again from the same place. `known` holds the body hashes of the
// publisher's journal.
absl::StatusOr<AuditReport> AuditLog(
    sdk::Client& client, const LogTrust& position, const TrustedKeys& publisher,
    const absl::flat_hash_set<std::string>& known);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_NAMES_LOG_AUDIT_H_
