// Implements the Blob base and the checks every backend shares.

#include "server/store/store.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "lib/base/status_macros.h"
#include "lib/fec/dm_verity_fec.h"
#include "lib/hash/hash.h"
#include "lib/trust/name_statement.h"
#include "server/store/name_index.h"
#include "server/store/read_join.h"

namespace verity::server {

Blob::Blob(const ParsedDigest& digest, const Descriptor& descriptor,
           const MerkleParams& params, const TreeGeometry& geometry,
           std::string fsverity_signature, int fec_roots)
    : digest_(digest),
      digest_text_(digest.ToString()),
      descriptor_(descriptor),
      params_(params),
      geometry_(geometry),
      fsverity_signature_(std::move(fsverity_signature)),
      fec_roots_(fec_roots) {}

absl::Status Blob::Rewrite(BlobPart part, uint64_t /*offset*/,
                           absl::Span<const uint8_t> /*bytes*/) const {
  return absl::UnimplementedError(
      absl::StrCat("blob ", digest_text_, ": this store cannot rewrite its ",
                   PartName(part)));
}

namespace {

// ReadAllAndWait()'s reads in flight at once, at most: a remote store's
// connections (a TLS handshake each) stay few.
constexpr size_t kMaxReadsInFlight = 32;

// Places among StartAndWait()'s reads in flight. Shared with each
// completion, so that none touches it after the waiter has gone.
class InFlightLimit {
 public:
  // Waits for a place among the reads in flight, and takes it.
  void Enter() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(this, &InFlightLimit::HasRoom));
    ++in_flight_;
  }
  void Leave() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    --in_flight_;
  }

 private:
  bool HasRoom() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return in_flight_ < kMaxReadsInFlight;
  }

  absl::Mutex mu_;
  size_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

// Starts every read with ReadAsync(), kMaxReadsInFlight at a time, each as
// one ends, and waits for them all (a ReadJoin of them; each read keeps its
// own status).
void StartAndWait(const Blob& blob, absl::Span<PartRead* const> reads) {
  absl::Notification all_done;
  std::shared_ptr<ReadJoin> join =
      ReadJoin::Create(static_cast<int>(reads.size()),
                       [&all_done](absl::Status) { all_done.Notify(); });
  auto limit = std::make_shared<InFlightLimit>();
  for (PartRead* read : reads) {
    limit->Enter();
    blob.ReadAsync(read->part, read->offset, Buffer::Allocate(read->out.size()),
                   [read, limit, join](absl::StatusOr<Buffer> bytes) {
                     if (bytes.ok()) {
                       std::copy_n(bytes->span().begin(), read->out.size(),
                                   read->out.begin());
                     }
                     read->status = bytes.status();
                     limit->Leave();
                     join->Report(absl::OkStatus());
                   });
  }
  all_done.WaitForNotification();
}

}  // namespace

absl::Status ReadAndWait(const Blob& blob, BlobPart part, uint64_t offset,
                         absl::Span<uint8_t> out) {
  PartRead read{part, offset, out, absl::OkStatus()};
  ReadAllAndWait(blob, absl::MakeSpan(&read, 1));
  return read.status;
}

void ReadAllAndWait(const Blob& blob, absl::Span<PartRead> reads) {
  std::vector<PartRead*> later;
  for (PartRead& read : reads) {
    std::optional<absl::Status> now =
        blob.TryReadNow(read.part, read.offset, read.out);
    if (now.has_value()) {
      read.status = *std::move(now);
    } else {
      later.push_back(&read);
    }
  }
  if (!later.empty()) StartAndWait(blob, later);
}

uint64_t FecBlocks(const TreeGeometry& geometry) {
  return geometry.data_block_count() +
         geometry.tree_size() / geometry.block_size();
}

uint64_t PartSize(const TreeGeometry& geometry, int fec_roots, BlobPart part) {
  switch (part) {
    case BlobPart::kData:
      return geometry.data_size();
    case BlobPart::kTree:
      return geometry.tree_size();
    case BlobPart::kFec:
      return fec_roots == 0 ? 0
                            : FecSize(FecBlocks(geometry), fec_roots,
                                      geometry.block_size());
  }
  return 0;
}

int FecRootsOfSize(const TreeGeometry& geometry, uint64_t size) {
  for (int roots = kMinFecRoots; roots <= kMaxFecRoots; ++roots) {
    if (PartSize(geometry, roots, BlobPart::kFec) == size) return roots;
  }
  return 0;
}

absl::StatusOr<std::optional<FecStreamEncoder>> FecStreamFor(
    const MerkleParams& params, std::optional<uint64_t> size, int fec_roots) {
  if (fec_roots == 0 || size.value_or(0) == 0) return std::nullopt;
  ASSIGN_OR_RETURN(const TreeGeometry geometry,
                   TreeGeometry::Create(params, *size));
  if (PartSize(geometry, fec_roots, BlobPart::kFec) > kMaxStreamedFecBytes) {
    return std::nullopt;
  }
  return FecStreamEncoder::Create(fec_roots, params.block_size,
                                  FecBlocks(geometry));
}

absl::StatusOr<std::string> FinishFecArea(FecStreamEncoder& stream,
                                          absl::string_view tree) {
  RETURN_IF_ERROR(stream.PadBlock());
  RETURN_IF_ERROR(stream.Update(AsBytes(tree)));
  return stream.Finish();
}

absl::string_view PartName(BlobPart part) {
  switch (part) {
    case BlobPart::kData:
      return "data";
    case BlobPart::kTree:
      return "tree";
    case BlobPart::kFec:
      return "fec";
  }
  return "?";
}

absl::StatusOr<ParsedDigest> Store::ResolveName(absl::string_view name) const {
  ASSIGN_OR_RETURN(NamedBlob named, LookupName(name));
  return named.digest;
}

absl::Status CheckNameWrite(const NameWrite& write) {
  RETURN_IF_ERROR(ValidateBlobName(write.name));
  if (write.statement.size() > kMaxNameStatementSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("the name statement for \"", write.name, "\" is ",
                     write.statement.size(), " bytes; at most ",
                     kMaxNameStatementSize, " may be stored"));
  }
  return absl::OkStatus();
}

absl::Status RunNameCheck(const NameWrite& write, const ParsedDigest& digest,
                          absl::string_view current_statement) {
  if (!write.check) return absl::OkStatus();
  return write.check(digest, current_statement);
}

absl::StatusOr<bool> Store::Has(const ParsedDigest& digest) const {
  const absl::Status stat = Stat(digest).status();
  // A quarantined blob is DATA_LOSS: not served, so not held.
  if (absl::IsNotFound(stat) || absl::IsDataLoss(stat)) return false;
  RETURN_IF_ERROR(stat);
  return true;
}

absl::StatusOr<uint64_t> Store::DataSize(const ParsedDigest& digest) const {
  ASSIGN_OR_RETURN(const BlobInfo info, Stat(digest));
  return info.descriptor.data_size;
}

absl::StatusOr<Store::SizedUse> Store::MarkUsedSized(
    const ParsedDigest& digest, absl::Time now,
    absl::Duration refresh_after) const {
  ASSIGN_OR_RETURN(const uint64_t size, DataSize(digest));
  ASSIGN_OR_RETURN(const absl::Time before,
                   MarkUsed(digest, now, refresh_after));
  return SizedUse{size, before};
}

absl::StatusOr<std::vector<StoredBlob>> Store::ListStored(
    absl::string_view after, size_t limit) const {
  ASSIGN_OR_RETURN(const std::vector<BlobInfo> infos, List(after, limit));
  std::vector<StoredBlob> blobs;
  blobs.reserve(infos.size());
  for (const BlobInfo& info : infos) {
    ASSIGN_OR_RETURN(const ParsedDigest digest, ParseDigest(info.digest));
    blobs.push_back({digest, info.descriptor.data_size});
  }
  return blobs;
}

absl::StatusOr<std::vector<absl::Time>> Store::LastUsedOf(
    absl::Span<const ParsedDigest> blobs) const {
  std::vector<absl::Time> times;
  times.reserve(blobs.size());
  for (const ParsedDigest& digest : blobs) {
    const absl::StatusOr<absl::Time> used = LastUsed(digest);
    if (absl::IsNotFound(used.status())) {
      times.push_back(absl::InfiniteFuture());
      continue;
    }
    RETURN_IF_ERROR(used.status());
    times.push_back(*used);
  }
  return times;
}

absl::StatusOr<LeftoverPage> Store::SweepLeftovers(absl::string_view /*after*/,
                                                   absl::Time /*cutoff*/,
                                                   bool /*dry_run*/) {
  return LeftoverPage();
}

void LogToStderr(absl::string_view message) {
  const std::string line = absl::StrCat("verityd: ", message, "\n");
  fwrite(line.data(), 1, line.size(), stderr);
}

absl::Status DamagedBlob(absl::string_view digest_text,
                         absl::string_view what) {
  return absl::DataLossError(absl::StrCat("blob ", digest_text, ": ", what));
}

absl::StatusOr<CheckedDescriptor> CheckStoredDescriptor(
    absl::string_view bytes, const ParsedDigest& digest) {
  const std::string text = digest.ToString();
  if (bytes.size() > kMaxDescriptorSize) {
    return DamagedBlob(
        text, absl::StrCat("descriptor is ", bytes.size(), " bytes, more than ",
                           kMaxDescriptorSize));
  }
  if (ComputeHash(digest.algorithm, AsBytes(bytes)) != digest.digest) {
    return DamagedBlob(text, "descriptor does not hash to the digest");
  }
  absl::StatusOr<Descriptor> descriptor = ParseDescriptor(AsBytes(bytes));
  if (!descriptor.ok()) return DamagedBlob(text, descriptor.status().message());
  if (descriptor->hash_algorithm != digest.algorithm) {
    return DamagedBlob(text, "descriptor has unexpected parameters");
  }
  absl::StatusOr<MerkleParams> params = ParamsOf(*descriptor);
  if (!params.ok()) return DamagedBlob(text, params.status().message());
  absl::StatusOr<TreeGeometry> geometry =
      TreeGeometry::Create(*params, descriptor->data_size);
  if (!geometry.ok()) return DamagedBlob(text, geometry.status().message());
  return CheckedDescriptor{*std::move(descriptor), *std::move(params),
                           *std::move(geometry)};
}

absl::Status CheckReadRange(const Blob& blob, BlobPart part, uint64_t offset,
                            uint64_t length) {
  const uint64_t size = PartSize(blob.geometry(), blob.fec_roots(), part);
  if (offset <= size && length <= size - offset) return absl::OkStatus();
  return absl::OutOfRangeError(absl::StrCat(
      "blob ", blob.digest_text(), ": ", length, " bytes at offset ", offset,
      " are past the end of its ", size, "-byte ", PartName(part)));
}

absl::Status CheckSharedRecord(absl::string_view key, absl::string_view body) {
  const bool valid_key = !key.empty() && key.size() <= 64 &&
                         std::all_of(key.begin(), key.end(), [](char c) {
                           return (c >= 'a' && c <= 'z') ||
                                  (c >= '0' && c <= '9') || c == '_' ||
                                  c == '-';
                         });
  if (!valid_key) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", key, "\" is not a shared record's key"));
  }
  if (body.size() > kMaxSharedRecordSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("a shared record holds at most ", kMaxSharedRecordSize,
                     " bytes, not ", body.size()));
  }
  return absl::OkStatus();
}

absl::Status CheckLogObject(absl::string_view path, absl::string_view bytes) {
  bool valid = !path.empty() && path.size() <= 256;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    valid = valid && !part.empty() && part != "." && part != ".." &&
            std::all_of(part.begin(), part.end(), [](char c) {
              return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                     c == '.' || c == '_' || c == '-';
            });
  }
  if (!valid) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", absl::CHexEscape(path), "\" is not a log object's path"));
  }
  if (bytes.size() > kMaxLogObjectSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("a log object holds at most ", kMaxLogObjectSize,
                     " bytes, not ", bytes.size()));
  }
  return absl::OkStatus();
}

absl::Status CheckLogFolder(absl::string_view folder) {
  if (!absl::ConsumeSuffix(&folder, "/")) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", absl::CHexEscape(folder), "\" is not a folder"));
  }
  return CheckLogObject(folder, "");
}

absl::StatusOr<PutResult> Store::PutWhole(const BatchPut& blob) {
  ASSIGN_OR_RETURN(std::unique_ptr<PutWriter> writer,
                   BeginPut(blob.params, blob.digest, blob.data.size()));
  RETURN_IF_ERROR(writer->Append(AsBytes(blob.data)));
  PutCommit commit;
  commit.expected = blob.digest;
  return writer->Commit(commit);
}

std::vector<absl::StatusOr<PutResult>> Store::PutBatch(
    absl::Span<const BatchPut> blobs) {
  std::vector<absl::StatusOr<PutResult>> results;
  results.reserve(blobs.size());
  for (const BatchPut& blob : blobs) results.push_back(PutWhole(blob));
  return results;
}

}  // namespace verity::server
