// Implements S3Client: one thread drives curl's multi interface; requests
// come in through a queue and a curl_multi_wakeup(), retries wait in a timer
// queue, and every easy handle is configured for SigV4 by curl itself.

#include "server/store/s3/s3_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <thread>

#include "absl/base/call_once.h"
#include "absl/base/thread_annotations.h"
#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "server/store/s3/s3_xml.h"

namespace verity::server {
namespace {

// Error bodies and listings are small; anything bigger is not S3 talking.
constexpr size_t kMaxBodyBytes = size_t{16} << 20;

absl::once_flag curl_init_once;

struct Endpoint {
  std::string scheme;  // "http" or "https"
  std::string host;    // with ":port" if one was given
};

absl::StatusOr<Endpoint> ParseEndpoint(absl::string_view url) {
  Endpoint endpoint;
  if (absl::ConsumePrefix(&url, "https://")) {
    endpoint.scheme = "https";
  } else if (absl::ConsumePrefix(&url, "http://")) {
    endpoint.scheme = "http";
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "the S3 endpoint '", url, "' must start with https:// or http://"));
  }
  absl::ConsumeSuffix(&url, "/");
  if (url.empty() || absl::StrContains(url, '/')) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the S3 endpoint must be scheme://host[:port], without a path"));
  }
  endpoint.host = std::string(url);
  return endpoint;
}

// "S3 GetObject KEY", for errors.
std::string Describe(const S3Request& request) {
  return absl::StrCat("S3 ", request.op, " ",
                      request.key.empty() ? "(bucket)" : request.key);
}

}  // namespace

absl::Status S3HttpStatus(const S3Request& request, int http,
                          absl::string_view code, absl::string_view message) {
  const std::string what =
      absl::StrCat(Describe(request), ": HTTP ", http, code.empty() ? "" : " ",
                   code, message.empty() ? "" : ": ", message);
  if (http == 404) return absl::NotFoundError(what);
  if (http == 401 || http == 403) return absl::PermissionDeniedError(what);
  if (http == 409 || http == 412) return absl::FailedPreconditionError(what);
  if (http == 416) return absl::OutOfRangeError(what);
  if (http == 429 || http >= 500) return absl::UnavailableError(what);
  return absl::InvalidArgumentError(what);
}

namespace {

bool Retryable(const S3Request& request, CURLcode code, int http) {
  if (!request.idempotent) return false;
  return code != CURLE_OK || http == 429 || http >= 500;
}

}  // namespace

std::string S3Escape(absl::string_view text, bool keep_slash) {
  std::string out;
  for (const char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' ||
        c == '~' || (keep_slash && c == '/')) {
      out.push_back(c);
    } else {
      static constexpr char kHex[] = "0123456789ABCDEF";
      const auto byte = static_cast<unsigned char>(c);
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xf]);
    }
  }
  return out;
}

std::string S3ObjectUrl(const S3ClientOptions& options, absl::string_view key) {
  const absl::StatusOr<Endpoint> endpoint = ParseEndpoint(options.endpoint);
  if (!endpoint.ok()) return "";
  const std::string path = S3Escape(key, /*keep_slash=*/true);
  if (options.path_style) {
    return absl::StrCat(endpoint->scheme, "://", endpoint->host, "/",
                        S3Escape(options.bucket, false), "/", path);
  }
  return absl::StrCat(endpoint->scheme, "://", options.bucket, ".",
                      endpoint->host, "/", path);
}

// One request and its attempts. Owned by the loop while in flight.
struct Transfer {
  S3Request request;
  S3Client::Done done;
  S3Response response;
  std::string url;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  size_t sent = 0;          // body bytes given to curl in this attempt
  bool overflowed = false;  // more body arrived than `into` holds
  bool answered = false;    // S3Client::Answer(): deliver `response` only
  absl::Time attempt_start;
  char error[CURL_ERROR_SIZE] = {};

  ~Transfer() {
    if (easy != nullptr) curl_easy_cleanup(easy);
    if (headers != nullptr) curl_slist_free_all(headers);
  }
};

// Shared by the client and its thread, so that the last owner of a client may
// let go on that thread (inside an answer): Stop() then leaves the thread to
// end on its own, and the loop goes with it.
class S3Client::Loop : public std::enable_shared_from_this<Loop> {
 public:
  explicit Loop(const S3ClientOptions& options) : options_(options) {}
  ~Loop();

  // Starts the thread. Once, on a loop owned by a shared_ptr.
  absl::Status Init();
  // Cancels what is in flight and waits for the thread to end, unless it
  // runs on it.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);
  void Submit(std::unique_ptr<Transfer> transfer) ABSL_LOCKS_EXCLUDED(mu_);
  const S3ClientOptions& options() const { return options_; }

 private:
  void Run();
  // Loop thread only, from here on.
  void TakeIncoming() ABSL_LOCKS_EXCLUDED(mu_);
  void StartAttempt(std::unique_ptr<Transfer> transfer);
  // Sets `transfer`'s easy handle up for its request: SetHeaders, its URL,
  // SetConnection, SetMethod.
  absl::Status Configure(Transfer* transfer);
  void SetHeaders(Transfer* transfer);
  // Signing, TLS, timeouts and the callbacks.
  void SetConnection(Transfer* transfer);
  static absl::Status SetMethod(Transfer* transfer);
  void OnAttemptDone(Transfer* transfer, CURLcode code);
  void Complete(std::unique_ptr<Transfer> transfer);
  void CancelEverything();
  absl::Duration Backoff(int attempt);

  static size_t OnBody(char* data, size_t size, size_t count, void* transfer);
  static size_t OnHeader(char* data, size_t size, size_t count, void* transfer);
  static size_t OnUpload(char* data, size_t size, size_t count, void* transfer);

  const S3ClientOptions options_;
  Endpoint endpoint_;
  CURLM* multi_ = nullptr;
  std::thread thread_;

  absl::Mutex mu_;
  std::deque<std::unique_ptr<Transfer>> incoming_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  // Loop thread only: transfers curl runs (by easy handle) and those waiting
  // to be retried (by when).
  std::map<CURL*, std::unique_ptr<Transfer>> running_;
  std::multimap<absl::Time, std::unique_ptr<Transfer>> retries_;
  absl::BitGen jitter_;
};

absl::Status S3Client::Loop::Init() {
  absl::call_once(curl_init_once,
                  [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  absl::StatusOr<Endpoint> endpoint = ParseEndpoint(options_.endpoint);
  if (!endpoint.ok()) return endpoint.status();
  endpoint_ = *std::move(endpoint);
  multi_ = curl_multi_init();
  if (multi_ == nullptr) return absl::InternalError("curl_multi_init failed");
  thread_ = std::thread([self = shared_from_this()] { self->Run(); });
  return absl::OkStatus();
}

void S3Client::Loop::Stop() {
  if (!thread_.joinable()) return;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  curl_multi_wakeup(multi_);
  if (thread_.get_id() == std::this_thread::get_id()) {
    thread_.detach();
  } else {
    thread_.join();
  }
}

S3Client::Loop::~Loop() {
  if (multi_ != nullptr) curl_multi_cleanup(multi_);
}

void S3Client::Loop::Submit(std::unique_ptr<Transfer> transfer) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      incoming_.push_back(std::move(transfer));
      transfer = nullptr;
    }
  }
  if (transfer != nullptr) {
    transfer->response.status =
        absl::CancelledError("the S3 client is shutting down");
    std::move(transfer->done)(std::move(transfer->response));
    return;
  }
  curl_multi_wakeup(multi_);
}

void S3Client::Loop::Run() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) break;
    }
    TakeIncoming();
    const absl::Time now = absl::Now();
    while (!retries_.empty() && retries_.begin()->first <= now) {
      std::unique_ptr<Transfer> transfer = std::move(retries_.begin()->second);
      retries_.erase(retries_.begin());
      StartAttempt(std::move(transfer));
    }
    int active = 0;
    curl_multi_perform(multi_, &active);
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      auto it = running_.find(msg->easy_handle);
      if (it == running_.end()) continue;
      std::unique_ptr<Transfer> transfer = std::move(it->second);
      running_.erase(it);
      curl_multi_remove_handle(multi_, transfer->easy);
      const CURLcode code = msg->data.result;
      Transfer* raw = transfer.get();
      // OnAttemptDone either requeues the transfer or completes it.
      transfer.release();
      OnAttemptDone(raw, code);
    }
    int wait_ms = 1000;
    if (!retries_.empty()) {
      wait_ms = std::clamp<int>(
          absl::ToInt64Milliseconds(retries_.begin()->first - absl::Now()), 0,
          wait_ms);
    }
    curl_multi_poll(multi_, nullptr, 0, wait_ms, nullptr);
  }
  CancelEverything();
}

void S3Client::Loop::TakeIncoming() {
  std::deque<std::unique_ptr<Transfer>> incoming;
  {
    absl::MutexLock lock(&mu_);
    incoming.swap(incoming_);
  }
  for (std::unique_ptr<Transfer>& transfer : incoming) {
    if (transfer->answered) {
      Complete(std::move(transfer));
    } else {
      StartAttempt(std::move(transfer));
    }
  }
}

void S3Client::Loop::StartAttempt(std::unique_ptr<Transfer> transfer) {
  ++transfer->response.attempts;
  transfer->response.bytes = 0;
  transfer->response.body.clear();
  transfer->response.etag.clear();
  transfer->sent = 0;
  transfer->overflowed = false;
  transfer->attempt_start = absl::Now();
  absl::Status configured = Configure(transfer.get());
  if (!configured.ok()) {
    transfer->response.status = configured;
    Complete(std::move(transfer));
    return;
  }
  CURL* easy = transfer->easy;
  if (curl_multi_add_handle(multi_, easy) != CURLM_OK) {
    transfer->response.status =
        absl::InternalError("curl_multi_add_handle failed");
    Complete(std::move(transfer));
    return;
  }
  running_.emplace(easy, std::move(transfer));
}

absl::Status S3Client::Loop::Configure(Transfer* t) {
  if (t->easy == nullptr)
    t->easy = curl_easy_init();
  else
    curl_easy_reset(t->easy);
  if (t->easy == nullptr) return absl::InternalError("curl_easy_init failed");
  SetHeaders(t);
  std::vector<std::pair<std::string, std::string>> query = t->request.query;
  std::sort(query.begin(), query.end());
  std::vector<std::string> parts;
  for (const auto& [name, value] : query) {
    parts.push_back(
        absl::StrCat(S3Escape(name, false), "=", S3Escape(value, false)));
  }
  t->url = S3ObjectUrl(options_, t->request.key);
  if (!parts.empty()) absl::StrAppend(&t->url, "?", absl::StrJoin(parts, "&"));
  SetConnection(t);
  return SetMethod(t);
}

void S3Client::Loop::SetHeaders(Transfer* t) {
  if (t->headers != nullptr) return;  // kept across attempts
  // The payload is not hashed into the signature: verityd verifies every
  // byte it reads, and TLS protects it in transit.
  t->headers =
      curl_slist_append(t->headers, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
  if (!options_.credentials.session_token.empty()) {
    t->headers = curl_slist_append(
        t->headers, absl::StrCat("x-amz-security-token: ",
                                 options_.credentials.session_token)
                        .c_str());
  }
  for (const std::string& header : t->request.headers) {
    t->headers = curl_slist_append(t->headers, header.c_str());
  }
}

void S3Client::Loop::SetConnection(Transfer* t) {
  CURL* e = t->easy;
  curl_easy_setopt(e, CURLOPT_URL, t->url.c_str());
  curl_easy_setopt(e, CURLOPT_PRIVATE, t);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
  t->error[0] = '\0';
  const std::string sigv4 = absl::StrCat("aws:amz:", options_.region, ":s3");
  curl_easy_setopt(e, CURLOPT_AWS_SIGV4, sigv4.c_str());
  curl_easy_setopt(e, CURLOPT_USERNAME,
                   options_.credentials.access_key_id.c_str());
  curl_easy_setopt(e, CURLOPT_PASSWORD,
                   options_.credentials.secret_access_key.c_str());
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
  // curl sends "Expect: 100-continue" before a large body; the body follows
  // at once instead of a round trip later. (An empty "Expect:" header would
  // be signed, but not sent: SignatureDoesNotMatch.)
  curl_easy_setopt(e, CURLOPT_EXPECT_100_TIMEOUT_MS, 0L);
  if (!options_.ca_file.empty()) {
    curl_easy_setopt(e, CURLOPT_CAINFO, options_.ca_file.c_str());
  }
  curl_easy_setopt(
      e, CURLOPT_CONNECTTIMEOUT_MS,
      static_cast<long>(absl::ToInt64Milliseconds(options_.connect_timeout)));
  curl_easy_setopt(
      e, CURLOPT_TIMEOUT_MS,
      static_cast<long>(absl::ToInt64Milliseconds(options_.attempt_timeout)));
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME,
                   static_cast<long>(std::max<int64_t>(
                       1, absl::ToInt64Seconds(options_.stall_timeout))));
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Loop::OnBody);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Loop::OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, t);
}

absl::Status S3Client::Loop::SetMethod(Transfer* t) {
  CURL* e = t->easy;
  const std::string& method = t->request.method;
  if (method == "HEAD") {
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  } else if (method == "PUT") {
    curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(e, CURLOPT_READFUNCTION, &Loop::OnUpload);
    curl_easy_setopt(e, CURLOPT_READDATA, t);
    curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE,
                     static_cast<curl_off_t>(t->request.body.size()));
  } else if (method == "POST") {
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->request.body.data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(t->request.body.size()));
  } else if (method == "DELETE") {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
  } else if (method != "GET") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown HTTP method ", method));
  }
  return absl::OkStatus();
}

size_t S3Client::Loop::OnBody(char* data, size_t size, size_t count,
                              void* transfer) {
  auto* t = static_cast<Transfer*>(transfer);
  const size_t n = size * count;
  S3Response& r = t->response;
  if (!t->request.into.empty()) {
    // An error answer's body is small and goes to `body`.
    long http = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &http);
    if (http >= 200 && http < 300) {
      if (n > t->request.into.size() - r.bytes) {
        t->overflowed = true;
        return 0;  // aborts the transfer
      }
      std::memcpy(t->request.into.data() + r.bytes, data, n);
      r.bytes += n;
      return n;
    }
  }
  if (r.body.size() + n > kMaxBodyBytes) return 0;
  r.body.append(data, n);
  r.bytes += n;
  return n;
}

size_t S3Client::Loop::OnHeader(char* data, size_t size, size_t count,
                                void* transfer) {
  auto* t = static_cast<Transfer*>(transfer);
  absl::string_view line(data, size * count);
  if (absl::StartsWithIgnoreCase(line, "etag:")) {
    line.remove_prefix(5);
    t->response.etag = std::string(absl::StripAsciiWhitespace(line));
  }
  return size * count;
}

size_t S3Client::Loop::OnUpload(char* data, size_t size, size_t count,
                                void* transfer) {
  auto* t = static_cast<Transfer*>(transfer);
  const std::string& body = t->request.body;
  const size_t n = std::min(size * count, body.size() - t->sent);
  std::memcpy(data, body.data() + t->sent, n);
  t->sent += n;
  return n;
}

void S3Client::Loop::OnAttemptDone(Transfer* raw, CURLcode code) {
  std::unique_ptr<Transfer> t(raw);
  long http = 0;
  curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &http);
  S3Response& r = t->response;
  r.http_status = static_cast<int>(http);
  if (options_.observe) {
    options_.observe(t->request.op, code == CURLE_OK ? r.http_status : 0,
                     absl::Now() - t->attempt_start, r.bytes);
  }
  if (t->overflowed) {
    // Not a network failure: S3 sent more than the range asked for.
    r.status = absl::DataLossError(
        absl::StrCat(Describe(t->request), ": more than ",
                     t->request.into.size(), " bytes came back"));
    Complete(std::move(t));
    return;
  }
  if (code != CURLE_OK) {
    r.status = absl::UnavailableError(absl::StrCat(
        Describe(t->request), ": ",
        t->error[0] != '\0' ? t->error : curl_easy_strerror(code)));
  } else if (http >= 200 && http < 300) {
    r.status = absl::OkStatus();
  } else {
    const S3Error error = ParseS3Error(r.body);
    r.error_code = error.code;
    r.status =
        S3HttpStatus(t->request, r.http_status, error.code, error.message);
  }
  if (!r.status.ok() && Retryable(t->request, code, r.http_status) &&
      r.attempts < options_.max_attempts) {
    retries_.emplace(absl::Now() + Backoff(r.attempts), std::move(t));
    return;
  }
  if (!r.status.ok() && r.attempts > 1) {
    r.status = absl::Status(
        r.status.code(),
        absl::StrCat(r.status.message(), " (after ", r.attempts, " attempts)"));
  }
  Complete(std::move(t));
}

absl::Duration S3Client::Loop::Backoff(int attempt) {
  absl::Duration delay = options_.backoff;
  for (int i = 1; i < attempt && delay < options_.max_backoff; ++i) delay *= 2;
  delay = std::min(delay, options_.max_backoff);
  // Full jitter: replicas retrying together spread out.
  return delay * absl::Uniform(jitter_, 0.5, 1.0);
}

void S3Client::Loop::Complete(std::unique_ptr<Transfer> t) {
  S3Client::Done done = std::move(t->done);
  S3Response response = std::move(t->response);
  t.reset();  // frees the easy handle before the caller runs
  std::move(done)(std::move(response));
}

void S3Client::Loop::CancelEverything() {
  std::vector<std::unique_ptr<Transfer>> all;
  for (auto& [easy, transfer] : running_) {
    curl_multi_remove_handle(multi_, easy);
    all.push_back(std::move(transfer));
  }
  running_.clear();
  for (auto& [when, transfer] : retries_) all.push_back(std::move(transfer));
  retries_.clear();
  {
    absl::MutexLock lock(&mu_);
    for (auto& transfer : incoming_) all.push_back(std::move(transfer));
    incoming_.clear();
  }
  for (std::unique_ptr<Transfer>& transfer : all) {
    transfer->response.status =
        absl::CancelledError("the S3 client is shutting down");
    Complete(std::move(transfer));
  }
}

absl::StatusOr<std::unique_ptr<S3Client>> S3Client::Create(
    const S3ClientOptions& options) {
  if (options.bucket.empty()) {
    return absl::InvalidArgumentError("no S3 bucket given");
  }
  if (options.credentials.access_key_id.empty() ||
      options.credentials.secret_access_key.empty()) {
    return absl::InvalidArgumentError(
        "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
        "or a credentials file");
  }
  auto loop = std::make_shared<Loop>(options);
  if (absl::Status init = loop->Init(); !init.ok()) return init;
  return std::unique_ptr<S3Client>(
      new S3Client(options, std::move(loop), nullptr));
}

std::unique_ptr<S3Client> S3Client::WithTransport(
    const S3ClientOptions& options, std::shared_ptr<S3Transport> transport) {
  return std::unique_ptr<S3Client>(
      new S3Client(options, nullptr, std::move(transport)));
}

S3Client::S3Client(const S3ClientOptions& options, std::shared_ptr<Loop> loop,
                   std::shared_ptr<S3Transport> transport)
    : options_(options),
      loop_(std::move(loop)),
      transport_(std::move(transport)),
      deliveries_(transport_ == nullptr
                      ? nullptr
                      : std::make_shared<Executor>(
                            CompletionThreadOptions("s3-answers"))) {}

S3Client::~S3Client() {
  if (loop_ != nullptr) loop_->Stop();
}

const S3ClientOptions& S3Client::options() const { return options_; }

namespace {

// Hands `response` to `done` on a thread of `deliveries` (unbounded: never
// refused).
void Deliver(Executor& deliveries, S3Response response, S3Client::Done done) {
  const absl::Status queued = deliveries.Submit(
      [done = std::move(done), response = std::move(response)]() mutable {
        std::move(done)(std::move(response));
      });
  (void)queued;
}

}  // namespace

void S3Client::Start(S3Request request, Done done) {
  if (transport_ != nullptr) {
    // A transport may answer inside Start(): its answer is delivered on the
    // client's own thread, as curl's are. The executor rides along, so a
    // transport that answers after the client is gone still has it.
    transport_->Start(
        std::move(request), [deliveries = deliveries_, done = std::move(done)](
                                S3Response response) mutable {
          Deliver(*deliveries, std::move(response), std::move(done));
        });
    return;
  }
  auto transfer = std::make_unique<Transfer>();
  transfer->request = std::move(request);
  transfer->done = std::move(done);
  loop_->Submit(std::move(transfer));
}

void S3Client::Answer(S3Response response, Done done) {
  if (transport_ != nullptr) {
    Deliver(*deliveries_, std::move(response), std::move(done));
    return;
  }
  auto transfer = std::make_unique<Transfer>();
  transfer->answered = true;
  transfer->response = std::move(response);
  transfer->done = std::move(done);
  loop_->Submit(std::move(transfer));
}

S3Response S3Client::Call(S3Request request) {
  absl::Notification finished;
  S3Response result;
  Start(std::move(request), [&](S3Response response) {
    result = std::move(response);
    finished.Notify();
  });
  finished.WaitForNotification();
  return result;
}

std::string S3PutCondition(const std::optional<std::string>& etag) {
  if (!etag.has_value()) return "If-None-Match: *";
  return absl::StrCat("If-Match: ",
                      absl::StripSuffix(absl::StripPrefix(*etag, "\""), "\""));
}

}  // namespace verity::server
