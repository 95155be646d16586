// A tree manifest: the canonical encoding of a directory tree whose files are
// blobs, so that one digest (the manifest's own, as a blob) names a whole
// release of files, and one signed name statement over it binds them all
// (no mix of files from two releases). docs/protocol.md, "Tree manifests",
// has the layout.
//
// Every entry is a relative path with its type: a file (its blob's digest,
// its size and the executable bit), a directory, or a symlink (its target,
// which must stay inside the tree). Entries are sorted by path bytes, each
// parent directory listed before what it holds, no path twice: the encoding
// of a tree is unique, and ParseTreeManifest() accepts nothing else.

#ifndef VERITYD_LIB_MANIFEST_TREE_MANIFEST_H_
#define VERITYD_LIB_MANIFEST_TREE_MANIFEST_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/manifest/tree_entry.h"

namespace verity {

// How every manifest begins.
inline constexpr absl::string_view kTreeManifestMagic = "verityd tree v1\n";

// The entries in canonical order: sorted by path bytes.
struct TreeManifest {
  std::vector<TreeEntry> entries;
};

// The manifest of `entries` (any order): sorted, checked (as
// ParseTreeManifest checks), encoded. INVALID_ARGUMENT naming the entry that
// breaks a rule.
absl::StatusOr<std::string> EncodeTreeManifest(std::vector<TreeEntry> entries);

// The tree `bytes` encode. INVALID_ARGUMENT, naming what is wrong, unless
// `bytes` are exactly what EncodeTreeManifest() gives for some tree: a bad
// magic, entries out of order or repeated, a path that is absolute or has an
// empty, "." or ".." component or a NUL, an entry whose parent is not a
// directory listed before it, a symlink whose target is absolute or leaves
// the tree, a digest of an unknown algorithm, limits passed, bytes left over.
absl::StatusOr<TreeManifest> ParseTreeManifest(absl::string_view bytes);

// INVALID_ARGUMENT unless `path` is a relative tree path (see TreeEntry).
absl::Status CheckTreePath(absl::string_view path);

}  // namespace verity

#endif  // VERITYD_LIB_MANIFEST_TREE_MANIFEST_H_
