// `verity get`: reads a blob, or a range of it, over one or several streams,
// and outputs only content that was verified against its digest.

#ifndef VERITYD_CLIENT_CLI_GET_COMMAND_H_
#define VERITYD_CLIENT_CLI_GET_COMMAND_H_

#include <cstdio>
#include <string>

#include "absl/status/statusor.h"
#include "client/cli/connection.h"
#include "client/cli/dm_verity_root.h"
#include "client/cli/trust_options.h"
#include "client/names/blob_ref.h"
#include "verity/options.h"

namespace verity::cli {

// What `verity get -o PATH` writes: a tree into the folder PATH or the
// blob's bytes into the file PATH.
enum class GetLayout {
  // With -o, a tree if the name's verified statement says so, else if the
  // server says the blob is a tree manifest (BlobInfo::tree_manifest).
  kAuto,
  kTree,  // --tree
  kFile,  // --file
};

// The parsed command line of `verity get`. Plain value.
struct GetOptions {
  client::ConnectionOptions connection;
  // DIGEST_OR_NAME; with --root-hash, the digest it gives, set when the
  // command runs.
  client::BlobRef blob;
  // --root-hash with --hash-device or --verity-params: a dm-verity blob.
  DmVerityRootFlags dm_verity;
  std::string output;  // -o/--output; empty for `out`
  // --offset, --length, --priority, --parallel.
  sdk::FetchOptions fetch;
  GetLayout layout = GetLayout::kAuto;
  // --parallel for a tree: files fetched at a time, each over one stream.
  int parallel_files = 8;
  // --deadline: the whole fetch, retries included; zero for none.
  absl::Duration deadline = absl::ZeroDuration();
  // --trusted-keys, --trusted-keys-threshold, --state-dir.
  TrustOptions trust;
};

// Parses `argv` (argv[0] is "get"); INVALID_ARGUMENT naming the problem.
absl::StatusOr<GetOptions> ParseGetOptions(int argc, char** argv);

// Runs `verity get` and returns its exit code. Without -o, verified bytes are
// written to `out` as they arrive, so a failure can leave a verified prefix
// there. With trusted keys, a name whose statement is refused is never read:
// exit 3, nothing written. With -o FILE, FILE appears only once the whole
// range is verified;
// otherwise it is left absent or as it was. When `err` is a terminal, a large
// transfer shows a progress line there.
int RunGetCommand(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_GET_COMMAND_H_
