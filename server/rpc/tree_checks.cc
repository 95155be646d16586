// Implements FindMissingBlobs and CheckStoredTree on ParallelFor: one lookup
// at a time on a local store, where each is a stat(2), many on a remote one,
// where each is a round trip.

#include "server/rpc/tree_checks.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/base/parallel_for.h"
#include "lib/base/status_macros.h"
#include "lib/manifest/tree_manifest.h"

namespace verity::server {
namespace {

// Lookups at a time: S3's round trips overlap; a local stat(2) does not
// gain from threads.
int LookupThreads(const Store& store) { return store.IsLocal() ? 1 : 16; }

}  // namespace

absl::StatusOr<std::vector<ParsedDigest>> FindMissingBlobs(
    const Store& store, const std::vector<ParsedDigest>& digests) {
  std::vector<char> held(digests.size(), 0);
  RETURN_IF_ERROR(
      ParallelFor(digests.size(), LookupThreads(store), [&](size_t i) {
        ASSIGN_OR_RETURN(const bool has, store.Has(digests[i]));
        held[i] = has;
        return absl::OkStatus();
      }));
  std::vector<ParsedDigest> missing;
  for (size_t i = 0; i < digests.size(); ++i) {
    if (!held[i]) missing.push_back(digests[i]);
  }
  return missing;
}

absl::Status CheckStoredTree(const Store& store, absl::string_view manifest) {
  ASSIGN_OR_RETURN(const TreeManifest tree, ParseTreeManifest(manifest));
  // Each distinct blob once, with the first entry that names it.
  std::map<std::string, const TreeEntry*> first;
  std::vector<const TreeEntry*> files;
  for (const TreeEntry& entry : tree.entries) {
    if (entry.type != TreeEntryType::kFile) continue;
    if (first.emplace(entry.digest.ToString(), &entry).second) {
      files.push_back(&entry);
    }
  }
  // Same digest, same blob: every entry naming it must agree on its size.
  for (const TreeEntry& entry : tree.entries) {
    if (entry.type != TreeEntryType::kFile) continue;
    const TreeEntry& named = *first[entry.digest.ToString()];
    if (named.size != entry.size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tree entries \"", named.path, "\" and \"", entry.path,
          "\" name blob ", entry.digest.ToString(), " with different sizes"));
    }
  }
  return ParallelFor(files.size(), LookupThreads(store), [&](size_t i) {
    const TreeEntry& entry = *files[i];
    const absl::StatusOr<BlobInfo> info = store.Stat(entry.digest);
    if (absl::IsNotFound(info.status())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "tree entry \"", entry.path, "\": blob ", entry.digest.ToString(),
          " is not stored (put a tree's files before its manifest)"));
    }
    RETURN_IF_ERROR(info.status());
    if (info->descriptor.data_size != entry.size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tree entry \"", entry.path, "\" says ", entry.size, " bytes; blob ",
          entry.digest.ToString(), " has ", info->descriptor.data_size));
    }
    return absl::OkStatus();
  });
}

}  // namespace verity::server
