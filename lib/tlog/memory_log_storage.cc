// Implements MemoryLogStorage.

#include "lib/tlog/memory_log_storage.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace verity::tlog {

absl::StatusOr<std::string> MemoryLogStorage::Read(
    absl::string_view path) const {
  absl::MutexLock lock(&mu_);
  auto it = objects_.find(path);
  if (it == objects_.end()) {
    return absl::NotFoundError(absl::StrCat("no log object ", path));
  }
  return it->second;
}

absl::Status MemoryLogStorage::Write(absl::string_view path,
                                     absl::string_view bytes) {
  WriteHook hook;
  {
    absl::MutexLock lock(&mu_);
    hook = hook_;
  }
  if (hook) {
    if (absl::Status status = hook(path); !status.ok()) return status;
  }
  absl::MutexLock lock(&mu_);
  objects_[std::string(path)] = std::string(bytes);
  written_[std::string(path)] = absl::Now();
  return absl::OkStatus();
}

absl::Status MemoryLogStorage::Delete(absl::string_view path) {
  absl::MutexLock lock(&mu_);
  auto it = objects_.find(path);
  if (it != objects_.end()) objects_.erase(it);
  auto time = written_.find(path);
  if (time != written_.end()) written_.erase(time);
  return absl::OkStatus();
}

absl::StatusOr<LogObjectPage> MemoryLogStorage::List(
    absl::string_view folder, absl::string_view after) const {
  constexpr size_t kPage = 100;
  absl::MutexLock lock(&mu_);
  LogObjectPage page;
  for (auto it = objects_.upper_bound(std::max(after, folder));
       it != objects_.end() && absl::StartsWith(it->first, folder); ++it) {
    if (page.objects.size() == kPage) {
      page.next = page.objects.back().path;
      break;
    }
    const auto time = written_.find(it->first);
    page.objects.push_back(
        {it->first, it->second.size(),
         time == written_.end() ? absl::InfiniteFuture() : time->second});
  }
  return page;
}

absl::StatusOr<std::optional<LogStorage::Record>> MemoryLogStorage::ReadState()
    const {
  absl::MutexLock lock(&mu_);
  return state_;
}

absl::StatusOr<LogStorage::Record> MemoryLogStorage::WriteState(
    absl::string_view body, const std::optional<std::string>& expected) {
  absl::MutexLock lock(&mu_);
  const std::optional<std::string> current =
      state_.has_value() ? std::optional<std::string>(state_->version)
                         : std::nullopt;
  if (current != expected) {
    return absl::FailedPreconditionError("the log's state changed");
  }
  state_ = Record{std::string(body), absl::StrCat(++versions_)};
  return *state_;
}

void MemoryLogStorage::SetWriteHook(WriteHook hook) {
  absl::MutexLock lock(&mu_);
  hook_ = std::move(hook);
}

std::map<std::string, std::string> MemoryLogStorage::objects() const {
  absl::MutexLock lock(&mu_);
  return {objects_.begin(), objects_.end()};
}

void MemoryLogStorage::SetObject(const std::string& path,
                                 const std::string& bytes) {
  absl::MutexLock lock(&mu_);
  objects_[path] = bytes;
  written_[path] = absl::Now();
}

std::optional<LogStorage::Record> MemoryLogStorage::state() const {
  absl::MutexLock lock(&mu_);
  return state_;
}

void MemoryLogStorage::SetState(std::optional<Record> state) {
  absl::MutexLock lock(&mu_);
  state_ = std::move(state);
}

}  // namespace verity::tlog
