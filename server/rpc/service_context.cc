// Helpers every RPC of the Verity service shares.

#include "server/rpc/service_context.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "proto/convert.h"
#include "server/store/verified_blob.h"

namespace verity::server {

absl::StatusOr<ParsedDigest> ResolveBlob(const Store& store,
                                         absl::string_view digest,
                                         absl::string_view name, bool by_name) {
  if (by_name) return store.ResolveName(name);
  if (digest.empty()) {
    return absl::InvalidArgumentError(
        "the request names no blob: set digest or name");
  }
  return ParseDigest(digest);
}

absl::StatusOr<std::shared_ptr<VerifiedBlob>> OpenForRead(
    ServiceContext& context, const ParsedDigest& digest) {
  return OpenVerifiedBlob(*context.cache, *context.store, digest,
                          context.options.verify_once);
}

v1::BlobInfo BlobInfoToProto(const BlobInfo& info) {
  v1::BlobInfo proto;
  proto.set_digest(info.digest);
  *proto.mutable_fsverity_descriptor() = DescriptorToProto(info.descriptor);
  for (const std::string& name : info.names) proto.add_names(name);
  proto.set_tree_size(info.tree_size);
  return proto;
}

void ReportCorruption(ServiceContext* context, const ParsedDigest& digest,
                      const absl::Status& status) {
  const std::string text = digest.ToString();
  context->store->Log(absl::StrCat("corruption detected: ", status.message()));
  context->metrics->CountCorruption(
      IsTreeCorruption(status) ? CorruptionKind::kTree : CorruptionKind::kData);
  if (context->options.on_corruption != OnCorruption::kQuarantine) return;
  context->cache->Erase(digest);
  absl::Status quarantined =
      context->store->Quarantine(digest, status.message());
  if (!quarantined.ok()) {
    context->store->Log(absl::StrCat("could not quarantine ", text, ": ",
                                     quarantined.message()));
  }
}

}  // namespace verity::server
