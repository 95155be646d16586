// Implements FakeS3's faults and crash point; the bucket itself is in
// fake_s3_bucket.cc.

#include "server/store/s3/testing/fake_s3.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace verity::server {
namespace {

S3Response Unanswered(const S3Request& request, absl::string_view why) {
  S3Response response;
  response.status = absl::UnavailableError(
      absl::StrCat("S3 ", request.op, " ", request.key, ": ", why));
  return response;
}

S3Response ServerError(const S3Request& request, int http,
                       absl::string_view code) {
  S3Response response;
  response.http_status = http;
  response.error_code = std::string(code);
  response.body = absl::StrCat("<Error><Code>", code, "</Code></Error>");
  response.status = S3HttpStatus(request, http, code, "");
  return response;
}

// What a 2xx GET delivers: the bytes in `into` or in `body`.
absl::Span<uint8_t> Delivered(const S3Request& request, S3Response* response) {
  if (!request.into.empty()) return request.into.first(response->bytes);
  return absl::MakeSpan(reinterpret_cast<uint8_t*>(response->body.data()),
                        response->body.size());
}

void Spoil(const S3Fault& fault, const S3Request& request,
           S3Response* response) {
  switch (fault.kind) {
    case S3FaultKind::kHttp503:
      *response = ServerError(request, 503, "SlowDown");
      return;
    case S3FaultKind::kHttp500:
      *response = ServerError(request, 500, "InternalError");
      return;
    case S3FaultKind::kTimeout:
      *response = Unanswered(request, "Operation timed out");
      return;
    case S3FaultKind::kReset:
      *response = Unanswered(request, "Connection reset by peer");
      return;
    case S3FaultKind::kTruncate:
      if (response->status.ok()) {
        response->bytes /= 2;
        if (request.into.empty()) response->body.resize(response->bytes);
      }
      return;
    case S3FaultKind::kCorrupt: {
      const absl::Span<uint8_t> bytes = Delivered(request, response);
      if (response->status.ok() && !bytes.empty()) {
        bytes[bytes.size() / 2] ^= 0x01;
      }
      return;
    }
  }
}

}  // namespace

void FakeS3::Inject(S3Fault fault) {
  absl::MutexLock lock(&mu_);
  faults_.emplace_back(std::move(fault), 0);
}

void FakeS3::CrashAtRequest(int nth) {
  absl::MutexLock lock(&mu_);
  crash_at_ = requests_ + nth;
}

void FakeS3::Reset() {
  absl::MutexLock lock(&mu_);
  faults_.clear();
  crash_at_ = 0;
  crashed_ = false;
  last_hit_.clear();
}

bool FakeS3::crashed() const {
  absl::MutexLock lock(&mu_);
  return crashed_;
}

int FakeS3::faults_hit() const {
  absl::MutexLock lock(&mu_);
  return faults_hit_;
}

std::string FakeS3::last_hit() const {
  absl::MutexLock lock(&mu_);
  return last_hit_;
}

const S3Fault* FakeS3::Check(const S3Request& request) {
  const S3Fault* hit = nullptr;
  for (auto& [fault, seen] : faults_) {
    if (!fault.op.empty() && fault.op != request.op) continue;
    ++seen;
    if (hit == nullptr && (fault.nth == 0 || seen == fault.nth)) hit = &fault;
  }
  if (hit != nullptr) {
    ++faults_hit_;
    last_hit_ = absl::StrCat(request.op, " ", request.key);
  }
  return hit;
}

FakeS3::FakeS3(const FakeS3Options& options)
    : options_(options), random_(options.seed) {
  if (!options_.answer_gets_later) return;
  for (int i = 0; i < options_.answer_threads; ++i) {
    answerers_.emplace_back([this] { AnswerDue(); });
  }
}

FakeS3::~FakeS3() {
  {
    absl::MutexLock lock(&delay_mu_);
    stopping_ = true;
    wake_.SignalAll();
  }
  for (std::thread& answerer : answerers_) answerer.join();
}

int FakeS3::answered_later() const {
  absl::MutexLock lock(&delay_mu_);
  return answered_later_;
}

void FakeS3::Start(S3Request request, Done done) {
  if (Delay(request, done)) return;
  AnswerNow(std::move(request), std::move(done));
}

bool FakeS3::Delay(S3Request& request, Done& done) {
  if (!options_.answer_gets_later || request.method != "GET" ||
      request.into.empty()) {
    return false;
  }
  absl::MutexLock lock(&delay_mu_);
  // While the fake is going, its answer threads may be gone.
  if (stopping_) return false;
  const int64_t max_us = absl::ToInt64Microseconds(options_.max_get_delay);
  const int64_t delay_us =
      std::uniform_int_distribution<int64_t>(0, max_us)(random_);
  pending_.emplace(absl::Now() + absl::Microseconds(delay_us),
                   Pending{std::move(request), std::move(done)});
  ++answered_later_;
  wake_.SignalAll();
  return true;
}

void FakeS3::AnswerDue() {
  while (std::optional<Pending> next = NextDue()) {
    AnswerNow(std::move(next->request), std::move(next->done));
  }
}

std::optional<FakeS3::Pending> FakeS3::NextDue() {
  absl::MutexLock lock(&delay_mu_);
  while (true) {
    if (pending_.empty()) {
      if (stopping_) return std::nullopt;
      wake_.Wait(&delay_mu_);
      continue;
    }
    const auto first = pending_.begin();
    // Going: what is still queued is answered at once.
    if (!stopping_ && absl::Now() < first->first) {
      wake_.WaitWithDeadline(&delay_mu_, first->first);
      continue;
    }
    Pending next = std::move(first->second);
    pending_.erase(first);
    return next;
  }
}

void FakeS3::AnswerNow(S3Request request, Done done) {
  S3Response response;
  {
    absl::MutexLock lock(&mu_);
    ++requests_;
    if (crashed_ || (crash_at_ > 0 && requests_ >= crash_at_)) {
      crashed_ = true;
      response = Unanswered(request, "the process stopped");
    } else {
      const S3Fault* fault = Check(request);
      const bool lost = fault != nullptr && !fault->applied &&
                        fault->kind != S3FaultKind::kTruncate &&
                        fault->kind != S3FaultKind::kCorrupt;
      if (!lost) response = Handle(request);
      if (fault != nullptr) Spoil(*fault, request, &response);
    }
  }
  response.attempts = 1;
  // Outside the lock: `done` may start the next request.
  std::move(done)(std::move(response));
}

}  // namespace verity::server
