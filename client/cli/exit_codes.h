// The `verity` CLI's documented exit codes, and the one place a Status becomes
// one.

#ifndef VERITYD_CLIENT_CLI_EXIT_CODES_H_
#define VERITYD_CLIENT_CLI_EXIT_CODES_H_

#include "absl/status/status.h"

namespace verity::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 1,               // bad flags or arguments
  kExitNotFound = 2,            // a file or blob does not exist
  kExitVerificationFailed = 3,  // content did not match its digest
  kExitUnavailable = 4,         // the server could not be reached
  kExitOtherError = 5,          // anything else: I/O or internal errors
  kExitDenied = 6,  // no or unknown credentials, too small a role, or a
                    // local permission error
};

inline ExitCode ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kInvalidArgument:
      return kExitUsage;
    case absl::StatusCode::kNotFound:
      return kExitNotFound;
    case absl::StatusCode::kDataLoss:
      return kExitVerificationFailed;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return kExitUnavailable;
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return kExitDenied;
    default:
      return kExitOtherError;
  }
}

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_EXIT_CODES_H_
