// Implements FetchRange: an attempt loop around StreamAttempt. Attempts that
// deliver nothing new count towards RetryPolicy::max_attempts; progress
// resets the count and the backoff.

#include "client/sdk/range_fetch.h"

#include <algorithm>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "client/sdk/backoff.h"
#include "lib/base/status_macros.h"

namespace verity::client {
namespace {

class RangeFetcher {
 public:
  RangeFetcher(const FetchPlan& plan, std::shared_ptr<VerifiedTree> tree,
               uint64_t begin, std::optional<uint64_t> end, FetchWriter& writer,
               int part)
      : plan_(plan),
        tree_(std::move(tree)),
        next_(begin),
        end_(end),
        writer_(writer),
        part_(part) {}

  absl::Status Run();

 private:
  AttemptResult Attempt();
  void SetDeadline(grpc::ClientContext* context) const;
  bool Done() const { return end_.has_value() && next_ >= *end_; }

  const FetchPlan& plan_;
  std::shared_ptr<VerifiedTree> tree_;
  uint64_t next_;
  std::optional<uint64_t> end_;
  FetchWriter& writer_;
  const int part_;
};

absl::Status RangeFetcher::Run() {
  absl::BitGen gen;
  Backoff backoff(plan_.retry, gen);
  int failures = 0;
  while (true) {
    const uint64_t before = next_;
    const AttemptResult result = Attempt();
    if (result.again_as_stream) continue;
    // An empty range starts the writer here.
    if (result.status.ok()) return writer_.Start(next_);
    if (!result.from_rpc || !IsRetryable(result.status.code())) {
      return result.status;
    }
    // Every byte arrived verified before the transport failed.
    if (Done()) return absl::OkStatus();
    RETURN_IF_ERROR(plan_.cancellation->status());
    if (next_ > before) {
      failures = 0;
      backoff.Reset();
    }
    if (++failures >= plan_.retry.max_attempts) {
      return absl::Status(
          result.status.code(),
          absl::StrCat(result.status.message(), " (gave up after ", failures,
                       failures == 1 ? " attempt" : " attempts",
                       " without progress)"));
    }
    const absl::Duration delay = backoff.Next();
    if (absl::Now() + delay >= plan_.deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("the deadline leaves no time to retry after: ",
                       result.status.message()));
    }
    if (!plan_.cancellation->SleepFor(delay)) {
      return plan_.cancellation->status();
    }
    FetchCounters::Add(plan_.target.counters->retries, 1);
  }
}

AttemptResult RangeFetcher::Attempt() {
  grpc::ClientContext context;
  SetDeadline(&context);
  if (!plan_.cancellation->Register(&context)) {
    return {plan_.cancellation->status(), false};
  }
  StreamAttempt attempt(plan_.target, tree_, next_, end_);
  AttemptResult result = attempt.Run(&context, writer_, part_);
  plan_.cancellation->Unregister(&context);
  tree_ = attempt.tree();
  next_ = attempt.next();
  // Resumed streams then ask for an explicit length, and a stream that
  // broke after the last byte needs no successor.
  const std::optional<uint64_t> size = attempt.blob_size();
  if (!end_.has_value() && size.has_value() && *size >= next_) end_ = size;
  return result;
}

void RangeFetcher::SetDeadline(grpc::ClientContext* context) const {
  absl::Time deadline = plan_.deadline;
  if (plan_.rpc_timeout > absl::ZeroDuration()) {
    deadline = std::min(deadline, absl::Now() + plan_.rpc_timeout);
  }
  if (deadline != absl::InfiniteFuture()) {
    context->set_deadline(absl::ToChronoTime(deadline));
  }
}

}  // namespace

absl::Status FetchRange(const FetchPlan& plan,
                        std::shared_ptr<VerifiedTree> tree, uint64_t begin,
                        std::optional<uint64_t> end, FetchWriter& writer,
                        int part) {
  return RangeFetcher(plan, std::move(tree), begin, end, writer, part).Run();
}

}  // namespace verity::client
