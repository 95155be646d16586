// Implements StoreLogStorage's state on the store's shared record.

#include "server/store/store_log_storage.h"

#include "lib/base/status_macros.h"

namespace verity::server {

absl::StatusOr<std::optional<tlog::LogStorage::Record>>
StoreLogStorage::ReadState() const {
  ASSIGN_OR_RETURN(std::optional<SharedRecord> record,
                   store_->ReadRecord(kLogStateRecord));
  if (!record.has_value()) return std::nullopt;
  return Record{std::move(record->body), std::move(record->version)};
}

absl::StatusOr<tlog::LogStorage::Record> StoreLogStorage::WriteState(
    absl::string_view body, const std::optional<std::string>& expected) {
  ASSIGN_OR_RETURN(SharedRecord record,
                   store_->WriteRecord(kLogStateRecord, body, expected));
  return Record{std::move(record.body), std::move(record.version)};
}

}  // namespace verity::server
