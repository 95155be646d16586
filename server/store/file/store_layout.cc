// Implements the store's path scheme and its index-free start-up steps.

#include "server/store/file/store_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "server/store/name_index.h"

namespace verity::server {
namespace {

constexpr char kLockFile[] = "LOCK";
constexpr char kVersionFile[] = "VERSION";
constexpr char kVersionTempFile[] = "VERSION.tmp";

std::string HexOf(const ParsedDigest& digest) {
  return absl::BytesToHexString(digest.digest);
}

bool IsLowerHex(absl::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

std::optional<ParsedDigest> ParseHex(HashAlgorithm algorithm,
                                     absl::string_view hex) {
  if (hex.size() != 2 * DigestSize(algorithm) || !IsLowerHex(hex)) {
    return std::nullopt;
  }
  ParsedDigest digest;
  digest.algorithm = algorithm;
  digest.digest = absl::HexStringToBytes(hex);
  return digest;
}

absl::StatusOr<UniqueFd> LockRoot(FileSystem& fs, const std::string& root) {
  const std::string path = JoinPath(root, kLockFile);
  ASSIGN_OR_RETURN(UniqueFd fd,
                   OpenFile(fs, path, O_RDWR | O_CREAT | O_NOFOLLOW));
  if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return absl::FailedPreconditionError(
          absl::StrCat("blob store ", root, " is in use (", path, " locked)"));
    }
    return ErrnoStatus(errno, "flock", path);
  }
  return fd;
}

// Checked before LOCK is created, so a refused directory is left as it was.
absl::Status CheckIsStoreOrEmpty(FileSystem& fs, const std::string& root) {
  ASSIGN_OR_RETURN(const std::vector<std::string> entries, fs.ListDir(root));
  if (std::find(entries.begin(), entries.end(), kVersionFile) !=
      entries.end()) {
    return absl::OkStatus();
  }
  for (const std::string& entry : entries) {
    if (entry != kLockFile && entry != kVersionTempFile) {
      return absl::FailedPreconditionError(
          absl::StrCat(root, " is not empty and has no ", kVersionFile,
                       " file: not a verityd blob store"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckVersion(FileSystem& fs, const std::string& root) {
  const std::string path = JoinPath(root, kVersionFile);
  absl::StatusOr<std::string> version = ReadSmallRegularFile(fs, path, 64);
  // A store of version 1 (blob directories only) is one of version 2 with no
  // record yet: its VERSION says 2 before a record is written, so that a
  // verityd that knows only directories refuses it rather than take its
  // records for damaged blobs. A crash leaves either text.
  if (absl::IsNotFound(version.status()) ||
      (version.ok() && *version == kStoreVersion1Text)) {
    return ReplaceFileDurably(fs, JoinPath(root, kVersionTempFile), path,
                              kStoreVersionText);
  }
  if (!version.ok() && !absl::IsOutOfRange(version.status())) {
    return version.status();
  }
  if (!version.ok() || *version != kStoreVersionText) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, " does not say \"", absl::CHexEscape(kStoreVersionText),
        "\": the store has a layout this verityd does not know"));
  }
  return absl::OkStatus();
}

absl::Status MakeSubdirs(FileSystem& fs, const StoreLayout& layout) {
  const std::string dirs[] = {
      layout.blobs_dir(),
      layout.AlgorithmDir(HashAlgorithm::kSha256),
      layout.AlgorithmDir(HashAlgorithm::kSha512),
      layout.names_dir(),
      layout.quarantine_dir(),
      layout.tmp_dir(),
      layout.upkeep_dir(),
      layout.log_dir(),
  };
  for (const std::string& dir : dirs) {
    RETURN_IF_ERROR(fs.MakeDir(dir).status());
  }
  RETURN_IF_ERROR(FsyncDir(fs, layout.blobs_dir()));
  return FsyncDir(fs, layout.root());
}

absl::Status EmptyDir(FileSystem& fs, const std::string& dir) {
  ASSIGN_OR_RETURN(const std::vector<std::string> entries, fs.ListDir(dir));
  for (const std::string& entry : entries) {
    RETURN_IF_ERROR(fs.RemoveRecursively(JoinPath(dir, entry)));
  }
  return absl::OkStatus();
}

}  // namespace

StoreLayout::StoreLayout(std::string root) : root_(std::move(root)) {}

std::string StoreLayout::AlgorithmDir(HashAlgorithm algorithm) const {
  return JoinPath(blobs_dir(), HashAlgorithmName(algorithm));
}

std::string StoreLayout::ShardDir(const ParsedDigest& digest) const {
  return JoinPath(AlgorithmDir(digest.algorithm), HexOf(digest).substr(0, 2));
}

std::string StoreLayout::BlobDir(const ParsedDigest& digest) const {
  return JoinPath(ShardDir(digest), HexOf(digest));
}

std::string StoreLayout::QuarantineDir(const ParsedDigest& digest) const {
  return JoinPath(
      quarantine_dir(),
      absl::StrCat(HashAlgorithmName(digest.algorithm), "-", HexOf(digest)));
}

std::string StoreLayout::NameFile(absl::string_view name) const {
  return JoinPath(names_dir(), NameFileName(name));
}

std::optional<ParsedDigest> StoreLayout::ParseBlobDir(HashAlgorithm algorithm,
                                                      absl::string_view shard,
                                                      absl::string_view hex) {
  if (shard != hex.substr(0, 2)) return std::nullopt;
  return ParseHex(algorithm, hex);
}

std::optional<ParsedDigest> StoreLayout::ParseQuarantineEntry(
    absl::string_view entry) {
  const size_t dash = entry.find('-');
  if (dash == absl::string_view::npos) return std::nullopt;
  const absl::StatusOr<HashAlgorithm> algorithm =
      ParseHashAlgorithm(entry.substr(0, dash));
  if (!algorithm.ok()) return std::nullopt;
  return ParseHex(*algorithm, entry.substr(dash + 1));
}

absl::StatusOr<UniqueFd> PrepareStoreRoot(FileSystem& fs,
                                          const StoreLayout& layout) {
  if (layout.root().empty()) {
    return absl::InvalidArgumentError("the blob store root is empty");
  }
  RETURN_IF_ERROR(MakeDirs(fs, layout.root()));
  RETURN_IF_ERROR(CheckIsStoreOrEmpty(fs, layout.root()));
  ASSIGN_OR_RETURN(UniqueFd lock, LockRoot(fs, layout.root()));
  RETURN_IF_ERROR(CheckVersion(fs, layout.root()));
  RETURN_IF_ERROR(MakeSubdirs(fs, layout));
  RETURN_IF_ERROR(EmptyDir(fs, layout.tmp_dir()));
  return lock;
}

}  // namespace verity::server
