// `verity sign`: makes the signed statement "NAME means DIGEST" that clients
// with trusted keys require, and prints it, writes it, or stores it.

#ifndef VERITYD_CLIENT_CLI_SIGN_COMMAND_H_
#define VERITYD_CLIENT_CLI_SIGN_COMMAND_H_

#include <cstdio>
#include <string>

#include "absl/status/statusor.h"
#include "client/cli/connection.h"
#include "client/cli/name_signing.h"
#include "lib/tree/descriptor.h"

namespace verity::cli {

// The parsed command line of `verity sign`. Plain value.
struct SignOptions {
  client::ConnectionOptions connection;
  std::string name;
  ParsedDigest digest;
  SigningOptions signing;  // --key, --version, --expires-in
  std::string out;         // --out: the binary statement to this file
  bool store = false;      // --store: SetName on the server
  bool tree = false;       // --tree: the name means a tree
};

// Parses `argv` (argv[0] is "sign"); INVALID_ARGUMENT naming the problem.
absl::StatusOr<SignOptions> ParseSignOptions(int argc, char** argv);

// Runs `verity sign` and returns its exit code. Without --out or --store the
// statement is printed in base64 on one line.
int RunSignCommand(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_SIGN_COMMAND_H_
