// The transparency log's storage (lib/tlog/log_storage.h) on a Store: its
// objects are the store's log objects, its state the shared record
// "log-state". On a store shared by replicas, every replica appends
// through it.

#ifndef VERITYD_SERVER_STORE_STORE_LOG_STORAGE_H_
#define VERITYD_SERVER_STORE_STORE_LOG_STORAGE_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "lib/tlog/log_storage.h"
#include "server/store/store.h"

namespace verity::server {

inline constexpr absl::string_view kLogStateRecord = "log-state";

// Thread-safe, as the store is.
class StoreLogStorage final : public tlog::LogStorage {
 public:
  explicit StoreLogStorage(std::shared_ptr<Store> store)
      : owner_(std::move(store)), store_(owner_.get()) {}
  // Borrows `store`, which outlives this.
  explicit StoreLogStorage(Store& store) : store_(&store) {}

  absl::StatusOr<std::string> Read(absl::string_view path) const override {
    return store_->ReadLogObject(path);
  }
  absl::Status Write(absl::string_view path, absl::string_view bytes) override {
    return store_->WriteLogObject(path, bytes);
  }
  absl::Status Delete(absl::string_view path) override {
    return store_->DeleteLogObject(path);
  }
  absl::StatusOr<tlog::LogObjectPage> List(
      absl::string_view folder, absl::string_view after) const override {
    return store_->ListLogObjects(folder, after);
  }
  absl::StatusOr<std::optional<Record>> ReadState() const override;
  absl::StatusOr<Record> WriteState(
      absl::string_view body,
      const std::optional<std::string>& expected) override;

 private:
  const std::shared_ptr<Store> owner_;  // null if borrowed
  Store* const store_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_STORE_LOG_STORAGE_H_
