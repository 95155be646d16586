// Implements FindMissingBlobs and CheckStoredTree on ParallelFor: one lookup
// at a time on a local store, a window of them on the lookup pool for a
// remote one, where each is a round trip.

#include "server/upkeep/tree_checks.h"

#include <functional>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/base/parallel_for.h"
#include "lib/base/status_macros.h"
#include "lib/manifest/tree_manifest.h"
#include "server/upkeep/collector.h"

namespace verity::server {
namespace {

// Runs `fn` over [0, n): on `lookups`, kLookupWindow at a time, or here.
absl::Status ForEachLookup(Executor* lookups, size_t n,
                           const std::function<absl::Status(size_t)>& fn) {
  if (lookups == nullptr) return ParallelFor(n, 1, fn);
  return ParallelFor(*lookups, n, kLookupWindow, fn);
}

}  // namespace

absl::StatusOr<std::vector<ParsedDigest>> FindMissingBlobs(
    const Store& store, const std::vector<ParsedDigest>& digests,
    Executor* lookups, absl::Time now, absl::Duration gc_grace) {
  std::vector<char> held(digests.size(), 0);
  RETURN_IF_ERROR(ForEachLookup(lookups, digests.size(), [&](size_t i) {
    ASSIGN_OR_RETURN(const bool has, store.Has(digests[i]));
    if (!has) return absl::OkStatus();
    const absl::StatusOr<absl::Time> used =
        store.MarkUsed(digests[i], now, UseRefresh(gc_grace));
    if (absl::IsNotFound(used.status())) return absl::OkStatus();  // just gone
    RETURN_IF_ERROR(used.status());
    held[i] = 1;
    return absl::OkStatus();
  }));
  std::vector<ParsedDigest> missing;
  for (size_t i = 0; i < digests.size(); ++i) {
    if (!held[i]) missing.push_back(digests[i]);
  }
  return missing;
}

absl::Status CheckStoredTree(const Store& store, absl::string_view manifest,
                             Executor* lookups, absl::Time now,
                             absl::Duration gc_grace) {
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
  std::vector<UsedBlob> used(files.size());
  RETURN_IF_ERROR(ForEachLookup(lookups, files.size(), [&](size_t i) {
    const TreeEntry& entry = *files[i];
    const absl::StatusOr<Store::SizedUse> use =
        store.MarkUsedSized(entry.digest, now, UseRefresh(gc_grace));
    if (absl::IsNotFound(use.status())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "tree entry \"", entry.path, "\": blob ", entry.digest.ToString(),
          " is not stored (put a tree's files before its manifest)"));
    }
    RETURN_IF_ERROR(use.status());
    if (use->data_size != entry.size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tree entry \"", entry.path, "\" says ", entry.size, " bytes; blob ",
          entry.digest.ToString(), " has ", use->data_size));
    }
    used[i] = UsedBlob{entry.digest, use->before};
    return absl::OkStatus();
  }));
  return CheckNotSwept(store, used, now);
}

absl::Status MarkStoredUsed(const Store& store, const ParsedDigest& digest,
                            bool becomes_root, absl::Time now,
                            absl::Duration gc_grace) {
  const absl::StatusOr<absl::Time> before =
      store.MarkUsed(digest, now, UseRefresh(gc_grace));
  if (absl::IsNotFound(before.status())) return absl::OkStatus();
  RETURN_IF_ERROR(before.status());
  if (!becomes_root) return absl::OkStatus();
  return CheckNotSwept(store, {UsedBlob{digest, *before}}, now);
}

absl::Status MarkFoundUsed(const Store& store, const ParsedDigest& digest,
                           absl::Time now, absl::Duration gc_grace) {
  const absl::Status marked =
      store.MarkUsed(digest, now, UseRefresh(gc_grace)).status();
  if (absl::IsNotFound(marked)) {
    return absl::UnavailableError(
        absl::StrCat("blob ", digest.ToString(),
                     " was deleted as a Put found it stored; retry"));
  }
  return marked;
}

}  // namespace verity::server
