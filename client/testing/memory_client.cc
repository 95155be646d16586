#include "client/testing/memory_client.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/base/bytes.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"
#include "lib/manifest/local_tree.h"
#include "lib/tree/merkle_builder.h"
#include "verity/tree.h"

namespace verity::testing {
namespace {

absl::Status Unimplemented(absl::string_view call) {
  return absl::UnimplementedError(absl::StrCat("MemoryClient: no ", call));
}

sdk::Digest DigestOf(absl::string_view bytes) {
  const absl::StatusOr<MerkleTree> tree =
      BuildMerkleTree(TreeFileParams(HashAlgorithm::kSha256), AsBytes(bytes));
  return *sdk::Digest::FromBytes(sdk::DigestAlgorithm::kSha256, tree->digest);
}

}  // namespace

sdk::Digest MemoryClient::Add(absl::string_view bytes) {
  const sdk::Digest digest = DigestOf(bytes);
  absl::MutexLock lock(&mu_);
  blobs_[digest.ToString()].bytes = std::string(bytes);
  return digest;
}

void MemoryClient::Point(absl::string_view name, const sdk::Digest& digest,
                         std::optional<sdk::NameStatementInfo> statement) {
  absl::MutexLock lock(&mu_);
  names_.insert_or_assign(std::string(name),
                          Name{digest, std::move(statement)});
}

void MemoryClient::Fail(Call call, absl::Status status, int times) {
  absl::MutexLock lock(&mu_);
  failures_[call] = Failure{std::move(status), times};
}

void MemoryClient::Delay(Call call, absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  delays_[call] = delay;
}

void MemoryClient::FailBlob(const sdk::Digest& digest, absl::Status status) {
  absl::MutexLock lock(&mu_);
  blob_failures_[digest.ToString()] = std::move(status);
}

uint64_t MemoryClient::calls(Call call) const {
  absl::MutexLock lock(&mu_);
  const auto it = calls_.find(call);
  return it == calls_.end() ? 0 : it->second;
}

absl::Status MemoryClient::Enter(Call call) {
  absl::Duration delay;
  {
    absl::MutexLock lock(&mu_);
    const auto it = delays_.find(call);
    if (it != delays_.end()) delay = it->second;
  }
  absl::SleepFor(delay);
  absl::MutexLock lock(&mu_);
  calls_[call]++;
  const auto it = failures_.find(call);
  if (it == failures_.end() || it->second.left == 0) return absl::OkStatus();
  if (it->second.left > 0) it->second.left--;
  return it->second.status;
}

absl::StatusOr<std::string> MemoryClient::Bytes(
    const sdk::Digest& digest) const {
  absl::MutexLock lock(&mu_);
  const auto failed = blob_failures_.find(digest.ToString());
  if (failed != blob_failures_.end() && !failed->second.ok()) {
    return failed->second;
  }
  const auto it = blobs_.find(digest.ToString());
  if (it == blobs_.end()) {
    return absl::NotFoundError(absl::StrCat(digest.ToString(), " not stored"));
  }
  return it->second.bytes;
}

sdk::BlobInfo MemoryClient::InfoOf(const sdk::Digest& digest,
                                   const Blob& blob) const {
  sdk::BlobInfo info{digest};
  info.size = blob.bytes.size();
  info.block_size = 4096;
  info.tree_manifest = blob.tree_manifest;
  return info;
}

absl::Status MemoryClient::Fetch(const sdk::Digest& digest, sdk::Sink& sink,
                                 const sdk::FetchOptions& options) {
  absl::Status status = Enter(Call::kFetch);
  std::string range;
  if (status.ok()) {
    absl::StatusOr<std::string> bytes = Bytes(digest);
    status = bytes.status();
    if (bytes.ok() && options.offset > bytes->size()) {
      status = absl::OutOfRangeError("offset past the end");
    } else if (bytes.ok()) {
      range =
          bytes->substr(options.offset, options.length.value_or(bytes->size()));
    }
  }
  if (status.ok()) status = sink.Start(range.size());
  if (status.ok()) status = sink.Write(0, AsBytes(range));
  if (status.ok()) return sink.Finish();
  sink.Abort();
  return status;
}

absl::Status MemoryClient::FetchName(absl::string_view, sdk::Sink& sink,
                                     const sdk::FetchOptions&) {
  sink.Abort();
  return Unimplemented("FetchName");
}

absl::StatusOr<sdk::PutResult> MemoryClient::Put(
    std::string bytes, const sdk::PutOptions& options) {
  RETURN_IF_ERROR(Enter(Call::kPut));
  const sdk::Digest digest = DigestOf(bytes);
  if (options.expected_digest.has_value() &&
      options.expected_digest->ToString() != digest.ToString()) {
    return absl::DataLossError("not the expected digest");
  }
  absl::MutexLock lock(&mu_);
  const bool present = blobs_.count(digest.ToString()) > 0;
  Blob& blob = blobs_[digest.ToString()];
  blob.bytes = std::move(bytes);
  blob.tree_manifest |= options.tree_manifest;
  if (!options.name.empty()) {
    names_.insert_or_assign(options.name, Name{digest, std::nullopt});
  }
  return sdk::PutResult{InfoOf(digest, blob), present};
}

absl::StatusOr<sdk::PutResult> MemoryClient::PutFile(
    absl::string_view path, const sdk::PutOptions& options) {
  ASSIGN_OR_RETURN(std::string bytes,
                   ReadSmallFile(std::string(path), uint64_t{1} << 30));
  return Put(std::move(bytes), options);
}

absl::StatusOr<sdk::PutResult> MemoryClient::PutStream(
    const sdk::ByteSource& source, const sdk::PutOptions& options) {
  std::string bytes;
  std::vector<uint8_t> buffer(1 << 16);
  while (true) {
    ASSIGN_OR_RETURN(const size_t n, source(absl::MakeSpan(buffer)));
    if (n == 0) break;
    bytes.append(reinterpret_cast<const char*>(buffer.data()), n);
  }
  return Put(std::move(bytes), options);
}

absl::StatusOr<sdk::BlobInfo> MemoryClient::Stat(const sdk::Digest& digest,
                                                 absl::Time) {
  RETURN_IF_ERROR(Enter(Call::kStat));
  absl::MutexLock lock(&mu_);
  const auto it = blobs_.find(digest.ToString());
  if (it == blobs_.end()) {
    return absl::NotFoundError(absl::StrCat(digest.ToString(), " not stored"));
  }
  return InfoOf(digest, it->second);
}

absl::StatusOr<sdk::BlobInfo> MemoryClient::StatName(absl::string_view name) {
  RETURN_IF_ERROR(Enter(Call::kStatName));
  absl::MutexLock lock(&mu_);
  const auto named = names_.find(std::string(name));
  if (named == names_.end()) {
    return absl::NotFoundError(absl::StrCat("no name ", name));
  }
  const auto it = blobs_.find(named->second.digest.ToString());
  if (it == blobs_.end()) return absl::NotFoundError("the name's blob is gone");
  sdk::BlobInfo info = InfoOf(named->second.digest, it->second);
  info.names = {std::string(name)};
  info.name_statement = named->second.statement;
  return info;
}

absl::StatusOr<std::vector<absl::StatusOr<std::string>>>
MemoryClient::BatchRead(const std::vector<sdk::Digest>& digests,
                        const sdk::FetchOptions&) {
  RETURN_IF_ERROR(Enter(Call::kBatchRead));
  std::vector<absl::StatusOr<std::string>> blobs;
  for (const sdk::Digest& digest : digests) blobs.push_back(Bytes(digest));
  return blobs;
}

absl::StatusOr<std::vector<sdk::Digest>> MemoryClient::FindMissing(
    const std::vector<sdk::Digest>& digests) {
  RETURN_IF_ERROR(Enter(Call::kFindMissing));
  absl::MutexLock lock(&mu_);
  std::vector<sdk::Digest> missing;
  for (const sdk::Digest& digest : digests) {
    if (!blobs_.count(digest.ToString()) > 0) missing.push_back(digest);
  }
  return missing;
}

absl::StatusOr<std::vector<absl::Status>> MemoryClient::BatchUpdate(
    const std::vector<sdk::BatchUpdateBlob>& blobs) {
  std::vector<absl::Status> results;
  for (const sdk::BatchUpdateBlob& blob : blobs) {
    sdk::PutOptions options;
    options.expected_digest = blob.digest;
    results.push_back(Put(blob.data, options).status());
  }
  return results;
}

absl::StatusOr<std::vector<sdk::NameVersionInfo>> MemoryClient::History(
    absl::string_view) {
  return Unimplemented("History");
}

absl::StatusOr<sdk::LogConsistencyAnswer> MemoryClient::LogConsistency(
    uint64_t, uint64_t) {
  return Unimplemented("LogConsistency");
}

absl::StatusOr<std::string> MemoryClient::ReadLog(absl::string_view) {
  return Unimplemented("ReadLog");
}

absl::StatusOr<sdk::BlobInfo> MemoryClient::SetName(absl::string_view,
                                                    const sdk::Digest&,
                                                    absl::string_view) {
  return Unimplemented("SetName");
}

absl::StatusOr<sdk::ListPage> MemoryClient::List(absl::string_view, uint32_t) {
  return Unimplemented("List");
}

absl::Status MemoryClient::Delete(const sdk::Digest& digest, bool) {
  absl::MutexLock lock(&mu_);
  if (blobs_.erase(digest.ToString()) == 0) {
    return absl::NotFoundError(absl::StrCat(digest.ToString(), " not stored"));
  }
  return absl::OkStatus();
}

absl::Status MemoryClient::DeleteName(absl::string_view name) {
  absl::MutexLock lock(&mu_);
  if (names_.erase(std::string(name)) == 0) {
    return absl::NotFoundError(absl::StrCat("no name ", name));
  }
  return absl::OkStatus();
}

absl::StatusOr<sdk::CollectResult> MemoryClient::Collect(bool) {
  return Unimplemented("Collect");
}

absl::StatusOr<sdk::ScrubResult> MemoryClient::Scrub(bool) {
  return Unimplemented("Scrub");
}

sdk::ClientStats MemoryClient::Stats() const { return {}; }

absl::StatusOr<sdk::Digest> StoreTree(
    sdk::Client& client, const std::string& folder,
    const std::map<std::string, std::string>& files) {
  RETURN_IF_ERROR(MakeDirs(folder));
  for (const auto& [path, bytes] : files) {
    const std::string file = JoinPath(folder, path);
    RETURN_IF_ERROR(MakeDirs(file.substr(0, file.rfind('/'))));
    RETURN_IF_ERROR(ReplaceFileDurably(file + ".tmp", file, bytes));
  }
  ASSIGN_OR_RETURN(const sdk::LocalTree tree,
                   sdk::ScanTree(folder, sdk::DigestAlgorithm::kSha256, 2));
  sdk::PutTreeOptions options;
  options.parallel = 4;
  RETURN_IF_ERROR(sdk::PutTree(client, tree, options).status());
  return tree.digest;
}

}  // namespace verity::testing
