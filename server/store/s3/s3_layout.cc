// Implements S3Layout.

#include "server/store/s3/s3_layout.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "server/store/name_index.h"

namespace verity::server {
namespace {

std::string Hex(const ParsedDigest& digest) {
  return absl::BytesToHexString(digest.digest);
}

// <alg>-<hex>: a blob's name in a folder of one object per blob.
std::string FlatName(const ParsedDigest& digest) {
  return absl::StrCat(HashAlgorithmName(digest.algorithm), "-", Hex(digest));
}

absl::string_view ObjectName(BlobObject what) {
  switch (what) {
    case BlobObject::kData:
      return "data";
    case BlobObject::kTree:
      return "tree";
    case BlobObject::kDescriptor:
      return "descriptor";
    case BlobObject::kSignature:
      return "fsverity_signature";
    case BlobObject::kFec:
      return "fec";
    case BlobObject::kTreeManifestMark:
      return "tree_manifest";
  }
  return "data";
}

}  // namespace

S3Layout::S3Layout(std::string prefix) : prefix_(std::move(prefix)) {
  if (!prefix_.empty() && prefix_.back() != '/') prefix_ += '/';
}

std::string S3Layout::BlobPrefix(const ParsedDigest& digest) const {
  return absl::StrCat(blobs_prefix(), HashAlgorithmName(digest.algorithm), "/",
                      Hex(digest), "/");
}

std::string S3Layout::BlobKey(const ParsedDigest& digest,
                              BlobObject what) const {
  return absl::StrCat(BlobPrefix(digest), ObjectName(what));
}

std::string S3Layout::NameHintPrefix(const ParsedDigest& digest) const {
  return absl::StrCat(BlobPrefix(digest), "names/");
}

std::string S3Layout::NameHintKey(const ParsedDigest& digest,
                                  absl::string_view name) const {
  return absl::StrCat(NameHintPrefix(digest), NameFileName(name));
}

std::string S3Layout::NameKey(absl::string_view name) const {
  return absl::StrCat(names_prefix(), NameFileName(name));
}

std::string S3Layout::QuarantineKey(const ParsedDigest& digest) const {
  return absl::StrCat(QuarantinePrefix(), FlatName(digest));
}

std::string S3Layout::UsedKey(const ParsedDigest& digest) const {
  return absl::StrCat(prefix_, "used/", FlatName(digest));
}

std::string S3Layout::RecordKey(absl::string_view key) const {
  return absl::StrCat(prefix_, "upkeep/", key);
}

std::string S3Layout::LogKey(absl::string_view path) const {
  return absl::StrCat(prefix_, "log/", path);
}

std::string S3Layout::DamagedKey(const ParsedDigest& digest) const {
  return absl::StrCat(prefix_, "damaged/", FlatName(digest));
}

std::string S3Layout::UploadKey(absl::string_view id) const {
  return absl::StrCat(uploads_prefix(), id);
}

std::optional<ParsedDigest> S3Layout::ParseBlobKey(absl::string_view key,
                                                   size_t* prefix_size) const {
  const absl::string_view whole = key;
  if (!absl::ConsumePrefix(&key, blobs_prefix())) return std::nullopt;
  const std::vector<absl::string_view> parts =
      absl::StrSplit(key, absl::MaxSplits('/', 2));
  if (parts.size() != 3 || parts[2].empty()) return std::nullopt;
  // Only the lowercase hex BlobKey writes: "sha256:<HEX>" would also parse.
  for (const char c : parts[1]) {
    if (!absl::ascii_isdigit(c) && !(c >= 'a' && c <= 'f')) {
      return std::nullopt;
    }
  }
  absl::StatusOr<ParsedDigest> digest =
      ParseDigest(absl::StrCat(parts[0], ":", parts[1]));
  if (!digest.ok()) return std::nullopt;
  if (prefix_size != nullptr) *prefix_size = whole.size() - parts[2].size();
  return *std::move(digest);
}

std::optional<ParsedDigest> S3Layout::ParseDescriptorKey(
    absl::string_view key) const {
  size_t prefix_size = 0;
  std::optional<ParsedDigest> digest = ParseBlobKey(key, &prefix_size);
  if (!digest.has_value() || key.substr(prefix_size) != "descriptor") {
    return std::nullopt;
  }
  return digest;
}

std::string S3Layout::ListStartAfter(absl::string_view after) const {
  if (after.empty()) return "";
  absl::StatusOr<ParsedDigest> digest = ParseDigest(after);
  // Not a digest (page tokens are): start after the text itself.
  if (!digest.ok()) return absl::StrCat(blobs_prefix(), after);
  // '~' sorts after every character a key of this blob continues with.
  return absl::StrCat(BlobPrefix(*digest), "~");
}

}  // namespace verity::server
