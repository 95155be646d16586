// Implements the mark from a store's roots.

#include "server/upkeep/roots.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "lib/base/bytes.h"
#include "lib/base/status_macros.h"
#include "lib/manifest/tree_manifest.h"
#include "lib/tree/merkle_builder.h"

namespace verity::server {
namespace {

// Names read per ListNames page.
constexpr size_t kNamesPerPage = 100;

// The files of the tree `digest`'s blob is, or an empty list if it is not a
// tree (or is gone).
absl::StatusOr<std::vector<TreeEntry>> FilesIfTree(const Store& store,
                                                   const ParsedDigest& digest) {
  ASSIGN_OR_RETURN(const std::optional<std::string> bytes,
                   ReadStoredTree(store, digest));
  if (!bytes.has_value()) return std::vector<TreeEntry>();
  ASSIGN_OR_RETURN(TreeManifest manifest, ParseTreeManifest(*bytes));
  std::vector<TreeEntry> files;
  for (TreeEntry& entry : manifest.entries) {
    if (entry.type == TreeEntryType::kFile) files.push_back(std::move(entry));
  }
  return files;
}

}  // namespace

absl::StatusOr<std::optional<std::string>> ReadStoredTree(
    const Store& store, const ParsedDigest& digest) {
  absl::StatusOr<std::shared_ptr<const Blob>> blob = store.OpenBlob(digest);
  if (absl::IsNotFound(blob.status())) return std::nullopt;
  RETURN_IF_ERROR(blob.status());
  const uint64_t size = (*blob)->descriptor().data_size;
  if (size < kTreeManifestMagic.size() || size > kMaxTreeManifestBytes) {
    return std::nullopt;
  }
  std::string magic(kTreeManifestMagic.size(), '\0');
  RETURN_IF_ERROR(
      ReadAndWait(**blob, BlobPart::kData, 0, AsMutableBytes(&magic)));
  if (magic != kTreeManifestMagic) return std::nullopt;
  std::string bytes(size, '\0');
  RETURN_IF_ERROR(
      ReadAndWait(**blob, BlobPart::kData, 0, AsMutableBytes(&bytes)));
  ASSIGN_OR_RETURN(const MerkleTree tree,
                   BuildMerkleTree((*blob)->params(), AsBytes(bytes)));
  if (tree.digest != digest.digest) {
    return DamagedBlob(digest.ToString(),
                       "its content does not hash to its digest");
  }
  // A file that only begins as a manifest does.
  if (!ParseTreeManifest(bytes).ok()) return std::nullopt;
  return bytes;
}

std::string DescribeRootPath(const RootPath& path) {
  std::string text = absl::StrCat("name \"", path.name, "\" (version ",
                                  path.version, " of its history)");
  if (!path.tree_path.empty()) {
    absl::StrAppend(&text, ", file ", path.tree_path, " of its tree");
  }
  return text;
}

void ReachableBlobs::Add(const ParsedDigest& digest, const RootPath& path) {
  paths_.try_emplace(digest.ToString(), path);
}

const RootPath* ReachableBlobs::Find(const ParsedDigest& digest) const {
  const auto it = paths_.find(digest.ToString());
  return it == paths_.end() ? nullptr : &it->second;
}

absl::StatusOr<ReachableBlobs> MarkReachable(
    const Store& store, const std::function<absl::Status()>& between_pages) {
  ReachableBlobs reached;
  // Blobs whose content was looked at: a tree named by many versions is
  // read once.
  absl::flat_hash_set<std::string> examined;
  std::string after;
  do {
    if (between_pages) RETURN_IF_ERROR(between_pages());
    ASSIGN_OR_RETURN(const NamePage page,
                     store.ListNames(after, kNamesPerPage));
    for (const NameHistory& history : page.names) {
      reached.CountName();
      for (size_t v = 0; v < history.versions.size(); ++v) {
        const ParsedDigest& digest = history.versions[v].digest;
        const RootPath root{history.name, v, ""};
        reached.Add(digest, root);
        if (!examined.insert(digest.ToString()).second) continue;
        absl::StatusOr<std::vector<TreeEntry>> files =
            FilesIfTree(store, digest);
        if (!files.ok()) {
          return absl::Status(
              files.status().code(),
              absl::StrCat("cannot tell what ", DescribeRootPath(root),
                           " reaches: ", files.status().message()));
        }
        if (!files->empty()) reached.CountTree();
        for (const TreeEntry& file : *files) {
          reached.Add(file.digest, RootPath{history.name, v, file.path});
        }
      }
    }
    after = page.next;
  } while (!after.empty());
  return reached;
}

}  // namespace verity::server
