// Test support: runs the reference `fsverity digest` and `fsverity sign`
// (fsverity-utils), and other tools through a shell, so tests can compare our
// trees, descriptors and digests byte for byte and check real signatures.

#ifndef VERITYD_LIB_TESTING_FSVERITY_CLI_H_
#define VERITYD_LIB_TESTING_FSVERITY_CLI_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/tree/merkle_params.h"

namespace verity {

inline constexpr char kFsverityPath[] = "/usr/bin/fsverity";

struct FsverityOutput {
  std::string line;        // stdout without the newline: "sha256:<hex> PATH"
  std::string tree;        // what --out-merkle-tree wrote
  std::string descriptor;  // what --out-descriptor wrote
};

// Runs `fsverity digest` on the file at `path` with `params`.
// FAILED_PRECONDITION if kFsverityPath is not executable.
absl::StatusOr<FsverityOutput> RunFsverityDigest(absl::string_view path,
                                                 const MerkleParams& params);

// Runs `fsverity sign` on the file at `path` with `params` (salt unsupported)
// and the PEM key and certificate files, and returns the DER PKCS#7 signature
// it writes and the line it prints ("Signed file 'PATH' (sha256:<hex>)").
// FAILED_PRECONDITION if kFsverityPath is not executable.
struct FsveritySignOutput {
  std::string signature;
  std::string line;
};
absl::StatusOr<FsveritySignOutput> RunFsveritySign(absl::string_view path,
                                                   const MerkleParams& params,
                                                   absl::string_view key_path,
                                                   absl::string_view cert_path);

// Runs `command` with /bin/sh and returns its stdout and stderr; INTERNAL,
// with them, if it does not exit with 0.
absl::StatusOr<std::string> RunShellCommand(const std::string& command);

// Quotes `s` for /bin/sh.
std::string ShellQuote(absl::string_view s);

// $TEST_TMPDIR if set (Bazel sets it), else /tmp.
std::string TestTempDir();

// TestTempDir()/`name`, made empty: removed with what it held, then made.
std::string FreshTestDir(absl::string_view name);

// Writes `data` to `name` in TestTempDir() and returns the file's path.
absl::StatusOr<std::string> WriteTestFile(absl::string_view name,
                                          absl::string_view data);

// Reads a whole file.
absl::StatusOr<std::string> ReadTestFile(absl::string_view path);

}  // namespace verity

#endif  // VERITYD_LIB_TESTING_FSVERITY_CLI_H_
