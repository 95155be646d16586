// Implements FilePutWriter: write and hash as data arrives, then make the
// staged blob durable before the store installs it.

#include "server/store/file/file_put_writer.h"

#include <fcntl.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/hash.h"
#include "lib/status_macros.h"
#include "server/store/name_index.h"

namespace verity::server {
namespace {

// Writeback of the data file is started every this many bytes.
constexpr uint64_t kWritebackBytes = 8 << 20;

}  // namespace

absl::StatusOr<std::unique_ptr<FilePutWriter>> FilePutWriter::Create(
    FileSystem& fs, std::string dir, const MerkleParams& params,
    uint64_t max_bytes, InstallFn install) {
  const std::string data_path = JoinPath(dir, "data");
  absl::StatusOr<UniqueFd> data_fd =
      OpenFile(fs, data_path, O_WRONLY | O_CREAT | O_EXCL);
  if (!data_fd.ok()) {
    fs.RemoveRecursively(dir).IgnoreError();  // tmp/ is also emptied at Open
    return data_fd.status();
  }
  return std::unique_ptr<FilePutWriter>(
      new FilePutWriter(fs, std::move(dir), params, max_bytes,
                        std::move(install), *std::move(data_fd)));
}

FilePutWriter::FilePutWriter(FileSystem& fs, std::string dir,
                             const MerkleParams& params, uint64_t max_bytes,
                             InstallFn install, UniqueFd data_fd)
    : fs_(fs),
      dir_(std::move(dir)),
      max_bytes_(max_bytes),
      install_(std::move(install)),
      data_fd_(std::move(data_fd)),
      builder_(params) {}

FilePutWriter::~FilePutWriter() { Finish(); }

void FilePutWriter::Finish() {
  if (finished_) return;
  finished_ = true;
  data_fd_ = UniqueFd();
  // A leftover is harmless: the store empties tmp/ when it opens.
  fs_.RemoveRecursively(dir_).IgnoreError();
}

absl::Status FilePutWriter::Fail(absl::Status status) {
  Finish();
  failure_ = status;
  return status;
}

absl::Status FilePutWriter::Ended() const {
  if (!failure_.ok()) return failure_;
  return absl::FailedPreconditionError("the Put was already committed");
}

absl::Status FilePutWriter::Append(absl::Span<const uint8_t> data) {
  if (finished_) return Ended();
  if (data.size() > max_bytes_ - size_) {
    return Fail(absl::ResourceExhaustedError(absl::StrCat(
        "blob exceeds the store's limit of ", max_bytes_, " bytes")));
  }
  absl::Status status =
      WriteAll(fs_, data_fd_.get(), data, JoinPath(dir_, "data"));
  if (status.ok()) status = builder_.Update(data);
  if (!status.ok()) return Fail(std::move(status));
  size_ += data.size();
  if (size_ - written_back_ >= kWritebackBytes) {
    fs_.StartWriteback(data_fd_.get(), written_back_, size_ - written_back_);
    written_back_ = size_;
  }
  return absl::OkStatus();
}

absl::StatusOr<PutResult> FilePutWriter::Commit(
    const std::optional<ParsedDigest>& expected, absl::string_view name) {
  if (finished_) return Ended();
  if (!name.empty()) {
    absl::Status valid = ValidateBlobName(name);
    if (!valid.ok()) return Fail(std::move(valid));
  }
  absl::StatusOr<StagedBlob> staged = Stage(expected, name);
  if (!staged.ok()) return Fail(staged.status());
  absl::StatusOr<PutResult> result = install_(*staged);
  if (!result.ok()) return Fail(result.status());
  Finish();
  return result;
}

absl::StatusOr<StagedBlob> FilePutWriter::Stage(
    const std::optional<ParsedDigest>& expected, absl::string_view name) {
  ASSIGN_OR_RETURN(const MerkleTree tree, builder_.Finish());
  StagedBlob staged;
  staged.digest.algorithm = tree.descriptor.hash_algorithm;
  staged.digest.digest = tree.digest;
  staged.digest_text = staged.digest.ToString();
  if (expected.has_value() && (expected->algorithm != staged.digest.algorithm ||
                               expected->digest != staged.digest.digest)) {
    return absl::DataLossError(
        absl::StrCat("content hashes to ", staged.digest_text,
                     ", not the expected ", expected->ToString()));
  }
  const std::string data_path = JoinPath(dir_, "data");
  RETURN_IF_ERROR(fs_.Fsync(data_fd_.get(), data_path));
  RETURN_IF_ERROR(data_fd_.Close(data_path));
  ASSIGN_OR_RETURN(const std::string descriptor, tree.descriptor.Serialize());
  RETURN_IF_ERROR(WriteNewFileDurably(fs_, JoinPath(dir_, "tree"), tree.tree));
  RETURN_IF_ERROR(
      WriteNewFileDurably(fs_, JoinPath(dir_, "descriptor"), descriptor));
  RETURN_IF_ERROR(FsyncDir(fs_, dir_));
  staged.dir = dir_;
  staged.descriptor = tree.descriptor;
  staged.tree_size = tree.tree.size();
  staged.name = std::string(name);
  return staged;
}

}  // namespace verity::server
