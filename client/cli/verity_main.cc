// The `verity` command line: one binary, one subcommand per job.

#include <cstdio>
#include <cstring>

#include "absl/synchronization/mutex.h"
#include "client/cli/audit_command.h"
#include "client/cli/digest_command.h"
#include "client/cli/exit_codes.h"
#include "client/cli/gc_command.h"
#include "client/cli/get_command.h"
#include "client/cli/history_command.h"
#include "client/cli/keygen_command.h"
#include "client/cli/ls_command.h"
#include "client/cli/mount_command.h"
#include "client/cli/put_command.h"
#include "client/cli/rm_command.h"
#include "client/cli/scrub_command.h"
#include "client/cli/sign_command.h"
#include "client/cli/stat_command.h"
#include "client/cli/sync_command.h"
#include "client/cli/witness_command.h"

namespace {

constexpr char kUsage[] =
    "Usage: verity COMMAND [ARGS...]\n"
    "\n"
    "Commands:\n"
    "  digest FILE... [--hash-alg=sha256|sha512] [--block-size=N] "
    "[--salt=HEX] ...\n"
    "      print the fs-verity digest of local files, as `fsverity digest` "
    "does\n"
    "  put FILE_OR_DIR... [--hash-alg=] [--block-size=] [--salt=] "
    "[--name=NAME]\n"
    "              [--sign-key=FILE [--version=N] [--expires-in=DURATION]\n"
    "               [--state-dir=DIR]]\n"
    "              [--fsverity-sig=SIG]\n"
    "      store files on the server; print their digests once it agrees;\n"
    "      a DIR is stored as a tree (one digest for all its files);\n"
    "      --sign-key also stores a signed statement for the name\n"
    "  get DIGEST_OR_NAME [-o FILE] [--offset=N] [--length=N]\n"
    "                     [--priority=rt|be|idle|none] [--parallel=N]\n"
    "                     [--trusted-keys=FILE] [--state-dir=DIR]\n"
    "                     [--fsverity-cert=PEM]\n"
    "      read a blob, verified against its digest (by name, against the\n"
    "      digest the server names, or with --trusted-keys the one its\n"
    "      signed statement names: pass the digest to distrust the server);\n"
    "      a tree is written to the folder -o DIR, replacing it when all\n"
    "      is verified\n"
    "  sync NAME DIR [--interval=DURATION] [--once] [--exec-on-update=CMD]\n"
    "      keep DIR holding the newest verified version of the tree NAME\n"
    "      (a sidecar for apps in any language: `verity sync --help`)\n"
    "  mount DIGEST_OR_NAME MOUNTPOINT\n"
    "      a tree as a read-only file system, every block verified before\n"
    "      the kernel sees it (FUSE: `verity mount --help`)\n"
    "  stat DIGEST_OR_NAME [--trusted-keys=FILE]\n"
    "      show what the server knows about a blob, and a name's statement\n"
    "  keygen --out=FILE [--log-origin=NAME | --witness-name=NAME]\n"
    "      make an Ed25519 key for signing names (or a log, or a witness)\n"
    "  audit --log-key=FILE --key=PUB\n"
    "      monitor the server's transparency log: list every statement the\n"
    "      key signed, and fail on one the publisher's journal lacks\n"
    "  witness --log-key=FILE --witness-key=PEM --witness-name=NAME\n"
    "      cosign the log's checkpoints that extend the newest one cosigned\n"
    "      (C2SP tlog-witness over HTTP: `verity witness --help`)\n"
    "  sign NAME DIGEST --key=FILE [--version=N] [--expires-in=DURATION]\n"
    "                   [--state-dir=DIR] [--out=FILE | --store]\n"
    "      sign \"NAME means DIGEST\"; print, write or store the statement\n"
    "  ls [TREE]             list the stored blobs: digest, size, names;\n"
    "                        or a tree's entries\n"
    "  history NAME          the versions the server keeps of a name\n"
    "  rm DIGEST_OR_NAME [--force]\n"
    "      delete a name and its history, or a blob no name reaches\n"
    "  gc [--dry-run]        delete what no name reaches (admin)\n"
    "  du                    what the store holds, reaches and gc would free\n"
    "                        (admin)\n"
    "  scrub [--wait]        check every stored block now, repair or report\n"
    "                        it (admin)\n"
    "\n"
    "put, get, stat, ls, history, rm, gc, du, scrub, sign, sync and mount\n"
    "also take --server=HOST:PORT (default $VERITY_SERVER, else "
    "127.0.0.1:50051),\n"
    "--tls-ca=FILE (use TLS),\n"
    "--tls-cert=FILE --tls-key=FILE (client certificate), --token-file=FILE\n"
    "(a bearer token; default $VERITY_TOKEN) and --timeout=SECONDS\n"
    "(per RPC attempt; default 60, 0 for none). Broken reads resume where\n"
    "they stopped; an unreachable server is retried a few times first.\n"
    "get, stat, ls, history, sync and mount take --log-key=FILE (default\n"
    "$VERITY_LOG_KEY), --trusted-keys=FILE (default "
    "$VERITY_TRUSTED_KEYS),\n"
    "--trusted-keys-threshold=K, --state-dir=DIR and --fsverity-cert=PEM\n"
    "(default $VERITY_FSVERITY_CERT): `verity get --help`.\n"
    "\n"
    "Exit codes: 0 ok, 1 usage, 2 not found, 3 verification failed, 4 "
    "unavailable,\n"
    "            5 any other error, 6 denied (credentials or permissions).\n";

using RunFn = int (*)(int argc, char** argv, std::FILE* out, std::FILE* err);

struct Command {
  const char* name;
  RunFn run;
};

constexpr Command kCommands[] = {
    {"digest", verity::cli::RunDigestCommand},
    {"put", verity::cli::RunPutCommand},
    {"get", verity::cli::RunGetCommand},
    {"stat", verity::cli::RunStatCommand},
    {"ls", verity::cli::RunLsCommand},
    {"history", verity::cli::RunHistoryCommand},
    {"gc", verity::cli::RunGcCommand},
    {"du", verity::cli::RunDuCommand},
    {"scrub", verity::cli::RunScrubCommand},
    {"rm", verity::cli::RunRmCommand},
    {"keygen", verity::cli::RunKeygenCommand},
    {"audit", verity::cli::RunAuditCommand},
    {"sign", verity::cli::RunSignCommand},
    {"sync", verity::cli::RunSyncCommand},
    {"mount", verity::cli::RunMountCommand},
    {"witness", verity::cli::RunWitnessCommand},
};

}  // namespace

int main(int argc, char** argv) {
  // Debian's Abseil is built without NDEBUG, so absl::Mutex checks every
  // lock against a process-wide lock graph; a program turns that off.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return verity::cli::kExitUsage;
  }
  const char* command = argv[1];
  for (const Command& c : kCommands) {
    if (std::strcmp(command, c.name) == 0) {
      return c.run(argc - 1, argv + 1, stdout, stderr);
    }
  }
  if (std::strcmp(command, "help") == 0 ||
      std::strcmp(command, "--help") == 0) {
    std::fputs(kUsage, stdout);
    return verity::cli::kExitOk;
  }
  std::fprintf(stderr, "verity: unknown command '%s'\n%s", command, kUsage);
  return verity::cli::kExitUsage;
}
