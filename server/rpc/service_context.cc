// Helpers every RPC of the Verity service shares.

#include "server/rpc/service_context.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/convert.h"
#include "server/store/served_blobs.h"
#include "server/store/verified_blob.h"

namespace verity::server {
namespace {

void LogIfFailed(const Store* store, const ParsedDigest& digest,
                 const absl::Status& quarantined) {
  if (quarantined.ok()) return;
  store->Log(absl::StrCat("could not quarantine ", digest.ToString(), ": ",
                          quarantined.message()));
}

void CountCorruption(ServiceContext* context, const absl::Status& status) {
  context->store->Log(absl::StrCat("corruption detected: ", status.message()));
  context->metrics->CountCorruption(
      IsTreeCorruption(status) ? CorruptionKind::kTree : CorruptionKind::kData);
}

}  // namespace

BufferPoolOptions ReadBufferPoolOptions(const ServiceOptions& options) {
  BufferPoolOptions buffers;
  buffers.min_buffer_bytes = 4096;  // a tree block, the usual block size
  buffers.max_buffer_bytes =
      std::max(options.read_chunk_bytes, options.max_read_chunk_bytes);
  buffers.max_idle_bytes = 4 * buffers.max_buffer_bytes;
  return buffers;
}

absl::StatusOr<NamedBlob> ResolveBlob(const Store& store,
                                      const BlobSelector& blob) {
  if (blob.by_name) return store.LookupName(blob.name);
  return NamedBlob{blob.digest, ""};
}

absl::StatusOr<std::shared_ptr<VerifiedBlob>> OpenForRead(
    ServiceContext& context, const ParsedDigest& digest) {
  return context.blobs->Open(digest);
}

v1::BlobInfo BlobInfoToProto(const BlobInfo& info) {
  v1::BlobInfo proto;
  proto.set_digest(info.digest);
  SetDescriptor(info.descriptor, &proto);
  for (const std::string& name : info.names) proto.add_names(name);
  proto.set_tree_size(info.tree_size);
  proto.set_name_statement(info.name_statement);
  proto.set_fsverity_signature(info.fsverity_signature);
  return proto;
}

void ReportCorruption(ServiceContext* context, const ParsedDigest& digest,
                      const absl::Status& status,
                      absl::AnyInvocable<void(absl::Status) &&> then) {
  // The store is asked on the I/O executor, never on the thread that found
  // the damage (a gRPC thread, or the store's own). `then` runs either way;
  // shared, so that a refused task does not take it along.
  auto finish = std::make_shared<absl::AnyInvocable<void(absl::Status) &&>>(
      std::move(then));
  absl::Status queued = context->io->Submit([context, digest, status, finish] {
    if (absl::IsNotFound(context->store->Stat(digest).status())) {
      context->store->Log(absl::StrCat("blob ", digest.ToString(),
                                       " was deleted while it was read"));
      std::move (*finish)(absl::NotFoundError(absl::StrCat(
          "blob ", digest.ToString(), " was deleted while it was read")));
      return;
    }
    CountCorruption(context, status);
    // The cached copy goes only after the mark (ServedBlobs::Quarantine),
    // or a read in between would cache it again.
    if (context->options.on_corruption == OnCorruption::kQuarantine) {
      LogIfFailed(context->store, digest,
                  context->blobs->Quarantine(digest, status.message()));
    }
    std::move (*finish)(status);
  });
  if (!queued.ok()) {
    CountCorruption(context, status);
    LogIfFailed(context->store, digest, queued);
    std::move (*finish)(status);
  }
}

}  // namespace verity::server
