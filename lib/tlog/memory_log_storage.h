// A LogStorage in memory, for tests: objects, the state record, and hooks
// that fail or change what a call does.

#ifndef VERITYD_LIB_TLOG_MEMORY_LOG_STORAGE_H_
#define VERITYD_LIB_TLOG_MEMORY_LOG_STORAGE_H_

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "lib/tlog/log_storage.h"

namespace verity::tlog {

// Thread-safe.
class MemoryLogStorage final : public LogStorage {
 public:
  // Called before each Write with its path; a status other than OK fails
  // the Write (nothing written).
  using WriteHook = std::function<absl::Status(absl::string_view path)>;

  absl::StatusOr<std::string> Read(absl::string_view path) const override;
  absl::Status Write(absl::string_view path, absl::string_view bytes) override;
  absl::Status Delete(absl::string_view path) override;
  absl::StatusOr<LogObjectPage> List(absl::string_view folder,
                                     absl::string_view after) const override;
  absl::StatusOr<std::optional<Record>> ReadState() const override;
  absl::StatusOr<Record> WriteState(
      absl::string_view body,
      const std::optional<std::string>& expected) override;

  void SetWriteHook(WriteHook hook);
  // What an attacker with the storage can do: any object or state.
  std::map<std::string, std::string> objects() const;
  void SetObject(const std::string& path, const std::string& bytes);
  std::optional<Record> state() const;
  void SetState(std::optional<Record> state);

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::string, std::less<>> objects_ ABSL_GUARDED_BY(mu_);
  // When each object was last written.
  std::map<std::string, absl::Time, std::less<>> written_ ABSL_GUARDED_BY(mu_);
  std::optional<Record> state_ ABSL_GUARDED_BY(mu_);
  uint64_t versions_ ABSL_GUARDED_BY(mu_) = 0;
  WriteHook hook_ ABSL_GUARDED_BY(mu_);
};

}  // namespace verity::tlog

#endif  // VERITYD_LIB_TLOG_MEMORY_LOG_STORAGE_H_
