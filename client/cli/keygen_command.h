// `verity keygen`: a new Ed25519 key for signing names, for people without
// openssl (`openssl genpkey -algorithm ed25519` makes the same kind).

#ifndef VERITYD_CLIENT_CLI_KEYGEN_COMMAND_H_
#define VERITYD_CLIENT_CLI_KEYGEN_COMMAND_H_

#include <cstdio>

namespace verity::cli {

// Runs `verity keygen --out=FILE` (argv[0] is "keygen"): writes the private
// key to FILE (PKCS#8 PEM, mode 0600) and its public key to FILE.pub (PEM),
// refusing to replace either, and prints the key id and the public key.
// Returns the exit code.
int RunKeygenCommand(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_KEYGEN_COMMAND_H_
