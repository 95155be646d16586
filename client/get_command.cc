// Implements `verity get` on ReadVerified, writing to stdout or through an
// AtomicFileWriter.

#include "client/get_command.h"

#include <cerrno>
#include <memory>

#include "absl/strings/str_cat.h"
#include "client/atomic_file.h"
#include "client/command_line.h"
#include "client/exit_codes.h"
#include "client/flag_values.h"
#include "lib/status_macros.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] =
    "Usage: verity get DIGEST_OR_NAME [-o FILE] [--offset=N] [--length=N]\n"
    "                  [--priority=rt|be|idle|none]\n"
    "A name is resolved by the server, whose digest is then trusted; pass the\n"
    "digest to be protected from a lying server.\n";

absl::StatusOr<verity::v1::PriorityClass> ParsePriority(absl::string_view v) {
  if (v == "rt") return verity::v1::PRIORITY_CLASS_RT;
  if (v == "be") return verity::v1::PRIORITY_CLASS_BE;
  if (v == "idle") return verity::v1::PRIORITY_CLASS_IDLE;
  if (v == "none") return verity::v1::PRIORITY_CLASS_NONE;
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid --priority '", v, "': must be rt, be, idle or none"));
}

std::vector<CommandFlag> GetFlags(GetOptions* opts) {
  return {
      {"output", 'o', true,
       [opts](absl::string_view v) -> absl::Status {
         if (v.empty()) return absl::InvalidArgumentError("-o is empty");
         opts->output = std::string(v);
         return absl::OkStatus();
       }},
      {"offset", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(opts->read.offset, ParseUint64Flag("--offset", v));
         return absl::OkStatus();
       }},
      {"length", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(opts->read.length, ParseUint64Flag("--length", v));
         return absl::OkStatus();
       }},
      {"priority", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(opts->read.priority, ParsePriority(v));
         return absl::OkStatus();
       }},
  };
}

absl::Status Read(verity::v1::Verity::StubInterface& stub,
                  const GetOptions& opts, const client::ByteSink& sink) {
  grpc::ClientContext context;
  client::ApplyDeadline(opts.connection, &context);
  return client::ReadVerified(stub, &context, opts.blob, opts.read, sink)
      .status();
}

absl::Status GetToStream(verity::v1::Verity::StubInterface& stub,
                         const GetOptions& opts, std::FILE* out) {
  const client::ByteSink sink = [out](absl::Span<const uint8_t> bytes) {
    if (std::fwrite(bytes.data(), 1, bytes.size(), out) != bytes.size()) {
      return absl::ErrnoToStatus(errno, "write to standard output");
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(Read(stub, opts, sink));
  if (std::fflush(out) != 0) {
    return absl::ErrnoToStatus(errno, "write to standard output");
  }
  return absl::OkStatus();
}

absl::Status GetToFile(verity::v1::Verity::StubInterface& stub,
                       const GetOptions& opts) {
  ASSIGN_OR_RETURN(std::unique_ptr<client::AtomicFileWriter> file,
                   client::AtomicFileWriter::Create(opts.output));
  const client::ByteSink sink = [&file](absl::Span<const uint8_t> bytes) {
    return file->Write(bytes);
  };
  RETURN_IF_ERROR(Read(stub, opts, sink));
  return file->Commit();
}

}  // namespace

absl::StatusOr<GetOptions> ParseGetOptions(int argc, char** argv) {
  GetOptions opts;
  const absl::StatusOr<CommandLine> line =
      ParseCommandLine(argc, argv, GetFlags(&opts));
  ASSIGN_OR_RETURN(opts.blob, OneBlobOperand(line));
  opts.connection = line->connection;
  return opts;
}

int RunGetCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  absl::StatusOr<GetOptions> opts = ParseGetOptions(argc, argv);
  if (!opts.ok()) return UsageError("get", opts.status(), kUsage, err);
  absl::StatusOr<std::unique_ptr<verity::v1::Verity::Stub>> stub =
      client::CreateStub(opts->connection);
  if (!stub.ok()) return ReportStatus("get", stub.status(), err);
  const absl::Status status = opts->output.empty()
                                  ? GetToStream(**stub, *opts, out)
                                  : GetToFile(**stub, *opts);
  return ReportStatus(
      "get",
      status.ok()
          ? status
          : absl::Status(status.code(), absl::StrCat(opts->blob.ToString(),
                                                     ": ", status.message())),
      err);
}

}  // namespace verity::cli
