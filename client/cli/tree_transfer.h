// Trees on the command line: `verity put DIR`, `verity get NAME -o DIR` and
// `verity ls NAME`, on the SDK's verity/tree.h.

#ifndef VERITYD_CLIENT_CLI_TREE_TRANSFER_H_
#define VERITYD_CLIENT_CLI_TREE_TRANSFER_H_

#include <cstdio>
#include <string>

#include "absl/status/statusor.h"
#include "client/cli/name_signing.h"
#include "client/names/blob_ref.h"
#include "client/names/resolved_blob.h"
#include "lib/tree/merkle_params.h"
#include "verity/client.h"
#include "verity/digest.h"
#include "verity/sink.h"

namespace verity::cli {

// True if `path` is a directory (following a symlink), which `verity put`
// stores as a tree.
bool IsFolder(const std::string& path);

// How `verity put` stores a folder. Plain value.
struct PutFolderOptions {
  HashAlgorithm hash_algorithm = HashAlgorithm::kSha256;
  std::string name;        // --name; empty for none
  SigningOptions signing;  // --sign-key (with --name) and its flags
  int parallel = 8;        // files uploaded at a time
};

// Stores the folder `folder` as a tree (the files the server lacks, then the
// manifest, named and signed as `options` says) and prints "DIGEST FOLDER"
// to `out` and what was sent to `err`.
absl::Status PutFolder(sdk::Client& client, const std::string& folder,
                       const PutFolderOptions& options, std::FILE* out,
                       std::FILE* err);

// Writes the tree `digest` names into the folder `output` (see
// sdk::FetchTree), `parallel` files at a time, each fetched with `fetch`.
absl::Status GetTree(sdk::Client& client, const sdk::Digest& digest,
                     const std::string& output, const sdk::FetchOptions& fetch,
                     int parallel);

// Prints the entries of the tree `tree` names, one a line: "d 0755 PATH",
// "f 0644 SIZE DIGEST PATH" (0755 if executable), "l PATH -> TARGET".
absl::Status ListTree(sdk::Client& client, const client::BlobRef& tree,
                      std::FILE* out);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_TREE_TRANSFER_H_
