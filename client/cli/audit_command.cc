// Implements `verity audit`: flags, the publisher's journal, one AuditLog
// pass, its listing and a Prometheus text file for a node exporter.

#include "client/cli/audit_command.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/cli/command_line.h"
#include "client/cli/connection.h"
#include "client/cli/exit_codes.h"
#include "client/cli/flag_values.h"
#include "client/names/log_audit.h"
#include "client/sdk/seen_names.h"
#include "client/sdk/signed_journal.h"
#include "lib/base/file_util.h"
#include "lib/base/printable.h"
#include "lib/base/status_macros.h"
#include "lib/trust/ed25519_key.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] =
    "Usage: verity audit --log-key=FILE --key=PUBLIC.pem [--state-dir=DIR]\n"
    "                    [--metrics-file=FILE]\n"
    "A publisher's monitor of the server's transparency log: reads the log\n"
    "from where the last audit stopped to the newest checkpoint, which must\n"
    "be signed by the log key (FILE: its verifier key, as `verity keygen\n"
    "--log-origin` writes FILE.vkey) and consistent with the last one\n"
    "audited, proves every new entry under it, and lists each statement\n"
    "signed by a key of PUBLIC.pem (PEM public keys). A statement whose body\n"
    "the publisher's journal does not hold (signed-<key id>.journal, which\n"
    "`verity put --sign-key` and `verity sign` append to before publishing)\n"
    "is marked UNKNOWN: the key signed something this publisher did not.\n"
    "  --state-dir: the journal's directory, and where the audit keeps its\n"
    "      place (audit/; default $XDG_STATE_HOME/verity)\n"
    "  --metrics-file: write Prometheus metrics there (node exporter's\n"
    "      textfile format, replaced atomically)\n"
    "Exit 0 when every statement is known, 3 when one is not or the log is\n"
    "not consistent with the last audit (evidence kept beside its place).\n";

struct AuditOptions {
  std::string log_key_file;
  std::string key_file;
  std::string state_dir;
  std::string metrics_file;
};

std::string Describe(const client::AuditedStatement& audited) {
  const NameClaim& claim = audited.statement.claim;
  return absl::StrCat(audited.known ? "known   " : "UNKNOWN ", "entry ",
                      audited.index, ": \"", Printable(claim.name),
                      "\" version ", claim.version, " means ",
                      claim.digest.ToString(), " (", NameKindText(claim.kind),
                      "), issued ", Rfc3339(claim.issued), "\n");
}

std::string Metrics(const client::AuditReport& report) {
  return absl::StrCat(
      "# HELP verity_audit_log_size Entries of the transparency log audited.\n"
      "# TYPE verity_audit_log_size gauge\n"
      "verity_audit_log_size ",
      report.to,
      "\n# HELP verity_audit_last_checked_seconds When the audit last "
      "passed the log's newest checkpoint.\n"
      "# TYPE verity_audit_last_checked_seconds gauge\n"
      "verity_audit_last_checked_seconds ",
      absl::ToUnixSeconds(absl::Now()),
      "\n# HELP verity_audit_unknown_statements Statements the key signed "
      "that the publisher's journal lacks, in this audit.\n"
      "# TYPE verity_audit_unknown_statements gauge\n"
      "verity_audit_unknown_statements ",
      report.unknown,
      "\n# HELP verity_audit_statements Statements the key signed, in this "
      "audit.\n# TYPE verity_audit_statements gauge\n"
      "verity_audit_statements ",
      report.statements.size(), "\n");
}

absl::StatusOr<ExitCode> Audit(const CommandLine& line,
                               const AuditOptions& options, std::FILE* out) {
  ASSIGN_OR_RETURN(const std::string log_key,
                   ReadSmallFile(options.log_key_file, 64 << 10));
  ASSIGN_OR_RETURN(const std::string pem,
                   ReadSmallFile(options.key_file, 1 << 20));
  ASSIGN_OR_RETURN(const TrustedKeys publisher, TrustedKeys::FromPem(pem));
  std::string dir = options.state_dir;
  if (dir.empty()) {
    ASSIGN_OR_RETURN(dir, client::DefaultStateDir());
  }
  absl::flat_hash_set<std::string> known;
  for (const Ed25519PublicKey& key : publisher.keys()) {
    ASSIGN_OR_RETURN(absl::flat_hash_set<std::string> journal,
                     client::SignedJournal(dir, KeyIdToHex(key.id())).Load());
    known.merge(journal);
  }
  sdk::ClientOptions client_options = client::ToClientOptions(line.connection);
  client_options.log_key = log_key;
  client_options.state_dir = JoinPath(dir, "audit");
  ASSIGN_OR_RETURN(std::unique_ptr<client::LogTrust> position,
                   client::LogTrust::Create(client_options));
  ASSIGN_OR_RETURN(std::unique_ptr<sdk::Client> client,
                   sdk::Client::Create(client_options));
  ASSIGN_OR_RETURN(const client::AuditReport report,
                   client::AuditLog(*client, *position, publisher, known));
  std::string text;
  for (const client::AuditedStatement& audited : report.statements) {
    absl::StrAppend(&text, Describe(audited));
  }
  absl::StrAppend(&text, "audited entries ", report.from, " to ", report.to,
                  ": ", report.statements.size(), " statements by the key, ",
                  report.unknown, " unknown, ", report.others, " others\n");
  std::fwrite(text.data(), 1, text.size(), out);
  if (!options.metrics_file.empty()) {
    RETURN_IF_ERROR(ReplaceFileDurably(options.metrics_file + ".tmp",
                                       options.metrics_file, Metrics(report)));
  }
  return report.unknown == 0 ? kExitOk : kExitVerificationFailed;
}

std::vector<CommandFlag> Flags(AuditOptions* options) {
  return {
      StringFlag("log-key", &options->log_key_file),
      StringFlag("key", &options->key_file),
      StringFlag("state-dir", &options->state_dir),
      StringFlag("metrics-file", &options->metrics_file),
  };
}

}  // namespace

int RunAuditCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  if (AsksForHelp(argc, argv)) return PrintHelp(kUsage, out);
  AuditOptions options;
  absl::StatusOr<CommandLine> line =
      ParseCommandLine(argc, argv, Flags(&options));
  if (line.ok() && !line->operands.empty()) {
    line = absl::InvalidArgumentError("audit takes no operand");
  }
  if (line.ok() && (options.log_key_file.empty() || options.key_file.empty())) {
    line = absl::InvalidArgumentError("--log-key and --key are required");
  }
  if (!line.ok()) return UsageError("audit", line.status(), kUsage, err);
  absl::StatusOr<ExitCode> code = Audit(*line, options, out);
  if (!code.ok()) return ReportStatus("audit", code.status(), err);
  if (*code != kExitOk) {
    std::fprintf(err,
                 "verity audit: the key signed statements this publisher's "
                 "journal does not hold (UNKNOWN above)\n");
  }
  return *code;
}

}  // namespace verity::cli
