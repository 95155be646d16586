// The dispatch decision for every class, size, budget state and mode, and the
// flag syntax.

#include "server/dispatch/dispatch_policy.h"

#include "gtest/gtest.h"

namespace verity::server {
namespace {

constexpr DispatchDecision kInline{DispatchPath::kInline,
                                   DispatchReason::kWithinLimit};
constexpr DispatchDecision kTooBig{DispatchPath::kPool, DispatchReason::kSize};
constexpr DispatchDecision kNoBudget{DispatchPath::kPool,
                                     DispatchReason::kBudget};

TEST(DecideTest, AdaptiveByClassSizeAndBudget) {
  const InlineLimits limits = InlineLimits::Uniform(8192);
  for (PriorityClass c :
       {PriorityClass::kNone, PriorityClass::kRt, PriorityClass::kBe}) {
    SCOPED_TRACE(PriorityClassName(c));
    const auto decide = [&](uint64_t bytes, bool budget) {
      return Decide(DispatchMode::kAdaptive, limits, c, bytes, budget);
    };
    EXPECT_EQ(decide(4096, true), kInline);
    EXPECT_EQ(decide(8192, true), kInline);
    EXPECT_EQ(decide(8193, true), kTooBig);
    EXPECT_EQ(decide(512 << 10, true), kTooBig);
    EXPECT_EQ(decide(4096, false), kNoBudget);
    // Size is the first reason: it does not depend on the moment.
    EXPECT_EQ(decide(512 << 10, false), kTooBig);
  }
  // IDLE never runs inline, however small.
  for (uint64_t bytes : {0, 1, 4096}) {
    EXPECT_EQ(Decide(DispatchMode::kAdaptive, limits, PriorityClass::kIdle,
                     bytes, true),
              kTooBig);
  }
}

TEST(DecideTest, PerClassLimits) {
  InlineLimits limits = InlineLimits::Uniform(8192);
  limits.bytes[Index(PriorityClass::kRt)] = 65536;
  EXPECT_EQ(
      Decide(DispatchMode::kAdaptive, limits, PriorityClass::kRt, 65536, true),
      kInline);
  EXPECT_EQ(
      Decide(DispatchMode::kAdaptive, limits, PriorityClass::kBe, 65536, true),
      kTooBig);
}

TEST(DecideTest, ForcedModesIgnoreSizeClassAndBudget) {
  const InlineLimits limits = InlineLimits::Uniform(8192);
  for (PriorityClass c : kAllPriorityClasses) {
    for (uint64_t bytes : {4096, 1 << 20}) {
      for (bool budget : {true, false}) {
        EXPECT_EQ(
            Decide(DispatchMode::kInline, limits, c, bytes, budget),
            (DispatchDecision{DispatchPath::kInline, DispatchReason::kForced}));
        for (DispatchMode mode :
             {DispatchMode::kPool, DispatchMode::kPoolUnbound}) {
          EXPECT_EQ(
              Decide(mode, limits, c, bytes, budget),
              (DispatchDecision{DispatchPath::kPool, DispatchReason::kForced}));
        }
      }
    }
  }
}

TEST(UrgentInlineLimitTest, LargestPowerOfTwoNoDearerThanAHandoff) {
  const absl::Duration hash = absl::Microseconds(3);
  // A handoff cheaper than one block's hash still leaves one block inline.
  EXPECT_EQ(UrgentInlineLimit(hash, absl::Microseconds(1)), 4096);
  EXPECT_EQ(UrgentInlineLimit(hash, absl::Microseconds(5)), 4096);
  EXPECT_EQ(UrgentInlineLimit(hash, absl::Microseconds(6)), 8192);
  EXPECT_EQ(UrgentInlineLimit(hash, absl::Microseconds(23)), 16384);
  EXPECT_EQ(UrgentInlineLimit(hash, absl::Microseconds(52)), 65536);
  EXPECT_EQ(UrgentInlineLimit(hash, absl::Seconds(1)), 1 << 20);
  EXPECT_EQ(UrgentInlineLimit(absl::ZeroDuration(), absl::ZeroDuration()),
            1 << 20);
}

TEST(DispatchModeTest, ParsesEveryNameAndRejectsOthers) {
  for (DispatchMode mode : {DispatchMode::kAdaptive, DispatchMode::kInline,
                            DispatchMode::kPool, DispatchMode::kPoolUnbound}) {
    EXPECT_EQ(*ParseDispatchMode(DispatchModeName(mode)), mode);
  }
  absl::StatusOr<DispatchMode> bad = ParseDispatchMode("unbound");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("pool_unbound"), std::string::npos);
}

TEST(InlineLimitsTest, ParseOverridesOnlyWhatIsGiven) {
  const InlineLimits base = InlineLimits::Uniform(8192);
  absl::StatusOr<InlineLimits> limits =
      ParseInlineLimits("rt=16384,idle=4096", base);
  ASSERT_TRUE(limits.ok()) << limits.status();
  EXPECT_EQ(limits->For(PriorityClass::kRt), 16384);
  EXPECT_EQ(limits->For(PriorityClass::kBe), 8192);
  EXPECT_EQ(limits->For(PriorityClass::kNone), 8192);
  EXPECT_EQ(limits->For(PriorityClass::kIdle), 4096);
  EXPECT_EQ(limits->ToString(), "none=8192,rt=16384,be=8192,idle=4096");
  EXPECT_EQ(ParseInlineLimits("", base)->ToString(), base.ToString());
}

TEST(InlineLimitsTest, RejectsMalformedParts) {
  for (const char* text :
       {"rt", "rt=", "rt=-1", "rt=4k", "urgent=4096", "rt=4096,be"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(ParseInlineLimits(text, InlineLimits()).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace verity::server
