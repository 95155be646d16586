// Implements `verity get` on the SDK: a FileSink for -o, a CallbackSink for
// standard output, and a ProgressSink around either on a terminal.

#include "client/cli/get_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "absl/strings/str_cat.h"
#include "client/cli/command_line.h"
#include "client/cli/exit_codes.h"
#include "client/cli/flag_values.h"
#include "client/cli/progress_sink.h"
#include "client/cli/remove_on_signal.h"
#include "client/cli/tree_transfer.h"
#include "lib/base/status_macros.h"
#include "verity/client.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] =
    "Usage: verity get DIGEST_OR_NAME [-o FILE] [--offset=N] [--length=N]\n"
    "       verity get DIGEST_OR_NAME -o DIR [--tree]\n"
    "       verity get --root-hash=HEX (--hash-device=FILE | "
    "--verity-params=...)\n"
    "                  [--priority=rt|be|idle|none] [--parallel=N]\n"
    "                  [--deadline=SECONDS] [--trusted-keys=FILE]\n"
    "                  [--trusted-keys-threshold=K] [--state-dir=DIR]\n"
    "                  [--fsverity-cert=PEM]\n"
    "Without --length, reads to the end. --parallel splits the range over N\n"
    "concurrent streams (1 to 64). --deadline bounds the whole get, retries\n"
    "and resumed streams included (default none; --timeout bounds each\n"
    "attempt). A name is resolved by the server. With --trusted-keys the\n"
    "name's signed statement must pass (see below) and the blob is read by\n"
    "the digest it signs; without, the server's digest is trusted: pass the\n"
    "digest to be protected from a lying server.\n"
    "A tree (stored by `verity put DIR`; a signed name says so, else the\n"
    "server) is written to the folder DIR: every file verified, into a new\n"
    "folder beside DIR that replaces DIR (and all it held) in one rename\n"
    "once all is verified. A file DIR already holds is reused (hard-linked)\n"
    "only if this user owns it, it has no other link and its mode is the\n"
    "tree's (0644, or 0755 for an executable); one with the same content but\n"
    "not that is copied, and the copy verified. --parallel is then the\n"
    "files fetched at a time (default 8). --tree reads the blob as a tree\n"
    "whatever the server says (a name signed as a file is refused); --file\n"
    "writes a tree manifest's own bytes to FILE.\n";

absl::StatusOr<sdk::PriorityClass> ParsePriority(absl::string_view v) {
  if (v == "rt") return sdk::PriorityClass::kRealtime;
  if (v == "be") return sdk::PriorityClass::kBestEffort;
  if (v == "idle") return sdk::PriorityClass::kIdle;
  if (v == "none") return sdk::PriorityClass::kUnset;
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid --priority '", v, "': must be rt, be, idle or none"));
}

absl::Status SetLayout(GetOptions* opts, GetLayout layout) {
  if (opts->layout != GetLayout::kAuto) {
    return absl::InvalidArgumentError("--tree and --file exclude each other");
  }
  opts->layout = layout;
  return absl::OkStatus();
}

std::vector<CommandFlag> GetFlags(GetOptions* opts) {
  sdk::FetchOptions* fetch = &opts->fetch;
  std::vector<CommandFlag> flags = TrustFlags(&opts->trust);
  for (CommandFlag& flag : DmVerityRootFlagList(&opts->dm_verity)) {
    flags.push_back(std::move(flag));
  }
  std::vector<CommandFlag> own = {
      {"output", 'o', true,
       [opts](absl::string_view v) -> absl::Status {
         if (v.empty()) return absl::InvalidArgumentError("-o is empty");
         opts->output = std::string(v);
         return absl::OkStatus();
       }},
      {"offset", 0, true,
       [fetch](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(fetch->offset, ParseUint64Flag("--offset", v));
         return absl::OkStatus();
       }},
      {"length", 0, true,
       [fetch](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(fetch->length, ParseUint64Flag("--length", v));
         return absl::OkStatus();
       }},
      {"priority", 0, true,
       [fetch](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(fetch->priority, ParsePriority(v));
         return absl::OkStatus();
       }},
      {"parallel", 0, true,
       [opts, fetch](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(fetch->parallel_streams, ParseParallelFlag(v));
         opts->parallel_files = fetch->parallel_streams;
         return absl::OkStatus();
       }},
      {"tree", 0, false,
       [opts](absl::string_view) -> absl::Status {
         return SetLayout(opts, GetLayout::kTree);
       }},
      {"file", 0, false,
       [opts](absl::string_view) -> absl::Status {
         return SetLayout(opts, GetLayout::kFile);
       }},
      {"deadline", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(opts->deadline, ParseSecondsFlag("--deadline", v));
         return absl::OkStatus();
       }},
  };
  flags.insert(flags.end(), own.begin(), own.end());
  return flags;
}

// By digest, or by name (the SDK checks the name's statement first).
absl::Status FetchInto(sdk::Client& client, const GetOptions& opts,
                       sdk::Sink& sink) {
  if (!opts.blob.digest.has_value()) {
    return client.FetchName(opts.blob.name, sink, opts.fetch);
  }
  ASSIGN_OR_RETURN(const sdk::Digest digest,
                   sdk::Digest::Parse(opts.blob.ToString()));
  return client.Fetch(digest, sink, opts.fetch);
}

absl::Status Fetch(sdk::Client& client, const GetOptions& opts, sdk::Sink& sink,
                   std::FILE* err) {
  if (!isatty(fileno(err))) return FetchInto(client, opts, sink);
  ProgressSink progress(sink, err);
  return FetchInto(client, opts, progress);
}

// Verified bytes in order to `out`, named `what` in errors.
absl::Status GetToStream(sdk::Client& client, const GetOptions& opts,
                         std::FILE* out, absl::string_view what,
                         std::FILE* err) {
  sdk::CallbackSink sink([out, what](absl::Span<const uint8_t> bytes) {
    if (std::fwrite(bytes.data(), 1, bytes.size(), out) != bytes.size()) {
      return absl::ErrnoToStatus(errno, absl::StrCat("write to ", what));
    }
    return absl::OkStatus();
  });
  RETURN_IF_ERROR(Fetch(client, opts, sink, err));
  if (std::fflush(out) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("write to ", what));
  }
  return absl::OkStatus();
}

// -o naming a device or FIFO (/dev/null, a pipe): written in order like
// standard output, since it cannot be replaced atomically like a file.
bool IsStreamTarget(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) &&
         !S_ISDIR(st.st_mode);
}

absl::Status GetToDevice(sdk::Client& client, const GetOptions& opts,
                         std::FILE* err) {
  std::FILE* out = std::fopen(opts.output.c_str(), "we");
  if (out == nullptr) return absl::ErrnoToStatus(errno, opts.output);
  const absl::Status status = GetToStream(client, opts, out, opts.output, err);
  const bool closed = std::fclose(out) == 0;
  if (!status.ok()) return status;
  if (!closed) return absl::ErrnoToStatus(errno, opts.output);
  return absl::OkStatus();
}

// -o FILE: the blob opts.blob names, verified, renamed into place at the end.
absl::Status GetToFile(sdk::Client& client, const GetOptions& opts,
                       std::FILE* err) {
  if (IsFolder(opts.output)) {
    return absl::FailedPreconditionError(
        absl::StrCat(opts.output, " is a folder, and ", opts.blob.ToString(),
                     " is read as a file: give a file's path"));
  }
  if (IsStreamTarget(opts.output)) return GetToDevice(client, opts, err);
  ASSIGN_OR_RETURN(std::unique_ptr<sdk::FileSink> file,
                   sdk::FileSink::Create(opts.output));
  // A signal arriving before this line leaves the temporary file behind; the
  // window is one system call.
  const RemoveOnSignal remove_on_signal(file->temp_path());
  return Fetch(client, opts, *file, err);
}

// --root-hash: the digest its anchor gives (after its signature, if any, is
// checked).
absl::Status ResolveDmVerityBlob(GetOptions* opts) {
  ASSIGN_OR_RETURN(const sdk::DmVerityRoot root,
                   ResolveDmVerityRoot(opts->dm_verity));
  ASSIGN_OR_RETURN(const sdk::Digest digest, sdk::Digest::OfDmVerity(root));
  ASSIGN_OR_RETURN(opts->blob, client::ParseBlobRef(digest.ToString()));
  return absl::OkStatus();
}

// The tree `blob` (resolved from opts.blob) into the folder -o DIR.
absl::Status GetTreeInto(sdk::Client& client, const GetOptions& opts,
                         const client::ResolvedBlob& blob) {
  if (opts.fetch.offset != 0 || opts.fetch.length.has_value()) {
    return absl::InvalidArgumentError(
        "--offset and --length read a file, not a tree (--file writes the "
        "tree manifest's own bytes)");
  }
  sdk::FetchOptions fetch = opts.fetch;
  fetch.parallel_streams = 1;
  return GetTree(client, blob.digest(), opts.output, fetch,
                 opts.parallel_files);
}

// A tree into a folder, or bytes into a file or to `out`. What the blob is
// comes from what its name's statement signs, else from the server, never
// from its bytes; --tree and --file say it instead, but a name signed as a
// file is never read as a tree.
absl::Status Get(sdk::Client& client, const GetOptions& opts, std::FILE* out,
                 std::FILE* err) {
  if (opts.output.empty()) {
    if (opts.layout == GetLayout::kTree) {
      return absl::InvalidArgumentError("--tree needs -o DIR");
    }
    return GetToStream(client, opts, out, "standard output", err);
  }
  // --file and a range read bytes: nothing to ask first.
  const bool range = opts.fetch.offset != 0 || opts.fetch.length.has_value();
  if (opts.layout == GetLayout::kFile ||
      (opts.layout == GetLayout::kAuto && range)) {
    return GetToFile(client, opts, err);
  }
  ASSIGN_OR_RETURN(const client::ResolvedBlob blob,
                   ResolveBlob(client, opts.blob));
  if (opts.layout == GetLayout::kAuto && !blob.tree) {
    // By the digest resolved: the name is not asked again.
    GetOptions by_digest = opts;
    ASSIGN_OR_RETURN(by_digest.blob,
                     client::ParseBlobRef(blob.digest().ToString()));
    return GetToFile(client, by_digest, err);
  }
  RETURN_IF_ERROR(CheckTree(blob, opts.blob, opts.layout == GetLayout::kTree));
  return GetTreeInto(client, opts, blob);
}

}  // namespace

absl::StatusOr<GetOptions> ParseGetOptions(int argc, char** argv) {
  GetOptions opts;
  opts.trust = DefaultTrustOptions();
  const absl::StatusOr<CommandLine> line =
      ParseCommandLine(argc, argv, GetFlags(&opts));
  if (line.ok() && opts.dm_verity.given()) {
    if (!line->operands.empty()) {
      return absl::InvalidArgumentError(
          "with --root-hash, give no DIGEST_OR_NAME: the root hash and its "
          "parameters name the blob");
    }
  } else {
    ASSIGN_OR_RETURN(opts.blob, OneBlobOperand(line));
  }
  opts.connection = line->connection;
  return opts;
}

int RunGetCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  const std::string usage =
      absl::StrCat(kUsage, kTrustUsage, kDmVerityRootUsage);
  if (AsksForHelp(argc, argv)) return PrintHelp(usage, out);
  absl::StatusOr<GetOptions> opts = ParseGetOptions(argc, argv);
  if (!opts.ok()) return UsageError("get", opts.status(), usage, err);
  if (opts->dm_verity.given()) {
    const absl::Status resolved = ResolveDmVerityBlob(&*opts);
    if (!resolved.ok()) return ReportStatus("get", resolved, err);
  }
  if (opts->deadline > absl::ZeroDuration()) {
    opts->fetch.deadline = absl::Now() + opts->deadline;
  }
  absl::StatusOr<std::unique_ptr<sdk::Client>> client =
      CreateTrustingClient(opts->connection, opts->trust);
  if (!client.ok()) return ReportStatus("get", client.status(), err);
  WarnIfNameUnauthenticated(opts->trust, opts->blob, "get", err);
  const absl::Status status = Get(**client, *opts, out, err);
  return ReportStatus(
      "get",
      status.ok()
          ? status
          : absl::Status(status.code(), absl::StrCat(opts->blob.ToString(),
                                                     ": ", status.message())),
      err);
}

}  // namespace verity::cli
