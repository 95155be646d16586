// Implements ImportDirectory with std::filesystem's non-throwing
// (error_code) overloads and plain reads into a page-aligned buffer.

#include "server/store/importer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"
#include "server/store/name_index.h"

namespace verity::server {
namespace {

namespace fs = std::filesystem;

// Large reads make syscall overhead negligible.
constexpr size_t kReadChunkSize = size_t{1} << 20;

absl::StatusOr<std::string> RealPath(const std::string& path) {
  const std::unique_ptr<char, decltype(&free)> resolved(
      realpath(path.c_str(), nullptr), &free);
  if (resolved == nullptr) return ErrnoStatus(errno, "realpath", path);
  return std::string(resolved.get());
}

// Walks one directory tree into the store. Thread-compatible.
class Importer {
 public:
  Importer(Store* store, const std::string& root, const MerkleParams& params,
           const std::atomic<bool>* cancel)
      : store_(*store),
        cancel_(cancel),
        root_(root),
        prefix_(root == "/" ? root : root + "/"),
        params_(params),
        buffer_(PageAlignedBuffer(kReadChunkSize, &buffer_storage_)) {}

  absl::Status Run();
  const ImportStats& stats() const { return stats_; }

 private:
  absl::Status Visit(const fs::directory_entry& entry);
  absl::Status VisitSymlink(const std::string& path, const std::string& name);
  absl::Status PutFile(const std::string& path, const std::string& name);
  absl::Status Stream(int fd, const std::string& path, PutWriter* writer);
  void Refuse(absl::string_view name, absl::string_view why);
  void Skip(absl::string_view name, absl::string_view why);

  Store& store_;
  const std::atomic<bool>* const cancel_;
  const std::string root_;
  const std::string prefix_;  // every path under root_ starts with it
  const MerkleParams params_;
  std::vector<uint8_t> buffer_storage_;
  const absl::Span<uint8_t> buffer_;
  ImportStats stats_;
};

// Kubernetes mounts a ConfigMap or Secret as "..<timestamp>/" holding the
// files, a "..data" symlink to it, and a symlink per key through "..data":
// only the keys are content, so entries named "..*" are not walked.
bool IsAtomicWriterEntry(const fs::path& path) {
  return path.filename().string().rfind("..", 0) == 0;
}

absl::Status Importer::Run() {
  std::error_code error;
  // directory_options::none: symlinked directories are not descended into.
  fs::recursive_directory_iterator it(root_, fs::directory_options::none,
                                      error);
  for (; !error && it != fs::recursive_directory_iterator();
       it.increment(error)) {
    if (cancel_ != nullptr && cancel_->load(std::memory_order_relaxed)) {
      return absl::CancelledError("import cancelled");
    }
    if (IsAtomicWriterEntry(it->path())) {
      it.disable_recursion_pending();
      continue;
    }
    RETURN_IF_ERROR(Visit(*it));
  }
  if (error) return ErrnoStatus(error.value(), "walk", root_);
  return absl::OkStatus();
}

absl::Status Importer::Visit(const fs::directory_entry& entry) {
  const std::string path = entry.path().string();
  std::error_code error;
  const fs::file_status status = entry.symlink_status(error);
  if (error) return ErrnoStatus(error.value(), "lstat", path);
  const std::string name = path.substr(prefix_.size());
  switch (status.type()) {
    case fs::file_type::directory:
      return absl::OkStatus();
    case fs::file_type::regular:
      return PutFile(path, name);
    case fs::file_type::symlink:
      return VisitSymlink(path, name);
    default:
      Skip(name, "not a regular file");
      return absl::OkStatus();
  }
}

absl::Status Importer::VisitSymlink(const std::string& path,
                                    const std::string& name) {
  const absl::StatusOr<std::string> target = RealPath(path);
  if (!target.ok()) {
    Refuse(name, target.status().message());  // dangling, or a loop
    return absl::OkStatus();
  }
  if (!absl::StartsWith(*target, prefix_)) {
    Refuse(name, absl::StrCat("symlink leads out of ", root_));
    return absl::OkStatus();
  }
  struct stat st;
  if (stat(target->c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    Refuse(name, "symlink does not lead to a regular file");
    return absl::OkStatus();
  }
  return PutFile(*target, name);
}

absl::Status Importer::PutFile(const std::string& path,
                               const std::string& name) {
  const absl::Status valid = ValidateBlobName(name);
  if (!valid.ok()) {
    Refuse(name, valid.message());
    return absl::OkStatus();
  }
  // O_NONBLOCK: a FIFO swapped in since the walk looked cannot hang open().
  ASSIGN_OR_RETURN(const UniqueFd fd,
                   OpenFile(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, "fstat", path);
  if (!S_ISREG(st.st_mode)) {
    Skip(name, "not a regular file");
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(const std::unique_ptr<PutWriter> writer,
                   store_.BeginPut(params_));
  RETURN_IF_ERROR(Stream(fd.get(), path, writer.get()));
  ASSIGN_OR_RETURN(const PutResult result, writer->Commit(std::nullopt, name));
  ++stats_.files;
  stats_.bytes += writer->size();
  stats_.already_present += result.already_present ? 1 : 0;
  return absl::OkStatus();
}

absl::Status Importer::Stream(int fd, const std::string& path,
                              PutWriter* writer) {
  for (;;) {
    const ssize_t n = read(fd, buffer_.data(), buffer_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "read", path);
    if (n == 0) return absl::OkStatus();
    RETURN_IF_ERROR(writer->Append(buffer_.first(static_cast<size_t>(n))));
  }
}

void Importer::Refuse(absl::string_view name, absl::string_view why) {
  ++stats_.refused;
  store_.Log(absl::StrCat("import: refusing ", name, ": ", why));
}

void Importer::Skip(absl::string_view name, absl::string_view why) {
  ++stats_.skipped;
  store_.Log(absl::StrCat("import: skipping ", name, ": ", why));
}

}  // namespace

absl::StatusOr<ImportStats> ImportDirectory(Store* store, absl::string_view dir,
                                            const MerkleParams& params,
                                            const std::atomic<bool>* cancel) {
  ASSIGN_OR_RETURN(const std::string root, RealPath(std::string(dir)));
  struct stat st;
  if (stat(root.c_str(), &st) != 0) return ErrnoStatus(errno, "stat", root);
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir, " is not a directory"));
  }
  Importer importer(store, root, params, cancel);
  RETURN_IF_ERROR(importer.Run());
  return importer.stats();
}

}  // namespace verity::server
