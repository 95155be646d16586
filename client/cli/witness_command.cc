// Implements `verity witness`: flags, the witness, its HTTP server, and a
// wait for a stop signal.

#include "client/cli/witness_command.h"

#include <signal.h>

#include <memory>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/cli/command_line.h"
#include "client/cli/exit_codes.h"
#include "client/cli/flag_values.h"
#include "client/cli/name_signing.h"
#include "client/sdk/seen_names.h"
#include "client/witness/http_server.h"
#include "client/witness/witness.h"
#include "lib/base/file_util.h"
#include "lib/base/printable.h"
#include "lib/base/status_macros.h"
#include "lib/base/stop_signals.h"
#include "lib/tlog/witness_protocol.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] =
    "Usage: verity witness --log-key=FILE --witness-key=PEM\n"
    "                      --witness-name=NAME [--listen=HOST:PORT]\n"
    "                      [--state-dir=DIR]\n"
    "A transparency-log witness (C2SP tlog-witness): serves POST\n"
    "/add-checkpoint over HTTP and cosigns a checkpoint of the log whose\n"
    "verifier key is FILE (as `verity keygen --log-origin` writes FILE.vkey)\n"
    "only if the log's key signed it and a consistency proof shows that it\n"
    "extends the newest one this witness cosigned, kept in DIR (default\n"
    "$XDG_STATE_HOME/verity/witness) and written durably before it answers.\n"
    "A checkpoint that does not extend it is refused (422) and kept there as\n"
    "evidence. Its cosignatures (C2SP tlog-cosignature, cosignature/v1) are\n"
    "by PEM, an Ed25519 key, as NAME: `verity keygen --witness-name=NAME`\n"
    "makes one and its verifier key, which verityd's --witnesses and the\n"
    "clients' --witness-keys list. Listens on HOST:PORT (an address; default\n"
    "127.0.0.1:7380; port 0 picks a free one) until SIGTERM or SIGINT.\n";

struct WitnessOptions {
  std::string log_key_file;
  std::string key_file;
  std::string name;
  std::string listen = "127.0.0.1:7380";
  std::string state_dir;
};

struct Address {
  std::string host;
  uint16_t port = 0;
};

// "HOST:PORT", "[V6]:PORT".
absl::StatusOr<Address> ParseListen(absl::string_view text) {
  const size_t colon = text.rfind(':');
  uint32_t port = 0;
  if (colon == absl::string_view::npos ||
      !absl::SimpleAtoi(text.substr(colon + 1), &port) || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen=", Printable(text), ": not HOST:PORT"));
  }
  absl::string_view host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return Address{std::string(host), static_cast<uint16_t>(port)};
}

client::HttpResponse Route(const client::Witness& witness,
                           const client::HttpRequest& request, std::FILE* err) {
  if (request.path != tlog::kAddCheckpointPath) {
    return {404, "text/plain; charset=utf-8", "not found\n"};
  }
  if (request.method != "POST") {
    return {405, "text/plain; charset=utf-8", "POST only\n"};
  }
  const client::WitnessAnswer answer = witness.AddCheckpoint(request.body);
  if (answer.http_status != 200 && answer.http_status != 409) {
    // A refusal is worth an operator's look: a fork is one.
    PrintLine(err, "verity witness: refused",
              absl::StrCat(answer.http_status, " ", answer.body));
  }
  return {answer.http_status, answer.content_type, answer.body};
}

absl::Status Serve(const WitnessOptions& options, std::FILE* err) {
  ASSIGN_OR_RETURN(const std::string log_key_text,
                   ReadSmallFile(options.log_key_file, 64 << 10));
  ASSIGN_OR_RETURN(
      tlog::NoteKey log_key,
      tlog::NoteKey::Parse(absl::StripTrailingAsciiWhitespace(log_key_text)));
  ASSIGN_OR_RETURN(Ed25519PrivateKey key, ReadPrivateKey(options.key_file));
  ASSIGN_OR_RETURN(const Address address, ParseListen(options.listen));
  std::string dir = options.state_dir;
  if (dir.empty()) {
    ASSIGN_OR_RETURN(dir, client::DefaultStateDir());
    dir = JoinPath(dir, "witness");
  }
  ASSIGN_OR_RETURN(
      std::unique_ptr<client::Witness> witness,
      client::Witness::Create(
          std::move(log_key), options.name,
          std::make_shared<const Ed25519PrivateKey>(std::move(key)), dir));
  // Before the server's thread starts, which inherits the mask.
  const sigset_t signals = BlockStopSignals();
  ASSIGN_OR_RETURN(std::unique_ptr<client::HttpServer> server,
                   client::HttpServer::Start(
                       address.host, address.port, tlog::kMaxAddCheckpointSize,
                       [&witness, err](const client::HttpRequest& request) {
                         return Route(*witness, request, err);
                       }));
  const std::string started = absl::StrCat(
      "verity witness: cosigning as ", witness->verifier_key().ToString(),
      "\nverity witness: listening on ", address.host, ":", server->port(),
      "\n");
  std::fputs(started.c_str(), err);
  std::fflush(err);
  int signal = 0;
  sigwait(&signals, &signal);
  PrintLine(err, "verity witness: stopping on", strsignal(signal));
  return absl::OkStatus();
}

std::vector<CommandFlag> Flags(WitnessOptions* options) {
  return {
      StringFlag("log-key", &options->log_key_file),
      StringFlag("witness-key", &options->key_file),
      StringFlag("witness-name", &options->name),
      StringFlag("listen", &options->listen),
      StringFlag("state-dir", &options->state_dir),
  };
}

}  // namespace

int RunWitnessCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  if (AsksForHelp(argc, argv)) return PrintHelp(kUsage, out);
  WitnessOptions options;
  absl::StatusOr<std::vector<std::string>> operands =
      ParseFlags(argc, argv, Flags(&options));
  absl::Status status = operands.status();
  if (status.ok() && !operands->empty()) {
    status = absl::InvalidArgumentError("witness takes no operand");
  }
  if (status.ok() && (options.log_key_file.empty() ||
                      options.key_file.empty() || options.name.empty())) {
    status = absl::InvalidArgumentError(
        "--log-key, --witness-key and --witness-name are required");
  }
  if (!status.ok()) return UsageError("witness", status, kUsage, err);
  return ReportStatus("witness", Serve(options, err), err);
}

}  // namespace verity::cli
