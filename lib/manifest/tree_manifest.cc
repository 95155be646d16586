// Implements tree manifests. The layout (docs/protocol.md, "Tree manifests"),
// integers little-endian as in fs-verity's own structures:
//
//   manifest = magic "verityd tree v1\n", u32 entry count, the entries
//   entry    = u8 type (1 file, 2 directory, 3 symlink),
//              u16 path size, path bytes, then by type:
//     file      u8 flags (bit 0: executable; the others 0), u64 size,
//               u8 hash algorithm (fs-verity's numbers), digest bytes
//     directory nothing
//     symlink   u16 target size, target bytes

#include "lib/manifest/tree_manifest.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/little_endian.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"
#include "lib/manifest/tree_links.h"

namespace verity {
namespace {

constexpr absl::string_view kMagic = kTreeManifestMagic;
constexpr uint8_t kExecutable = 1;

absl::Status Bad(absl::string_view path, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "tree manifest: entry \"", absl::CEscape(path), "\": ", what));
}

// A u16 size, then that many bytes.
bool ReadSized(LittleEndianReader& in, absl::string_view* out) {
  uint64_t size = 0;
  return in.Integer(2, &size) && in.Bytes(size, out);
}

// The folder that holds `path`: what comes before its last '/', or "" (the
// root).
absl::string_view ParentOf(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? "" : path.substr(0, slash);
}

absl::Status CheckTarget(absl::string_view path, absl::string_view target) {
  if (target.empty() || target.size() > kMaxTreePathBytes) {
    return Bad(path, absl::StrCat("a symlink target must have 1 to ",
                                  kMaxTreePathBytes, " bytes"));
  }
  if (target.find('\0') != absl::string_view::npos) {
    return Bad(path, "a symlink target has a NUL byte");
  }
  if (target.front() == '/') return Bad(path, "a symlink target is absolute");
  return absl::OkStatus();
}

// Checks one entry against the rules that need no other entry.
absl::Status CheckEntry(const TreeEntry& entry) {
  RETURN_IF_ERROR(CheckTreePath(entry.path));
  switch (entry.type) {
    case TreeEntryType::kFile:
      if (entry.digest.digest.size() != DigestSize(entry.digest.algorithm)) {
        return Bad(entry.path, "a file's digest has the wrong size");
      }
      if (!entry.target.empty()) return Bad(entry.path, "a file has a target");
      return absl::OkStatus();
    case TreeEntryType::kDirectory:
    case TreeEntryType::kSymlink:
      if (!entry.digest.digest.empty() || entry.size != 0 || entry.executable) {
        return Bad(entry.path, "only a file has a digest, size or mode");
      }
      if (entry.type == TreeEntryType::kSymlink) {
        return CheckTarget(entry.path, entry.target);
      }
      if (!entry.target.empty()) {
        return Bad(entry.path, "a directory has a target");
      }
      return absl::OkStatus();
  }
  return Bad(entry.path, "an unknown type");
}

// Checks the rules between entries: sorted, each once, each parent a
// directory listed before, every symlink resolving inside the tree.
absl::Status CheckTree(const std::vector<TreeEntry>& entries) {
  if (entries.size() > kMaxTreeEntries) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tree manifest: ", entries.size(), " entries, over ", kMaxTreeEntries));
  }
  absl::flat_hash_set<absl::string_view> directories;
  for (size_t i = 0; i < entries.size(); ++i) {
    const TreeEntry& entry = entries[i];
    if (i > 0 && !(entries[i - 1].path < entry.path)) {
      return Bad(entry.path, entries[i - 1].path == entry.path
                                 ? "listed twice"
                                 : "out of order (entries sort by path)");
    }
    const absl::string_view parent = ParentOf(entry.path);
    if (!parent.empty() && !directories.contains(parent)) {
      return Bad(entry.path, "its folder is not a directory listed before it");
    }
    if (entry.type == TreeEntryType::kDirectory) {
      directories.insert(entry.path);
    }
  }
  if (const std::optional<BadLink> bad = FindEscapingLink(entries)) {
    return Bad(entries[bad->entry].path,
               bad->fault == LinkFault::kTooManySymlinks
                   ? "its target takes too many symlinks"
                   : "its target leaves the tree");
  }
  return absl::OkStatus();
}

void EncodeEntry(const TreeEntry& entry, std::string* out) {
  AppendLittleEndian(static_cast<uint8_t>(entry.type), 1, out);
  AppendLittleEndian(entry.path.size(), 2, out);
  out->append(entry.path);
  switch (entry.type) {
    case TreeEntryType::kFile:
      AppendLittleEndian(entry.executable ? kExecutable : 0, 1, out);
      AppendLittleEndian(entry.size, 8, out);
      AppendLittleEndian(static_cast<uint8_t>(entry.digest.algorithm), 1, out);
      out->append(entry.digest.digest);
      return;
    case TreeEntryType::kDirectory:
      return;
    case TreeEntryType::kSymlink:
      AppendLittleEndian(entry.target.size(), 2, out);
      out->append(entry.target);
      return;
  }
}

absl::StatusOr<TreeEntry> ParseEntry(LittleEndianReader& in) {
  TreeEntry entry;
  uint64_t type = 0;
  absl::string_view path;
  if (!in.Integer(1, &type) || !ReadSized(in, &path)) {
    return absl::InvalidArgumentError("tree manifest: an entry is cut short");
  }
  entry.path = std::string(path);
  entry.type = static_cast<TreeEntryType>(type);
  switch (entry.type) {
    case TreeEntryType::kFile: {
      uint64_t flags = 0, algorithm = 0;
      if (!in.Integer(1, &flags) || !in.Integer(8, &entry.size) ||
          !in.Integer(1, &algorithm)) {
        return Bad(path, "cut short");
      }
      if ((flags & ~uint64_t{kExecutable}) != 0) {
        return Bad(path, "unknown flags");
      }
      entry.executable = (flags & kExecutable) != 0;
      entry.digest.algorithm = static_cast<HashAlgorithm>(algorithm);
      if (algorithm != static_cast<uint8_t>(HashAlgorithm::kSha256) &&
          algorithm != static_cast<uint8_t>(HashAlgorithm::kSha512)) {
        return Bad(path, "an unknown hash algorithm");
      }
      absl::string_view digest;
      if (!in.Bytes(DigestSize(entry.digest.algorithm), &digest)) {
        return Bad(path, "cut short");
      }
      entry.digest.digest = std::string(digest);
      break;
    }
    case TreeEntryType::kDirectory:
      break;
    case TreeEntryType::kSymlink: {
      absl::string_view target;
      if (!ReadSized(in, &target)) return Bad(path, "cut short");
      entry.target = std::string(target);
      break;
    }
    default:
      return Bad(path, absl::StrCat("an unknown type ", type));
  }
  RETURN_IF_ERROR(CheckEntry(entry));
  return entry;
}

}  // namespace

absl::Status CheckTreePath(absl::string_view path) {
  if (path.empty() || path.size() > kMaxTreePathBytes) {
    return Bad(path, absl::StrCat("a path must have 1 to ", kMaxTreePathBytes,
                                  " bytes"));
  }
  if (path.find('\0') != absl::string_view::npos) {
    return Bad(path, "a path has a NUL byte");
  }
  if (path.front() == '/') return Bad(path, "a path is absolute");
  for (absl::string_view name : absl::StrSplit(path, '/')) {
    if (name.empty()) return Bad(path, "a path has an empty name");
    if (name == "." || name == "..") {
      return Bad(path, "a path has a \".\" or \"..\" name");
    }
    if (name.size() > kMaxTreeNameBytes) {
      return Bad(path,
                 absl::StrCat("a name is over ", kMaxTreeNameBytes, " bytes"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> EncodeTreeManifest(std::vector<TreeEntry> entries) {
  std::sort(
      entries.begin(), entries.end(),
      [](const TreeEntry& a, const TreeEntry& b) { return a.path < b.path; });
  for (const TreeEntry& entry : entries) RETURN_IF_ERROR(CheckEntry(entry));
  RETURN_IF_ERROR(CheckTree(entries));
  std::string out(kMagic);
  AppendLittleEndian(entries.size(), 4, &out);
  for (const TreeEntry& entry : entries) {
    EncodeEntry(entry, &out);
    if (out.size() > kMaxTreeManifestBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tree manifest: over ", kMaxTreeManifestBytes, " bytes"));
    }
  }
  return out;
}

absl::StatusOr<TreeManifest> ParseTreeManifest(absl::string_view bytes) {
  if (bytes.size() > kMaxTreeManifestBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("tree manifest: ", bytes.size(), " bytes, over ",
                     kMaxTreeManifestBytes));
  }
  if (!absl::StartsWith(bytes, kMagic)) {
    return absl::InvalidArgumentError("not a tree manifest (no magic)");
  }
  LittleEndianReader in(bytes.substr(kMagic.size()));
  uint64_t count = 0;
  if (!in.Integer(4, &count)) {
    return absl::InvalidArgumentError("tree manifest: no entry count");
  }
  if (count > kMaxTreeEntries) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tree manifest: ", count, " entries, over ", kMaxTreeEntries));
  }
  TreeManifest manifest;
  // Each entry takes at least 4 bytes: no reserve beyond what is there.
  manifest.entries.reserve(std::min<uint64_t>(count, bytes.size() / 4));
  for (uint64_t i = 0; i < count; ++i) {
    ASSIGN_OR_RETURN(TreeEntry entry, ParseEntry(in));
    manifest.entries.push_back(std::move(entry));
  }
  if (!in.done()) {
    return absl::InvalidArgumentError(
        "tree manifest: bytes after its last entry");
  }
  RETURN_IF_ERROR(CheckTree(manifest.entries));
  return manifest;
}

}  // namespace verity
