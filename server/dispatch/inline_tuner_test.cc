// InlineTuner: the limit follows the costs it is fed, one step per
// `confirmations` periods, within bounds, and leaves fixed classes and IDLE.

#include "server/dispatch/inline_tuner.h"

#include <vector>

#include "gtest/gtest.h"

namespace verity::server {
namespace {

constexpr PriorityClass kRt = PriorityClass::kRt;
constexpr PriorityClass kBe = PriorityClass::kBe;

class InlineTunerTest : public testing::Test {
 protected:
  InlineTunerTest() { options_.prior = InlineLimits::Uniform(8192); }

  void Start() {
    tuner_ = std::make_unique<InlineTuner>(
        options_, [this](const InlineLimitChange& change) {
          changes_.push_back(change);
        });
    now_ = absl::Now();
  }

  // One period in which every verification costs `hash_4k` per 4 KiB and
  // `cls`'s pool jobs wait `wait`; `declined` of 40 inline choices were
  // declined for the budget.
  void Period(PriorityClass cls, absl::Duration hash_4k, absl::Duration wait,
              int declined = 0) {
    for (int i = 0; i < 40; ++i) {
      tuner_->ObserveVerify(4096, hash_4k);
      tuner_->ObserveQueueWait(cls, wait);
      tuner_->ObserveInlineChoice(cls, i < declined);
    }
    now_ += options_.period;
    tuner_->Adjust(now_);
  }

  uint64_t Limit(PriorityClass cls) const { return tuner_->limits().For(cls); }

  InlineTunerOptions options_;
  std::unique_ptr<InlineTuner> tuner_;
  std::vector<InlineLimitChange> changes_;
  absl::Time now_;
};

TEST_F(InlineTunerTest, StartsFromThePriorAndKeepsIdleAtZero) {
  Start();
  EXPECT_EQ(Limit(kRt), 8192u);
  EXPECT_EQ(Limit(PriorityClass::kIdle), 0u);
}

TEST_F(InlineTunerTest, CheapHashingAndSlowHandoffsRaiseTheLimitStepByStep) {
  Start();
  // 1 us per 4 KiB against a 100 us wait: the rule says 64 KiB (the bound).
  for (int period = 1; period <= 2; ++period) {
    Period(kRt, absl::Microseconds(1), absl::Microseconds(100));
    EXPECT_EQ(Limit(kRt), 8192u) << "no change before 3 periods agree";
  }
  Period(kRt, absl::Microseconds(1), absl::Microseconds(100));
  EXPECT_EQ(Limit(kRt), 16384u);
  for (int period = 0; period < 30; ++period) {
    Period(kRt, absl::Microseconds(1), absl::Microseconds(100));
  }
  EXPECT_EQ(Limit(kRt), options_.max_bytes);
  ASSERT_FALSE(changes_.empty());
  EXPECT_EQ(changes_.front().from, 8192u);
  EXPECT_EQ(changes_.front().to, 16384u);
  EXPECT_NE(changes_.front().why.find("queue wait"), std::string::npos);
  // The other classes saw no traffic and stay where they were.
  EXPECT_EQ(Limit(kBe), 8192u);
}

TEST_F(InlineTunerTest, DearHashingAndFastHandoffsLowerItToTheFloor) {
  Start();
  for (int period = 0; period < 10; ++period) {
    Period(kBe, absl::Microseconds(20), absl::Microseconds(2));
  }
  EXPECT_EQ(Limit(kBe), options_.min_bytes);
  EXPECT_EQ(Limit(kRt), 8192u);
}

TEST_F(InlineTunerTest, BudgetPressureHalvesTheLimit) {
  Start();
  // Costs alone would keep 8 KiB (3 us per 4 KiB, 6 us wait), but a quarter
  // of the inline-eligible requests found the budget spent.
  for (int period = 0; period < 3; ++period) {
    Period(kRt, absl::Microseconds(3), absl::Microseconds(6), 10);
  }
  EXPECT_EQ(Limit(kRt), 4096u);
}

TEST_F(InlineTunerTest, AlternatingEvidenceChangesNothing) {
  options_.weight = 1;  // no smoothing: each period alone sets the target
  Start();
  for (int period = 0; period < 12; ++period) {
    const bool up = period % 2 == 0;
    Period(kRt, absl::Microseconds(up ? 1 : 40),
           absl::Microseconds(up ? 400 : 1));
  }
  EXPECT_TRUE(changes_.empty()) << changes_.size() << " changes";
  EXPECT_EQ(Limit(kRt), 8192u);
}

TEST_F(InlineTunerTest, TooFewObservationsJudgeNothing) {
  Start();
  for (int period = 0; period < 10; ++period) {
    for (int i = 0; i < options_.min_samples / 2 - 1; ++i) {
      tuner_->ObserveVerify(4096, absl::Microseconds(1));
      tuner_->ObserveQueueWait(kRt, absl::Microseconds(500));
      tuner_->ObserveInlineChoice(kRt, false);
    }
    now_ += options_.period;
    tuner_->Adjust(now_);
  }
  EXPECT_EQ(Limit(kRt), 8192u);
}

TEST_F(InlineTunerTest, FixedClassesAreLeftAlone) {
  options_.fixed[Index(kRt)] = true;
  options_.prior.bytes[Index(kRt)] = 12345;
  Start();
  for (int period = 0; period < 10; ++period) {
    Period(kRt, absl::Microseconds(1), absl::Microseconds(400));
  }
  EXPECT_EQ(Limit(kRt), 12345u);
  EXPECT_TRUE(changes_.empty());
}

TEST_F(InlineTunerTest, APeriodEndsOnlyWhenItsTimeIsUp) {
  Start();
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 40; ++j) {
      tuner_->ObserveVerify(4096, absl::Microseconds(1));
      tuner_->ObserveQueueWait(kRt, absl::Microseconds(400));
    }
    tuner_->Adjust(now_);  // the same instant: the first period goes on
  }
  EXPECT_EQ(Limit(kRt), 8192u);
}

}  // namespace
}  // namespace verity::server
