// Implements FileStore's operations; start-up recovery is in
// file_store_recovery.cc.

#include "server/store/file/file_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/status_macros.h"
#include "lib/fec/dm_verity_fec.h"
#include "lib/hash/hash.h"
#include "server/store/put_pipeline.h"

namespace verity::server {
namespace {

// Digests normally come from ParseDigest; one built by hand must not turn
// into a strange path.
absl::Status ValidateDigest(const ParsedDigest& digest) {
  if (!IsValidHashAlgorithm(static_cast<uint8_t>(digest.algorithm)) ||
      digest.digest.size() != DigestSize(digest.algorithm)) {
    return absl::InvalidArgumentError("malformed digest");
  }
  return absl::OkStatus();
}

// The file whose modification time is a blob's (FileStore::Entry::last_used,
// a quarantine's time): a record itself, a blob directory's descriptor.
absl::StatusOr<UniqueFd> OpenTimeFile(FileSystem& fs,
                                      const std::string& blob_path) {
  ASSIGN_OR_RETURN(
      UniqueFd fd,
      fs.OpenAt(AT_FDCWD, blob_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, "fstat", blob_path);
  if (!S_ISDIR(st.st_mode)) return fd;
  return fs.OpenAt(fd.get(), "descriptor", O_RDONLY | O_NOFOLLOW | O_NONBLOCK,
                   0);
}

}  // namespace

FileStore::FileStore(const FileStoreOptions& options, FileSystem& fs,
                     UniqueFd lock)
    : options_(options),
      fs_(fs),
      layout_(options.root),
      lock_(std::move(lock)) {}

absl::StatusOr<std::unique_ptr<FileStore>> FileStore::Open(
    const FileStoreOptions& options) {
  if (options.max_blob_bytes > kMaxDataSize) {
    return absl::InvalidArgumentError("max_blob_bytes exceeds kMaxDataSize");
  }
  if (options.fec_roots != 0)
    RETURN_IF_ERROR(ValidateFecRoots(options.fec_roots));
  if (options.record_max_bytes > kMaxRecordDataBytes) {
    return absl::InvalidArgumentError(
        "record_max_bytes exceeds kMaxRecordDataBytes");
  }
  RETURN_IF_ERROR(ValidateNameHistory(options.name_history));
  FileSystem& fs =
      options.file_system != nullptr ? *options.file_system : PosixFileSystem();
  ASSIGN_OR_RETURN(UniqueFd lock,
                   PrepareStoreRoot(fs, StoreLayout(options.root)));
  std::unique_ptr<FileStore> store(new FileStore(options, fs, std::move(lock)));
  ASSIGN_OR_RETURN(store->group_sync_, GroupSync::Create(fs, options.root));
  RETURN_IF_ERROR(store->Recover());
  return store;
}

absl::StatusOr<std::unique_ptr<PutWriter>> FileStore::StartPut(
    const MerkleParams& params, const std::optional<ParsedDigest>& expected,
    std::optional<uint64_t> size) {
  // Before the first write: a syncfs that fails from here on may have lost
  // some of this Put's.
  return NewPut(params, expected, size, group_sync_->Mark(), nullptr);
}

absl::StatusOr<std::unique_ptr<PutPipeline>> FileStore::NewPut(
    const MerkleParams& params, const std::optional<ParsedDigest>& expected,
    std::optional<uint64_t> size, uint64_t mark, Batch* batch) {
  RETURN_IF_ERROR(ValidatePutParams(params));
  RETURN_IF_ERROR(CheckPutSize(size, options_.max_blob_bytes));
  // Without a stream, the Put reads its content back to encode the area.
  ASSIGN_OR_RETURN(std::optional<FecStreamEncoder> fec_stream,
                   FecStreamFor(params, size, options_.fec_roots));
  // A small blob is one file: one inode to create, one to open for a read.
  const FileBlobSink::Shape shape =
      size.has_value() && *size <= options_.record_max_bytes
          ? FileBlobSink::Shape::kRecord
          : FileBlobSink::Shape::kDirectory;
  std::string path = TempPath("put-");
  if (shape == FileBlobSink::Shape::kDirectory) {
    RETURN_IF_ERROR(fs_.MakeDir(path).status());
  }
  // A batch's Puts are made durable by PutBatch, once for all of them.
  SyncFn sync = [this, mark] { return group_sync_->Sync(mark); };
  if (batch != nullptr) sync = [] { return absl::OkStatus(); };
  ASSIGN_OR_RETURN(std::unique_ptr<FileBlobSink> sink,
                   FileBlobSink::Create(
                       fs_, shape, std::move(path), std::move(sync),
                       [this, mark, batch](const std::string& staged,
                                           const SealedBlob& blob) {
                         return PublishStaged(staged, blob, mark, batch);
                       },
                       options_.fec_roots, std::move(fec_stream)));
  // No executor of its own: a file Put waits only on the disk, never on
  // capacity other Puts hold, and the caller's I/O threads bound that.
  return std::make_unique<PutPipeline>(
      params,
      PutPipelineOptions{options_.max_blob_bytes, expected, nullptr, size},
      std::move(sink));
}

absl::StatusOr<PutResult> FileStore::PublishStaged(const std::string& path,
                                                   const SealedBlob& blob,
                                                   uint64_t mark,
                                                   Batch* batch) {
  absl::MutexLock mutation(&mutation_mu_);
  const std::string& text = blob.digest_text;
  // Another Put of this content between its rename and its entry: whether
  // this one finds it stored depends on how that one ends.
  const auto settled = [this, &text] {
    mutation_mu_.AssertReaderHeld();
    return !publishing_.contains(text);
  };
  mutation_mu_.Await(absl::Condition(&settled));
  bool present;
  {
    absl::ReaderMutexLock lock(&mu_);
    present = blobs_.count(text) > 0;
  }
  if (!present) {
    RETURN_IF_ERROR(MakeShardDir(blob.digest));
    RETURN_IF_ERROR(fs_.Rename(path, layout_.BlobDir(blob.digest)));
    // Served only once durable, so that no reader sees a blob a crash can
    // take away. The syncfs is shared with the Puts in flight, which must
    // not wait for this one's lock to reach it; a batch's, with the rest of
    // the batch (SettleBatch), which answers for it.
    publishing_.insert(text);
    if (batch != nullptr) {
      batch->renamed.emplace_back(batch->index, blob);
      return PutResult{};
    }
    mutation_mu_.Unlock();
    const absl::Status synced = group_sync_->Sync(mark);
    mutation_mu_.Lock();
    RETURN_IF_ERROR(Settle(blob, synced));
  }
  if (present && !blob.fsverity_signature.empty()) {
    RETURN_IF_ERROR(ReplaceSignature(blob.digest, blob.fsverity_signature));
  }
  if (present && blob.tree_manifest) {
    RETURN_IF_ERROR(MarkTreeManifest(blob.digest));
  }
  if (!blob.name.name.empty())
    RETURN_IF_ERROR(WriteName(blob.name, blob.digest));
  absl::ReaderMutexLock lock(&mu_);
  PutResult result{InfoOf(text, blobs_.at(text)), present};
  result.info.name_statement = blob.name.statement;
  return result;
}

absl::Status FileStore::Settle(const SealedBlob& blob,
                               const absl::Status& synced) {
  const std::string& text = blob.digest_text;
  publishing_.erase(text);
  if (!synced.ok() && TakeBack(blob)) return synced;
  {
    absl::MutexLock lock(&mu_);
    AddEntry(text,
             Entry{blob.tree.descriptor, blob.tree.tree.size(),
                   blob.fsverity_signature, blob.tree_manifest, absl::Now()});
    quarantined_.erase(text);
  }
  RETURN_IF_ERROR(synced);
  // The served copy is durable, so the damaged one can go. Failing to
  // remove it must not fail the Put: the next Open drops it.
  const absl::Status dropped = DropQuarantined(blob.digest);
  if (!dropped.ok()) Log(dropped.message());
  return absl::OkStatus();
}

absl::Status FileStore::ReplaceSignature(const ParsedDigest& digest,
                                         const std::string& signature) {
  const std::string text = digest.ToString();
  {
    absl::ReaderMutexLock lock(&mu_);
    if (blobs_.at(text).fsverity_signature == signature) {
      return absl::OkStatus();
    }
  }
  ASSIGN_OR_RETURN(const bool rewritten,
                   RewriteRecord(digest, &signature, false));
  // Renamed over the old one: a crash leaves the old signature or the new.
  if (!rewritten) {
    RETURN_IF_ERROR(ReplaceFileDurably(
        fs_, TempPath("sig-"),
        JoinPath(layout_.BlobDir(digest), kSignatureFileName), signature));
  }
  absl::MutexLock lock(&mu_);
  blobs_.at(text).fsverity_signature = signature;
  return absl::OkStatus();
}

absl::Status FileStore::MarkTreeManifest(const ParsedDigest& digest) {
  const std::string text = digest.ToString();
  {
    absl::ReaderMutexLock lock(&mu_);
    if (blobs_.at(text).tree_manifest) return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(const bool rewritten, RewriteRecord(digest, nullptr, true));
  if (!rewritten) {
    RETURN_IF_ERROR(ReplaceFileDurably(
        fs_, TempPath("mark-"),
        JoinPath(layout_.BlobDir(digest), kTreeManifestFileName), ""));
  }
  absl::MutexLock lock(&mu_);
  blobs_.at(text).tree_manifest = true;
  return absl::OkStatus();
}

absl::StatusOr<bool> FileStore::RewriteRecord(const ParsedDigest& digest,
                                              const std::string* signature,
                                              bool tree_manifest) {
  const std::string path = layout_.BlobDir(digest);
  ASSIGN_OR_RETURN(const std::shared_ptr<const FileBlob> blob,
                   FileBlob::Open(fs_, reads_, path, digest));
  if (!blob->record().has_value()) return false;
  ASSIGN_OR_RETURN(
      const std::string record,
      blob->RecordWith(
          signature != nullptr ? *signature : blob->fsverity_signature(),
          tree_manifest || blob->record()->tree_manifest));
  // Renamed over the old one: a crash leaves the old record or the new, and
  // the new one's mtime, the blob's time, is now.
  RETURN_IF_ERROR(ReplaceFileDurably(fs_, TempPath("record-"), path, record));
  return true;
}

bool FileStore::TakeBack(const SealedBlob& blob) {
  // Not fsync'd either: after a crash the blob is there whole, or absent.
  if (!fs_.Rename(layout_.BlobDir(blob.digest), TempPath("undo-")).ok()) {
    return false;
  }
  Log(absl::StrCat("put of ", blob.digest_text,
                   " undone: it could not be made durable"));
  return true;
}

absl::Status FileStore::MakeShardDir(const ParsedDigest& digest) {
  const std::string shard = layout_.ShardDir(digest);
  if (durable_shards_.contains(shard)) return absl::OkStatus();
  // Made or not by this call: it may be the leftover of a Put whose fsync
  // failed, so it is fsync'd either way.
  RETURN_IF_ERROR(fs_.MakeDir(shard).status());
  RETURN_IF_ERROR(FsyncDir(fs_, layout_.AlgorithmDir(digest.algorithm)));
  durable_shards_.insert(shard);
  return absl::OkStatus();
}

absl::Status FileStore::WriteName(const NameWrite& write,
                                  const ParsedDigest& digest) {
  const std::string digest_text = digest.ToString();
  std::string current;
  {
    absl::ReaderMutexLock lock(&mu_);
    const std::string* statement = names_.StatementOf(write.name);
    if (statement != nullptr) current = *statement;
  }
  // mutation_mu_ is held from here to the rename: no other write of the name
  // comes between the check and this one.
  RETURN_IF_ERROR(RunNameCheck(write, digest, current));
  // A name file that cannot be read (none, or damaged) starts a new history.
  const absl::StatusOr<NameHistory> before = ReadHistory(write.name);
  const NameHistory next = NextNameHistory(
      before.ok() ? &*before : nullptr, write.name,
      NameVersion{digest, write.statement, absl::Now(), write.log_index},
      options_.name_history);
  const std::string temp = TempPath("name-");
  absl::Status status = WriteNewFileDurably(fs_, temp, EncodeNameHistory(next));
  if (status.ok()) status = fs_.Rename(temp, layout_.NameFile(write.name));
  if (!status.ok()) {
    fs_.Unlink(temp).IgnoreError();  // tmp/ is also emptied at Open
    return status;
  }
  {
    // The file is in place: the index mirrors it, fsync'd or not.
    absl::MutexLock lock(&mu_);
    names_.Set(write.name, digest_text, write.statement, write.log_index);
  }
  return FsyncDir(fs_, layout_.names_dir());
}

absl::StatusOr<NameHistory> FileStore::ReadHistory(
    absl::string_view name) const {
  ASSIGN_OR_RETURN(const std::string contents,
                   ReadSmallRegularFile(fs_, layout_.NameFile(name),
                                        kMaxNameHistoryFileSize));
  ASSIGN_OR_RETURN(NameHistory history, DecodeNameHistory(contents));
  if (history.name != name) {
    return absl::DataLossError(
        absl::StrCat("the name file of \"", name, "\" holds another name"));
  }
  return history;
}

absl::StatusOr<NameHistory> FileStore::History(absl::string_view name) const {
  RETURN_IF_ERROR(ValidateBlobName(name));
  absl::StatusOr<NameHistory> history = ReadHistory(name);
  if (absl::IsNotFound(history.status())) {
    return absl::NotFoundError(absl::StrCat("no blob is named \"", name, "\""));
  }
  return history;
}

absl::StatusOr<NamePage> FileStore::ListNames(absl::string_view after,
                                              size_t limit) const {
  // In the order of their files' names: the hashes of the names.
  std::vector<std::pair<std::string, std::string>> files;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (const std::string& name : names_.Names()) {
      std::string file = NameFileName(name);
      if (file > after) files.emplace_back(std::move(file), name);
    }
  }
  std::sort(files.begin(), files.end());
  NamePage page;
  for (const auto& [file, name] : files) {
    if (!page.names.empty() && page.names.size() >= limit) {
      page.next = NameFileName(page.names.back().name);
      break;
    }
    absl::StatusOr<NameHistory> history = ReadHistory(name);
    if (absl::IsNotFound(history.status())) continue;  // deleted meanwhile
    RETURN_IF_ERROR(history.status());
    page.names.push_back(*std::move(history));
  }
  return page;
}

absl::StatusOr<BlobInfo> FileStore::SetName(const ParsedDigest& digest,
                                            const NameWrite& write) {
  RETURN_IF_ERROR(ValidateDigest(digest));
  RETURN_IF_ERROR(CheckNameWrite(write));
  const std::string text = digest.ToString();
  absl::MutexLock mutation(&mutation_mu_);
  const absl::Status served = ServedStatus(text);
  if (!served.ok()) {
    return absl::NotFoundError(
        absl::StrCat("cannot name ", text, ": ", served.message()));
  }
  RETURN_IF_ERROR(WriteName(write, digest));
  absl::ReaderMutexLock lock(&mu_);
  BlobInfo info = InfoOf(text, blobs_.at(text));
  info.name_statement = write.statement;
  return info;
}

absl::StatusOr<std::shared_ptr<const Blob>> FileStore::OpenBlob(
    const ParsedDigest& digest) const {
  RETURN_IF_ERROR(ValidateDigest(digest));
  const std::string text = digest.ToString();
  RETURN_IF_ERROR(ServedStatus(text));
  absl::StatusOr<std::shared_ptr<const Blob>> blob =
      FileBlob::Open(fs_, reads_, layout_.BlobDir(digest), digest);
  if (absl::IsNotFound(blob.status())) {
    // Deleted or quarantined since the check: say which.
    RETURN_IF_ERROR(ServedStatus(text));
    return absl::NotFoundError(absl::StrCat("no blob ", text));
  }
  return blob;
}

absl::Status FileStore::ServedStatus(const std::string& digest_text) const {
  absl::ReaderMutexLock lock(&mu_);
  if (quarantined_.contains(digest_text)) {
    return absl::DataLossError(
        absl::StrCat("blob ", digest_text, " is quarantined"));
  }
  if (blobs_.count(digest_text) == 0) {
    return absl::NotFoundError(absl::StrCat("no blob ", digest_text));
  }
  return absl::OkStatus();
}

absl::StatusOr<NamedBlob> FileStore::LookupName(absl::string_view name) const {
  RETURN_IF_ERROR(ValidateBlobName(name));
  std::string text;
  NamedBlob named;
  {
    absl::ReaderMutexLock lock(&mu_);
    const std::string name_string(name);
    const std::string* found = names_.Find(name_string);
    if (found == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("no blob is named \"", name, "\""));
    }
    text = *found;
    named.statement = *names_.StatementOf(name_string);
    named.log_index = names_.LogIndexOf(name_string);
  }
  ASSIGN_OR_RETURN(named.digest, ParseDigest(text));
  return named;
}

absl::StatusOr<BlobInfo> FileStore::Stat(const ParsedDigest& digest) const {
  RETURN_IF_ERROR(ValidateDigest(digest));
  const std::string text = digest.ToString();
  RETURN_IF_ERROR(ServedStatus(text));
  absl::ReaderMutexLock lock(&mu_);
  const auto it = blobs_.find(text);
  // Deleted between the two locks.
  if (it == blobs_.end()) return absl::NotFoundError("no blob " + text);
  return InfoOf(text, it->second);
}

absl::StatusOr<std::vector<BlobInfo>> FileStore::List(absl::string_view after,
                                                      size_t limit) const {
  std::vector<BlobInfo> infos;
  absl::ReaderMutexLock lock(&mu_);
  for (auto it = blobs_.upper_bound(std::string(after));
       it != blobs_.end() && infos.size() < limit; ++it) {
    infos.push_back(InfoOf(it->first, it->second));
  }
  return infos;
}

absl::Status FileStore::DeleteBlob(const ParsedDigest& digest) {
  return RemoveBlob(digest, absl::InfiniteFuture()).status();
}

absl::StatusOr<std::vector<ParsedDigest>> FileStore::DeleteUnusedSince(
    absl::Span<const ParsedDigest> blobs, absl::Time cutoff) {
  std::vector<ParsedDigest> deleted;
  for (const ParsedDigest& digest : blobs) {
    const absl::StatusOr<bool> removed = RemoveBlob(digest, cutoff);
    if (absl::IsNotFound(removed.status())) continue;  // deleted meanwhile
    RETURN_IF_ERROR(removed.status());
    if (*removed) deleted.push_back(digest);
  }
  return deleted;
}

absl::StatusOr<bool> FileStore::RemoveBlob(const ParsedDigest& digest,
                                           absl::Time unused_before) {
  RETURN_IF_ERROR(ValidateDigest(digest));
  const std::string text = digest.ToString();
  std::string trash;
  absl::Status moved;
  {
    absl::MutexLock mutation(&mutation_mu_);
    const absl::Status served = ServedStatus(text);
    if (absl::IsNotFound(served)) return served;
    if (served.ok()) {
      absl::ReaderMutexLock lock(&mu_);
      if (blobs_.at(text).last_used >= unused_before) return false;
    } else if (unused_before != absl::InfiniteFuture() &&
               QuarantineTime(digest) >= unused_before) {
      return false;
    }
    // Not OK but not NOT_FOUND: it is quarantined.
    moved = served.ok() ? MoveToTrash(layout_.BlobDir(digest),
                                      layout_.ShardDir(digest), &trash)
                        : MoveToTrash(layout_.QuarantineDir(digest),
                                      layout_.quarantine_dir(), &trash);
    if (trash.empty()) return moved;
    std::vector<std::string> names;
    {
      absl::MutexLock lock(&mu_);
      EraseEntry(text);
      quarantined_.erase(text);
      names = names_.RemoveAllOf(text);
    }
    // Gone, but maybe not durably: a crash could bring the blob back, and
    // its name files with it. What is left is dropped when the store next
    // opens (tmp/ emptied, names of missing blobs removed).
    if (!moved.ok()) return moved;
    RemoveNameFiles(names);
  }
  // Outside the lock: removing a large file takes a while. A leftover is
  // removed when the store next opens.
  const absl::Status removed = fs_.RemoveRecursively(trash);
  if (!removed.ok()) Log(removed.message());
  return true;
}

absl::StatusOr<absl::Time> FileStore::LastUsed(
    const ParsedDigest& digest) const {
  RETURN_IF_ERROR(ValidateDigest(digest));
  const std::string text = digest.ToString();
  absl::ReaderMutexLock lock(&mu_);
  const auto it = blobs_.find(text);
  if (it != blobs_.end()) return it->second.last_used;
  if (quarantined_.contains(text)) return QuarantineTime(digest);
  return absl::NotFoundError(absl::StrCat("no blob ", text));
}

absl::Time FileStore::QuarantineTime(const ParsedDigest& digest) const {
  const std::string path = layout_.QuarantineDir(digest);
  absl::StatusOr<UniqueFd> fd = OpenTimeFile(fs_, path);
  if (!fd.ok()) return absl::InfinitePast();
  absl::StatusOr<absl::Time> time = fs_.ModifiedTime(fd->get(), path);
  return time.ok() ? *time : absl::InfinitePast();
}

absl::StatusOr<std::vector<ParsedDigest>> FileStore::ListQuarantined(
    absl::string_view after, size_t limit) const {
  std::vector<std::string> texts;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (const std::string& text : quarantined_) {
      if (text > after) texts.push_back(text);
    }
  }
  std::sort(texts.begin(), texts.end());
  if (texts.size() > limit) texts.resize(limit);
  std::vector<ParsedDigest> digests;
  for (const std::string& text : texts) {
    ASSIGN_OR_RETURN(ParsedDigest digest, ParseDigest(text));
    digests.push_back(std::move(digest));
  }
  return digests;
}

absl::StatusOr<absl::Time> FileStore::MarkUsed(
    const ParsedDigest& digest, absl::Time now,
    absl::Duration refresh_after) const {
  RETURN_IF_ERROR(ValidateDigest(digest));
  const std::string text = digest.ToString();
  // Under mutation_mu_: a RemoveBlob decides on the time this sets.
  absl::MutexLock mutation(&mutation_mu_);
  absl::Time before;
  {
    absl::ReaderMutexLock lock(&mu_);
    const auto it = blobs_.find(text);
    if (it == blobs_.end()) {
      if (quarantined_.contains(text)) return absl::InfinitePast();
      return absl::NotFoundError(absl::StrCat("no blob ", text));
    }
    before = it->second.last_used;
  }
  if (before >= now - refresh_after) return before;
  const std::string path = layout_.BlobDir(digest);
  ASSIGN_OR_RETURN(const UniqueFd fd, OpenTimeFile(fs_, path));
  RETURN_IF_ERROR(fs_.SetModifiedTime(fd.get(), now, path));
  absl::MutexLock lock(&mu_);
  blobs_.at(text).last_used = now;
  return before;
}

absl::StatusOr<absl::Time> FileStore::DescriptorTime(
    const ParsedDigest& digest) const {
  const std::string path = layout_.BlobDir(digest);
  ASSIGN_OR_RETURN(const UniqueFd fd, OpenTimeFile(fs_, path));
  return fs_.ModifiedTime(fd.get(), path);
}

absl::StatusOr<std::optional<SharedRecord>> FileStore::ReadRecord(
    absl::string_view key) const {
  RETURN_IF_ERROR(CheckSharedRecord(key, ""));
  absl::StatusOr<std::string> body = ReadSmallRegularFile(
      fs_, JoinPath(layout_.upkeep_dir(), std::string(key)),
      kMaxSharedRecordSize);
  if (absl::IsNotFound(body.status())) return std::nullopt;
  RETURN_IF_ERROR(body.status());
  std::string version = Sha256Hex(*body);
  return SharedRecord{*std::move(body), std::move(version)};
}

absl::StatusOr<SharedRecord> FileStore::WriteRecord(
    absl::string_view key, absl::string_view body,
    const std::optional<std::string>& expected) {
  RETURN_IF_ERROR(CheckSharedRecord(key, body));
  absl::MutexLock lock(&record_mu_);
  ASSIGN_OR_RETURN(const std::optional<SharedRecord> current, ReadRecord(key));
  const bool unchanged = current.has_value() ? expected.has_value() &&
                                                   *expected == current->version
                                             : !expected.has_value();
  if (!unchanged) {
    return absl::FailedPreconditionError(
        absl::StrCat("the shared record ", key, " was replaced meanwhile"));
  }
  RETURN_IF_ERROR(ReplaceFileDurably(
      fs_, TempPath("record-"),
      JoinPath(layout_.upkeep_dir(), std::string(key)), body));
  return SharedRecord{std::string(body), Sha256Hex(body)};
}

absl::StatusOr<std::string> FileStore::ReadLogObject(
    absl::string_view path) const {
  RETURN_IF_ERROR(CheckLogObject(path, ""));
  return ReadSmallRegularFile(
      fs_, JoinPath(layout_.log_dir(), std::string(path)), kMaxLogObjectSize);
}

absl::Status FileStore::WriteLogObject(absl::string_view path,
                                       absl::string_view bytes) {
  RETURN_IF_ERROR(CheckLogObject(path, bytes));
  // Each folder on the way, made durable in its parent when it is new.
  std::string dir = layout_.log_dir();
  const std::vector<absl::string_view> parts = absl::StrSplit(path, '/');
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string parent = dir;
    dir = JoinPath(dir, std::string(parts[i]));
    ASSIGN_OR_RETURN(const bool made, fs_.MakeDir(dir));
    if (made) RETURN_IF_ERROR(FsyncDir(fs_, parent));
  }
  return ReplaceFileDurably(fs_, TempPath("log-"),
                            JoinPath(layout_.log_dir(), std::string(path)),
                            bytes);
}

absl::Status FileStore::DeleteLogObject(absl::string_view path) {
  RETURN_IF_ERROR(CheckLogObject(path, ""));
  const std::string file = JoinPath(layout_.log_dir(), std::string(path));
  const absl::Status removed = fs_.Unlink(file);
  if (absl::IsNotFound(removed)) return absl::OkStatus();
  RETURN_IF_ERROR(removed);
  return FsyncDir(fs_, DirName(file));
}

absl::StatusOr<tlog::LogObjectPage> FileStore::ListLogObjects(
    absl::string_view folder, absl::string_view after) const {
  RETURN_IF_ERROR(CheckLogFolder(folder));
  constexpr size_t kPage = 1000;
  const std::string dir = JoinPath(layout_.log_dir(), std::string(folder));
  absl::StatusOr<std::vector<std::string>> files = fs_.ListDir(dir);
  if (absl::IsNotFound(files.status())) return tlog::LogObjectPage{};
  RETURN_IF_ERROR(files.status());
  tlog::LogObjectPage page;
  for (const std::string& file : *files) {  // sorted
    std::string path = absl::StrCat(folder, file);
    if (path <= after) continue;
    if (page.objects.size() == kPage) {
      page.next = page.objects.back().path;
      break;
    }
    const std::string full = JoinPath(dir, file);
    absl::StatusOr<UniqueFd> fd =
        fs_.OpenAt(AT_FDCWD, full, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
    if (absl::IsNotFound(fd.status())) continue;  // deleted since
    RETURN_IF_ERROR(fd.status());
    struct stat st;
    if (fstat(fd->get(), &st) != 0) return ErrnoStatus(errno, "fstat", full);
    ASSIGN_OR_RETURN(const absl::Time written,
                     fs_.ModifiedTime(fd->get(), full));
    page.objects.push_back(
        {std::move(path), static_cast<uint64_t>(st.st_size), written});
  }
  return page;
}

absl::Status FileStore::DeleteName(absl::string_view name) {
  RETURN_IF_ERROR(ValidateBlobName(name));
  const std::string name_string(name);
  absl::MutexLock mutation(&mutation_mu_);
  {
    absl::ReaderMutexLock lock(&mu_);
    if (names_.Find(name_string) == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("no blob is named \"", name, "\""));
    }
  }
  const absl::Status removed = fs_.Unlink(layout_.NameFile(name));
  if (!removed.ok() && !absl::IsNotFound(removed)) return removed;
  {
    absl::MutexLock lock(&mu_);
    names_.Remove(name_string);
  }
  return FsyncDir(fs_, layout_.names_dir());
}

absl::Status FileStore::Quarantine(const ParsedDigest& digest,
                                   absl::string_view reason) {
  RETURN_IF_ERROR(ValidateDigest(digest));
  absl::MutexLock mutation(&mutation_mu_);
  const absl::Status served = ServedStatus(digest.ToString());
  if (!served.ok()) return absl::IsNotFound(served) ? served : absl::OkStatus();
  return MoveToQuarantine(digest, reason);
}

absl::Status FileStore::MoveToQuarantine(const ParsedDigest& digest,
                                         absl::string_view reason) {
  const std::string text = digest.ToString();
  // A stale copy (from a crash mid re-put) would make the rename fail.
  RETURN_IF_ERROR(DropQuarantined(digest));
  RETURN_IF_ERROR(
      fs_.Rename(layout_.BlobDir(digest), layout_.QuarantineDir(digest)));
  {
    absl::MutexLock lock(&mu_);
    EraseEntry(text);
    quarantined_.insert(text);
  }
  Log(absl::StrCat("quarantined ", text, ": ", reason));
  // When: garbage collection keeps it a grace from now (QuarantineTime). A
  // blob without a descriptor to mark goes at the next collection.
  const std::string path = layout_.QuarantineDir(digest);
  if (absl::StatusOr<UniqueFd> fd = OpenTimeFile(fs_, path); fd.ok()) {
    // Durable with the rename: a power cut must not leave the blob's older
    // time, which a collection would take for a quarantine past its grace.
    if (fs_.SetModifiedTime(fd->get(), absl::Now(), path).ok()) {
      fs_.Fsync(fd->get(), path).IgnoreError();
    }
  }
  // Its new entry first: a crash between the two fsyncs must not leave the
  // blob in neither directory (it did, losing it with its names).
  RETURN_IF_ERROR(FsyncDir(fs_, layout_.quarantine_dir()));
  return FsyncDir(fs_, layout_.ShardDir(digest));
}

absl::Status FileStore::DropQuarantined(const ParsedDigest& digest) {
  std::string trash;
  const absl::Status moved = MoveToTrash(layout_.QuarantineDir(digest),
                                         layout_.quarantine_dir(), &trash);
  if (trash.empty() && absl::IsNotFound(moved)) return absl::OkStatus();
  RETURN_IF_ERROR(moved);
  const absl::Status removed = fs_.RemoveRecursively(trash);
  if (!removed.ok()) Log(removed.message());  // tmp/ is emptied at Open
  return absl::OkStatus();
}

absl::Status FileStore::MoveToTrash(const std::string& path,
                                    const std::string& parent,
                                    std::string* trash) {
  const std::string temp = TempPath("del-");
  RETURN_IF_ERROR(fs_.Rename(path, temp));
  const absl::Status synced = FsyncDir(fs_, parent);
  // Undone if it can be, so that the failed operation changed nothing.
  if (synced.ok() || !fs_.Rename(temp, path).ok()) *trash = temp;
  return synced;
}

void FileStore::RemoveNameFiles(const std::vector<std::string>& names) {
  // The index has dropped them already; a file left behind names a blob
  // that is gone, so the next Open drops it.
  for (const std::string& name : names) {
    const absl::Status removed = fs_.Unlink(layout_.NameFile(name));
    if (!removed.ok() && !absl::IsNotFound(removed)) Log(removed.message());
  }
  if (names.empty()) return;
  const absl::Status synced = FsyncDir(fs_, layout_.names_dir());
  if (!synced.ok()) Log(synced.message());
}

size_t FileStore::blob_count() const {
  absl::ReaderMutexLock lock(&mu_);
  return blobs_.size();
}

uint64_t FileStore::stored_bytes() const {
  absl::ReaderMutexLock lock(&mu_);
  return stored_bytes_;
}

std::optional<StoreTotals> FileStore::Totals() const {
  absl::ReaderMutexLock lock(&mu_);
  return StoreTotals{blobs_.size(), stored_bytes_};
}

BlobInfo FileStore::InfoOf(const std::string& digest_text,
                           const Entry& entry) const {
  return BlobInfo{digest_text,
                  entry.descriptor,
                  entry.tree_size,
                  names_.NamesOf(digest_text),
                  entry.fsverity_signature,
                  "",
                  entry.tree_manifest};
}

void FileStore::AddEntry(const std::string& digest_text, const Entry& entry) {
  EraseEntry(digest_text);
  blobs_[digest_text] = entry;
  stored_bytes_ += entry.descriptor.data_size;
}

void FileStore::EraseEntry(const std::string& digest_text) {
  const auto it = blobs_.find(digest_text);
  if (it == blobs_.end()) return;
  stored_bytes_ -= it->second.descriptor.data_size;
  blobs_.erase(it);
}

std::string FileStore::TempPath(absl::string_view prefix) {
  return JoinPath(layout_.tmp_dir(),
                  absl::StrCat(prefix, next_temp_id_.fetch_add(1)));
}

void FileStore::Log(absl::string_view message) const {
  if (options_.log) {
    options_.log(message);
    return;
  }
  LogToStderr(message);
}

}  // namespace verity::server
