// Implements the CLI's tree calls: the checks and lines of the commands
// around the SDK's ScanTree/PutTree, FetchTree and ReadTree.

#include "client/cli/tree_transfer.h"

#include <sys/stat.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "client/cli/flag_values.h"
#include "client/cli/name_signing.h"
#include "lib/base/printable.h"
#include "lib/base/status_macros.h"
#include "lib/manifest/tree_manifest.h"
#include "lib/tree/descriptor.h"
#include "verity/tree.h"

namespace verity::cli {
namespace {

void Print(std::FILE* out, absl::string_view text) {
  std::fwrite(text.data(), 1, text.size(), out);
}

}  // namespace

bool IsFolder(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

absl::Status PutFolder(sdk::Client& client, const std::string& folder,
                       const PutFolderOptions& options, std::FILE* out,
                       std::FILE* err) {
  ASSIGN_OR_RETURN(
      const sdk::LocalTree tree,
      sdk::ScanTree(folder,
                    static_cast<sdk::DigestAlgorithm>(options.hash_algorithm),
                    MachineThreads()));
  sdk::PutTreeOptions put;
  put.name = options.name;
  put.parallel = options.parallel;
  if (!options.signing.key_file.empty()) {
    ASSIGN_OR_RETURN(const ParsedDigest digest,
                     ParseDigest(tree.digest.ToString()));
    ASSIGN_OR_RETURN(put.name_statement,
                     SignName(options.signing, options.name, digest,
                              NameKind::kTree, &client));
  }
  ASSIGN_OR_RETURN(const sdk::PutTreeResult result,
                   sdk::PutTree(client, tree, put));
  Print(out, absl::StrCat(result.info.digest.ToString(), " ", folder, "\n"));
  Print(err, absl::StrCat(folder, ": a tree of ", result.files, " files (",
                          tree.file_bytes, " bytes); sent ", result.blobs_sent,
                          " blobs (", result.bytes_sent, " bytes)\n"));
  return absl::OkStatus();
}

absl::Status GetTree(sdk::Client& client, const sdk::Digest& digest,
                     const std::string& output, const sdk::FetchOptions& fetch,
                     int parallel) {
  sdk::FetchTreeOptions options;
  options.fetch = fetch;
  options.parallel = parallel;
  return sdk::FetchTree(client, digest, output, options).status();
}

absl::Status ListTree(sdk::Client& client, const client::BlobRef& tree,
                      std::FILE* out) {
  ASSIGN_OR_RETURN(const client::ResolvedBlob blob, ResolveBlob(client, tree));
  RETURN_IF_ERROR(CheckTree(blob, tree, /*insist=*/false));
  ASSIGN_OR_RETURN(const std::vector<sdk::TreeEntry> entries,
                   sdk::ReadTree(client, blob.digest(), sdk::FetchOptions()));
  for (const sdk::TreeEntry& entry : entries) {
    switch (entry.type) {
      case sdk::TreeEntryType::kDirectory:
        Print(out, absl::StrCat("d 0755 ", Printable(entry.path), "\n"));
        break;
      case sdk::TreeEntryType::kFile:
        Print(out, absl::StrCat("f ", entry.executable ? "0755 " : "0644 ",
                                entry.size, " ", entry.digest->ToString(), " ",
                                Printable(entry.path), "\n"));
        break;
      case sdk::TreeEntryType::kSymlink:
        Print(out, absl::StrCat("l ", Printable(entry.path), " -> ",
                                Printable(entry.target), "\n"));
        break;
    }
  }
  return absl::OkStatus();
}

}  // namespace verity::cli
