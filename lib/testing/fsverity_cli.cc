// Implements the fsverity CLI runner with popen.

#include "lib/testing/fsverity_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"

namespace verity {
namespace {

std::string BuildCommand(absl::string_view path, const MerkleParams& params,
                         absl::string_view tree_path,
                         absl::string_view descriptor_path) {
  std::string command =
      absl::StrCat(kFsverityPath, " digest ", ShellQuote(path),
                   " --hash-alg=", HashAlgorithmName(params.hash_algorithm),
                   " --block-size=", params.block_size,
                   " --out-merkle-tree=", ShellQuote(tree_path),
                   " --out-descriptor=", ShellQuote(descriptor_path));
  if (!params.salt.empty()) {
    absl::StrAppend(&command, " --salt=", absl::BytesToHexString(params.salt));
  }
  return absl::StrCat(command, " 2>&1");
}

absl::Status CheckFsverityInstalled() {
  if (access(kFsverityPath, X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        kFsverityPath, " is missing: install the Debian package fsverity"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string ShellQuote(absl::string_view s) {
  return absl::StrCat("'", absl::StrReplaceAll(s, {{"'", "'\\''"}}), "'");
}

absl::StatusOr<std::string> RunShellCommand(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return absl::InternalError("popen failed");
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    output.append(buffer, n);
  }
  const int status = pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(
        absl::StrCat("`", command, "` failed: ", output));
  }
  return output;
}

std::string TestTempDir() {
  const char* dir = getenv("TEST_TMPDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

std::string FreshTestDir(absl::string_view name) {
  const std::filesystem::path dir =
      std::filesystem::path(TestTempDir()) / std::string(name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

absl::StatusOr<std::string> WriteTestFile(absl::string_view name,
                                          absl::string_view data) {
  const std::string path = absl::StrCat(TestTempDir(), "/", name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return path;
}

absl::StatusOr<std::string> ReadTestFile(absl::string_view path) {
  std::ifstream in(std::string(path), std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

absl::StatusOr<FsverityOutput> RunFsverityDigest(absl::string_view path,
                                                 const MerkleParams& params) {
  absl::Status installed = CheckFsverityInstalled();
  if (!installed.ok()) return installed;
  const std::string tree_path = absl::StrCat(path, ".tree");
  const std::string descriptor_path = absl::StrCat(path, ".descriptor");
  const absl::StatusOr<std::string> output =
      RunShellCommand(BuildCommand(path, params, tree_path, descriptor_path));
  if (!output.ok()) return output.status();
  FsverityOutput result;
  result.line = std::string(absl::StripSuffix(*output, "\n"));
  absl::StatusOr<std::string> tree = ReadTestFile(tree_path);
  absl::StatusOr<std::string> descriptor = ReadTestFile(descriptor_path);
  unlink(tree_path.c_str());
  unlink(descriptor_path.c_str());
  if (!tree.ok()) return tree.status();
  if (!descriptor.ok()) return descriptor.status();
  result.tree = *std::move(tree);
  result.descriptor = *std::move(descriptor);
  return result;
}

absl::StatusOr<FsveritySignOutput> RunFsveritySign(
    absl::string_view path, const MerkleParams& params,
    absl::string_view key_path, absl::string_view cert_path) {
  absl::Status installed = CheckFsverityInstalled();
  if (!installed.ok()) return installed;
  if (!params.salt.empty()) {
    return absl::UnimplementedError("RunFsveritySign takes no salt");
  }
  const std::string signature_path = absl::StrCat(path, ".sig");
  const absl::StatusOr<std::string> output = RunShellCommand(
      absl::StrCat(kFsverityPath, " sign ", ShellQuote(path), " ",
                   ShellQuote(signature_path), " --key=", ShellQuote(key_path),
                   " --cert=", ShellQuote(cert_path),
                   " --hash-alg=", HashAlgorithmName(params.hash_algorithm),
                   " --block-size=", params.block_size, " 2>&1"));
  if (!output.ok()) return output.status();
  absl::StatusOr<std::string> signature = ReadTestFile(signature_path);
  unlink(signature_path.c_str());
  if (!signature.ok()) return signature.status();
  return FsveritySignOutput{*std::move(signature),
                            std::string(absl::StripSuffix(*output, "\n"))};
}

}  // namespace verity
