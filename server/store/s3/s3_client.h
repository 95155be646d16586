// An S3 client on libcurl: requests signed with AWS Signature V4 by curl
// (CURLOPT_AWS_SIGV4), run by one thread on curl's multi interface so that
// none of the caller's threads waits on the network, with bounded retries of
// idempotent requests and timeouts everywhere.

#ifndef VERITYD_SERVER_STORE_S3_S3_CLIENT_H_
#define VERITYD_SERVER_STORE_S3_S3_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "lib/base/executor.h"

namespace verity::server {

// Where the bucket is and who we are. Never logged: the secret parts are
// given to curl and nowhere else.
struct S3Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty unless temporary credentials
};

struct S3ClientOptions {
  // "https://s3.REGION.amazonaws.com", "http://127.0.0.1:7480", ...
  std::string endpoint;
  std::string region = "us-east-1";
  std::string bucket;
  // Path-style (ENDPOINT/BUCKET/KEY) or virtual-host (BUCKET.HOST/KEY) URLs.
  bool path_style = true;
  S3Credentials credentials;
  // A PEM CA bundle for TLS to the endpoint; empty: the system's.
  std::string ca_file;
  absl::Duration connect_timeout = absl::Seconds(5);
  // A transfer slower than 1 KiB/s for this long is abandoned (and retried
  // if it may be).
  absl::Duration stall_timeout = absl::Seconds(15);
  // Every attempt ends by then.
  absl::Duration attempt_timeout = absl::Seconds(120);
  // Attempts of an idempotent request, spaced by exponential backoff with
  // jitter from `backoff` up to `max_backoff`.
  int max_attempts = 4;
  absl::Duration backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(2);
  // Called on the client's thread once per finished attempt, for metrics:
  // the request's operation name, the HTTP status (0 if none arrived), the
  // attempt's duration and the response bytes received.
  std::function<void(absl::string_view op, int http_status,
                     absl::Duration latency, uint64_t bytes)>
      observe;
};

// One request. Plain value.
struct S3Request {
  // A short fixed name for logs and metrics: "GetObject", "UploadPart", ...
  std::string op;
  std::string method = "GET";  // GET, PUT, POST, HEAD or DELETE
  std::string key;             // the object, without the bucket; "" for it
  // Sorted and percent-encoded when sent; a value of "" sends "name=".
  std::vector<std::pair<std::string, std::string>> query;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // sent with PUT and POST
  // If not empty, a GET writes the body here (which must stay valid until
  // the request is done) instead of S3Response::body; more is an error.
  absl::Span<uint8_t> into;
  // Retried on a transport error, 429 or 5xx if true.
  bool idempotent = true;
};

// Plain value.
struct S3Response {
  // OK for a 2xx answer; else NOT_FOUND (404), PERMISSION_DENIED (401, 403),
  // FAILED_PRECONDITION (409, 412), OUT_OF_RANGE (416), INVALID_ARGUMENT
  // (other 4xx), UNAVAILABLE (5xx, 429 or no answer, after the retries),
  // DATA_LOSS (a GET's body larger than `into`), naming the operation, the
  // key and S3's error code.
  absl::Status status;
  int http_status = 0;
  std::string error_code;  // S3's <Code>, e.g. "NoSuchKey"
  std::string body;        // unless the request had `into`
  uint64_t bytes = 0;      // body bytes received, into `into` or `body`
  std::string etag;
  int attempts = 0;
};

// How a test's S3Client reaches S3 instead of curl: an in-memory bucket, or
// one that fails chosen requests (FakeS3). Thread-safe.
// Start() calls `done` once, before or after it returns, with the final
// response: the curl transport's retries are not run over it.
class S3Transport {
 public:
  virtual ~S3Transport() = default;
  virtual void Start(S3Request request,
                     absl::AnyInvocable<void(S3Response) &&> done) = 0;
};

// Thread-safe. Owns its thread; destroying the client completes every
// request in flight with CANCELLED, and may happen on that thread (the last
// owner of a shared client letting go inside `done`). Calls `done` on that
// thread, never inside Start(): keep it short and never call Call() from it.
// (Start() on a client being destroyed is a caller's bug.)
class S3Client {
 public:
  using Done = absl::AnyInvocable<void(S3Response) &&>;

  // INVALID_ARGUMENT for a bad endpoint or missing bucket or credentials.
  // Sends nothing: see Probe().
  static absl::StatusOr<std::unique_ptr<S3Client>> Create(
      const S3ClientOptions& options);
  // For tests: every request goes to `transport`; its answers, even those
  // it gives inside S3Transport::Start(), reach `done` on a thread of the
  // client's, as curl's do.
  static std::unique_ptr<S3Client> WithTransport(
      const S3ClientOptions& options, std::shared_ptr<S3Transport> transport);

  S3Client(const S3Client&) = delete;
  S3Client& operator=(const S3Client&) = delete;
  ~S3Client();

  // Starts `request`; `done` runs once when it is done, retried or not.
  void Start(S3Request request, Done done);

  // Hands `response` to `done` as Start() hands an answer, without sending
  // anything: for a request refused before it was sent.
  void Answer(S3Response response, Done done);

  // Start() and wait. Not on the client's own thread.
  S3Response Call(S3Request request);

  const S3ClientOptions& options() const;

 private:
  class Loop;
  S3Client(const S3ClientOptions& options, std::shared_ptr<Loop> loop,
           std::shared_ptr<S3Transport> transport);

  const S3ClientOptions options_;
  std::shared_ptr<Loop> loop_;                    // curl, unless
  const std::shared_ptr<S3Transport> transport_;  // a test's
  // Delivers the transport's answers later: shared with the answers in
  // flight.
  const std::shared_ptr<Executor> deliveries_;
};

// The status of an answer that is not 2xx, as S3Response::status describes
// it (for transports).
absl::Status S3HttpStatus(const S3Request& request, int http_status,
                          absl::string_view code, absl::string_view message);

// The header of a PUT that replaces only the object whose ETag is `etag`
// (nullopt: that writes only where there is none), a compare-and-set. The
// ETag goes without its quotes: radosgw compares If-Match with the bare tag
// (a quoted one never matches), and AWS S3 and MinIO accept either.
std::string S3PutCondition(const std::optional<std::string>& etag);

// The URL of `key` in the bucket, as the client sends it (for tests and logs).
std::string S3ObjectUrl(const S3ClientOptions& options, absl::string_view key);

// Percent-encodes `text` as SigV4 wants (RFC 3986 unreserved characters stay;
// '/' too when `keep_slash`).
std::string S3Escape(absl::string_view text, bool keep_slash);

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_S3_S3_CLIENT_H_
