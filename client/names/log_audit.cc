// Implements AuditLog: one consistency check, then every new entry read from
// the entry bundles and proved from the tiles, both read through the
// server's ReadLog.

#include "client/names/log_audit.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"
#include "lib/tlog/merkle_log.h"
#include "lib/tlog/tiles.h"

namespace verity::client {
namespace {

// The entries [from, to) of the tree of `size` entries.
absl::StatusOr<std::vector<std::string>> ReadEntries(sdk::Client& client,
                                                     uint64_t from, uint64_t to,
                                                     uint64_t size) {
  std::vector<std::string> entries;
  for (uint64_t first = from - from % tlog::kTileWidth; first < to;
       first += tlog::kTileWidth) {
    ASSIGN_OR_RETURN(const tlog::TileId id,
                     tlog::TileFor(tlog::TileId::kEntries, first, size));
    ASSIGN_OR_RETURN(const std::string bundle, client.ReadLog(id.Path()));
    absl::StatusOr<std::vector<std::string>> split = tlog::SplitBundle(bundle);
    if (!split.ok() || split->size() != static_cast<size_t>(id.width)) {
      return absl::DataLossError(
          absl::StrCat("the log's entry bundle ", id.Path(), " is damaged"));
    }
    for (uint64_t i = std::max(first, from); i < std::min(first + id.width, to);
         ++i) {
      entries.push_back(std::move((*split)[i - first]));
    }
  }
  return entries;
}

}  // namespace

absl::StatusOr<AuditReport> AuditLog(
    sdk::Client& client, const LogTrust& position, const TrustedKeys& publisher,
    const absl::flat_hash_set<std::string>& known) {
  ASSIGN_OR_RETURN(const uint64_t from, position.SeenSize());
  ASSIGN_OR_RETURN(const sdk::LogConsistencyAnswer answer,
                   client.LogConsistency(from, 0));
  absl::StatusOr<tlog::SignedCheckpoint> newest =
      tlog::OpenCheckpoint(answer.checkpoint, position.key());
  if (!newest.ok()) {
    return absl::DataLossError(
        absl::StrCat("audit: transparency log: ", newest.status().message()));
  }
  const tlog::Checkpoint& checkpoint = newest->checkpoint;
  ASSIGN_OR_RETURN(const std::vector<tlog::LogHash> consistency,
                   tlog::LogHashesFromBytes(answer.proof));
  if (answer.new_size != checkpoint.size) {
    return absl::DataLossError(
        "audit: the consistency proof is not to the "
        "checkpoint's size");
  }
  RETURN_IF_ERROR(position.Follow("audit", *newest, answer.old_size,
                                  consistency, /*record=*/false));

  AuditReport report;
  report.from = from;
  report.to = checkpoint.size;
  if (checkpoint.size > from) {
    ASSIGN_OR_RETURN(
        const std::vector<std::string> entries,
        ReadEntries(client, from, checkpoint.size, checkpoint.size));
    tlog::TileHashReader tiles(checkpoint.size,
                               [&client](const tlog::TileId& id) {
                                 return client.ReadLog(id.Path());
                               });
    for (uint64_t index = from; index < checkpoint.size; ++index) {
      const std::string& entry = entries[index - from];
      ASSIGN_OR_RETURN(const std::vector<tlog::LogHash> proof,
                       tlog::InclusionProof(index, checkpoint.size, tiles));
      if (absl::Status proved = tlog::VerifyInclusion(index, checkpoint.size,
                                                      tlog::LeafHash(entry),
                                                      proof, checkpoint.root);
          !proved.ok()) {
        return absl::DataLossError(absl::StrCat(
            "audit: entry ", index, " is not the log's: ", proved.message()));
      }
      absl::StatusOr<NameStatement> statement = ParseNameStatement(entry);
      if (!statement.ok() || TrustedSigners(*statement, publisher).empty()) {
        ++report.others;
        continue;
      }
      const bool is_known = known.contains(Sha256Hex(statement->body));
      if (!is_known) ++report.unknown;
      report.statements.push_back(
          AuditedStatement{index, *std::move(statement), is_known});
    }
  }
  RETURN_IF_ERROR(position.Follow("audit", *newest, answer.old_size,
                                  consistency, /*record=*/true));
  return report;
}

}  // namespace verity::client
