// Helpers every RPC of the Verity service shares.

#include "server/rpc/service_context.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "proto/convert.h"

namespace verity::server {

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

v1::BlobInfo BlobInfoToProto(const BlobInfo& info) {
  v1::BlobInfo proto;
  proto.set_digest(info.digest);
  SetDescriptor(info.descriptor, &proto);
  for (const std::string& name : info.names) proto.add_names(name);
  proto.set_tree_size(info.tree_size);
  proto.set_name_statement(info.name_statement);
  proto.set_fsverity_signature(info.fsverity_signature);
  proto.set_tree_manifest(info.tree_manifest);
  return proto;
}

v1::NameVersion NameVersionToProto(const NameVersion& version) {
  v1::NameVersion proto;
  proto.set_digest(version.digest.ToString());
  proto.set_name_statement(version.statement);
  if (version.written != absl::InfinitePast()) {
    proto.set_written_unix_seconds(absl::ToUnixSeconds(version.written));
  }
  return proto;
}

void ServiceContext::ReleaseParts() {
  store.reset();
  blobs.reset();
  reader.reset();
  metrics.reset();
  io.reset();
  upkeep.reset();
  collect = nullptr;
  scrub = nullptr;
  chunk_budget.reset();
  batch_read_blobs.reset();
  manifest_bytes.reset();
  batch_update_bytes.reset();
  lookups.reset();
  read_buffers.reset();
  watchdog.reset();
  names.reset();
  log.reset();
  gate = CallGate();
  corruption.reset();
}

}  // namespace verity::server
