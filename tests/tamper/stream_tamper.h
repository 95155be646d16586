// Test-only: what the tamper proxy asks upstream for, and how it turns the
// honest reply into the stream the client gets.

#ifndef VERITYD_TESTS_TAMPER_STREAM_TAMPER_H_
#define VERITYD_TESTS_TAMPER_STREAM_TAMPER_H_

#include "absl/status/statusor.h"
#include "proto/verity/v1/verity.pb.h"
#include "tests/tamper/stream_layout.h"
#include "tests/tamper/tamper.h"

namespace verity::tamper {

// The request to forward for the client's `request`: the same, or one that
// reads more (or another blob) when `tamper` needs material from it.
v1::ReadRequest UpstreamRequest(const Tamper& tamper,
                                const v1::ReadRequest& request);

// Rewrites `stream`, upstream's complete reply to UpstreamRequest(tamper,
// request), into what the client gets. FAILED_PRECONDITION if the reply is
// not a Read stream (no descriptor).
absl::StatusOr<TamperOutcome> ApplyTamper(const Tamper& tamper,
                                          const v1::ReadRequest& request,
                                          ReadStream* stream);

}  // namespace verity::tamper

#endif  // VERITYD_TESTS_TAMPER_STREAM_TAMPER_H_
