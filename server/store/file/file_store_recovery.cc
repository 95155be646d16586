// FileStore start-up: rebuilds the index from blobs/, quarantine/ and
// names/, quarantining damaged blobs and dropping names of vanished ones.

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"
#include "server/store/file/file_store.h"

namespace verity::server {
namespace {

bool IsLowerHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

bool IsShardName(absl::string_view name) {
  return name.size() == 2 && IsLowerHexDigit(name[0]) &&
         IsLowerHexDigit(name[1]);
}

}  // namespace

absl::Status FileStore::Recover() {
  absl::MutexLock mutation(&mutation_mu_);
  RETURN_IF_ERROR(LoadQuarantine());
  RETURN_IF_ERROR(ScanBlobs());
  return LoadNames();
}

absl::Status FileStore::LoadQuarantine() {
  ASSIGN_OR_RETURN(const std::vector<std::string> entries,
                   fs_.ListDir(layout_.quarantine_dir()));
  absl::MutexLock lock(&mu_);
  for (const std::string& entry : entries) {
    const std::optional<ParsedDigest> digest =
        StoreLayout::ParseQuarantineEntry(entry);
    if (digest.has_value()) {
      quarantined_.insert(digest->ToString());
    } else {
      Log(absl::StrCat("ignoring unexpected quarantine/", entry));
    }
  }
  return absl::OkStatus();
}

absl::Status FileStore::ScanBlobs() {
  for (const HashAlgorithm algorithm :
       {HashAlgorithm::kSha256, HashAlgorithm::kSha512}) {
    ASSIGN_OR_RETURN(const std::vector<std::string> shards,
                     fs_.ListDir(layout_.AlgorithmDir(algorithm)));
    RETURN_IF_ERROR(SyncShards(algorithm, shards));
    for (const std::string& shard : shards) {
      RETURN_IF_ERROR(ScanShard(algorithm, shard));
    }
  }
  return absl::OkStatus();
}

absl::Status FileStore::SyncShards(HashAlgorithm algorithm,
                                   const std::vector<std::string>& shards) {
  // A shard made by a process that died before its fsync is listed but may
  // not survive a power cut; one fsync here makes them all durable.
  RETURN_IF_ERROR(FsyncDir(fs_, layout_.AlgorithmDir(algorithm)));
  for (const std::string& shard : shards) {
    durable_shards_.insert(JoinPath(layout_.AlgorithmDir(algorithm), shard));
  }
  return absl::OkStatus();
}

absl::Status FileStore::ScanShard(HashAlgorithm algorithm,
                                  const std::string& shard) {
  const std::string dir = JoinPath(layout_.AlgorithmDir(algorithm), shard);
  if (!IsShardName(shard)) {
    Log(absl::StrCat("ignoring unexpected ", dir));
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(const std::vector<std::string> entries, fs_.ListDir(dir));
  for (const std::string& entry : entries) {
    const std::optional<ParsedDigest> digest =
        StoreLayout::ParseBlobDir(algorithm, shard, entry);
    if (digest.has_value()) {
      RETURN_IF_ERROR(CheckBlob(*digest));
    } else {
      Log(absl::StrCat("ignoring unexpected ", JoinPath(dir, entry)));
    }
  }
  return absl::OkStatus();
}

absl::Status FileStore::CheckBlob(const ParsedDigest& digest) {
  const absl::StatusOr<std::shared_ptr<const FileBlob>> blob =
      FileBlob::Open(fs_, reads_, layout_.BlobDir(digest), digest);
  // Only damage quarantines: an I/O error such as EMFILE says nothing about
  // the blob, so it fails Open instead.
  if (absl::IsDataLoss(blob.status())) {
    return MoveToQuarantine(digest, blob.status().message());
  }
  // A record a later verityd wrote is neither served nor taken for damage.
  if (absl::IsUnimplemented(blob.status())) {
    Log(absl::StrCat("not serving ", blob.status().message()));
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(blob.status());
  const std::string text = digest.ToString();
  const std::optional<RecordFooter>& record = (*blob)->record();
  absl::StatusOr<bool> tree_manifest =
      record.has_value()
          ? record->tree_manifest
          : HasTreeManifestMark(fs_, layout_.BlobDir(digest), text);
  if (absl::IsDataLoss(tree_manifest.status())) {
    return MoveToQuarantine(digest, tree_manifest.status().message());
  }
  RETURN_IF_ERROR(tree_manifest.status());
  ASSIGN_OR_RETURN(const absl::Time last_used, DescriptorTime(digest));
  bool stale_copy;
  {
    absl::MutexLock lock(&mu_);
    AddEntry(text,
             Entry{(*blob)->descriptor(), (*blob)->geometry().tree_size(),
                   (*blob)->fsverity_signature(), *tree_manifest, last_used});
    stale_copy = quarantined_.erase(text) > 0;
  }
  // A re-put that crashed before removing the damaged copy.
  return stale_copy ? DropQuarantined(digest) : absl::OkStatus();
}

absl::Status FileStore::LoadNames() {
  ASSIGN_OR_RETURN(const std::vector<std::string> files,
                   fs_.ListDir(layout_.names_dir()));
  bool dropped = false;
  for (const std::string& file : files) {
    ASSIGN_OR_RETURN(const bool kept, LoadNameFile(file));
    dropped |= !kept;
  }
  return dropped ? FsyncDir(fs_, layout_.names_dir()) : absl::OkStatus();
}

absl::StatusOr<bool> FileStore::LoadNameFile(const std::string& file) {
  const std::string path = JoinPath(layout_.names_dir(), file);
  // Not a regular file (a FIFO, a symlink) or too large: not a name file
  // verityd wrote, dropped like a malformed one.
  const absl::StatusOr<std::string> contents =
      ReadSmallRegularFile(fs_, path, kMaxNameHistoryFileSize);
  if (!contents.ok() && !absl::IsOutOfRange(contents.status()) &&
      !absl::IsFailedPrecondition(contents.status())) {
    return contents.status();
  }
  const absl::StatusOr<NameHistory> history =
      contents.ok() ? DecodeNameHistory(*contents)
                    : absl::StatusOr<NameHistory>(contents.status());
  std::string problem;
  if (!history.ok()) {
    problem = std::string(history.status().message());
  } else if (NameFileName(history->name) != file) {
    problem = "the file name is not the hash of the name it holds";
  } else {
    const NameVersion& current = history->versions[0];
    const std::string text = current.digest.ToString();
    absl::MutexLock lock(&mu_);
    if (blobs_.count(text) > 0 || quarantined_.contains(text)) {
      names_.Set(history->name, text, current.statement, current.log_index);
      return true;
    }
    problem = absl::StrCat("it names ", text, ", which is gone");
  }
  Log(absl::StrCat("dropping ", path, ": ", problem));
  RETURN_IF_ERROR(fs_.Unlink(path));
  return false;
}

}  // namespace verity::server
