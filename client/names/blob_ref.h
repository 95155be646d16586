// A blob as the user names it on the command line: by digest or by name.

#ifndef VERITYD_CLIENT_NAMES_BLOB_REF_H_
#define VERITYD_CLIENT_NAMES_BLOB_REF_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/tree/descriptor.h"

namespace verity::client {

// Exactly one of `digest` and `name` is set. Plain value.
struct BlobRef {
  std::optional<ParsedDigest> digest;
  std::string name;

  // The digest in canonical form, or the name; for messages.
  std::string ToString() const;

  // Fills the `blob` oneof of a ReadRequest, StatRequest or DeleteRequest.
  template <typename Request>
  void SetIn(Request* request) const {
    if (digest.has_value()) {
      request->set_digest(ToString());
    } else {
      request->set_name(name);
    }
  }
};

// An argument that parses as a digest ("sha256:<64 hex digits>",
// "sha512:<128>") is one; anything else is a name, so a name of exactly
// that form can only be reached through its digest. INVALID_ARGUMENT if
// `text` is empty.
absl::StatusOr<BlobRef> ParseBlobRef(absl::string_view text);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_NAMES_BLOB_REF_H_
