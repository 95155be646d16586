// Tests the class queue's order on fake time: class order, FIFO within a
// class, aging, the plain FIFO options, and that IDLE work is not starved.

#include "server/dispatch/class_queue.h"

#include <memory>
#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/priority_class.h"

namespace verity::server {
namespace {

using ::testing::ElementsAre;

const absl::Time kT0 = absl::UnixEpoch() + absl::Hours(1);
constexpr absl::Duration kTick = absl::Milliseconds(1);

std::vector<int> Drain(ClassQueue<int>& queue) {
  std::vector<int> order;
  while (std::optional<ClassQueue<int>::Popped> popped = queue.Pop()) {
    order.push_back(popped->item);
  }
  return order;
}

TEST(ClassQueueTest, DefaultsAndFifoOptions) {
  const ClassQueueOptions defaults;
  EXPECT_EQ(defaults.be_delay, absl::Milliseconds(5));
  EXPECT_EQ(defaults.idle_delay, absl::Milliseconds(50));
  EXPECT_EQ(ClassQueueOptions::Fifo().be_delay, absl::ZeroDuration());
  EXPECT_EQ(ClassQueueOptions::Fifo().idle_delay, absl::ZeroDuration());
}

TEST(ClassQueueTest, EmptyQueue) {
  ClassQueue<int> queue;
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(queue.size(), 0u);
  EXPECT_FALSE(queue.Pop().has_value());
  queue.Push(PriorityClass::kBe, kT0, 1);
  EXPECT_FALSE(queue.empty());
  EXPECT_EQ(queue.size(), 1u);
  EXPECT_TRUE(queue.Pop().has_value());
  EXPECT_TRUE(queue.empty());
}

TEST(ClassQueueTest, NextEnqueuedAndMostUrgentClassPeekWithoutPopping) {
  ClassQueue<int> queue(
      ClassQueueOptions{absl::Milliseconds(5), absl::Milliseconds(50)});
  EXPECT_EQ(queue.NextEnqueued(), std::nullopt);
  EXPECT_EQ(queue.MostUrgentClass(), std::nullopt);
  queue.Push(PriorityClass::kIdle, kT0, 1);
  queue.Push(PriorityClass::kRt, kT0 + absl::Milliseconds(60), 2);
  // The IDLE item has aged past the RT one: it runs next, RT is most urgent.
  EXPECT_EQ(queue.NextEnqueued(), kT0);
  EXPECT_EQ(queue.MostUrgentClass(), PriorityClass::kRt);
  EXPECT_EQ(queue.size(), 2u);
  EXPECT_EQ(queue.Pop()->item, 1);
  EXPECT_EQ(queue.NextEnqueued(), kT0 + absl::Milliseconds(60));
}

TEST(ClassQueueTest, ClassOrderWhenEnqueuedTogether) {
  ClassQueue<int> queue;
  queue.Push(PriorityClass::kIdle, kT0, 1);
  queue.Push(PriorityClass::kBe, kT0, 2);
  queue.Push(PriorityClass::kRt, kT0, 3);
  queue.Push(PriorityClass::kNone, kT0, 4);
  EXPECT_THAT(Drain(queue), ElementsAre(3, 2, 4, 1));
}

TEST(ClassQueueTest, PoppedCarriesClassAndEnqueueTime) {
  ClassQueue<int> queue;
  queue.Push(PriorityClass::kNone, kT0 + kTick, 7);
  std::optional<ClassQueue<int>::Popped> popped = queue.Pop();
  ASSERT_TRUE(popped.has_value());
  EXPECT_EQ(popped->item, 7);
  EXPECT_EQ(popped->priority_class, PriorityClass::kNone);
  EXPECT_EQ(popped->enqueued, kT0 + kTick);
}

TEST(ClassQueueTest, FifoWithinClass) {
  ClassQueue<int> queue;
  for (int i = 0; i < 5; ++i)
    queue.Push(PriorityClass::kRt, kT0 + i * kTick, i);
  for (int i = 5; i < 10; ++i) queue.Push(PriorityClass::kIdle, kT0, i);
  // BE and NONE are one class; push order holds even if time steps back.
  queue.Push(PriorityClass::kBe, kT0 + kTick, 10);
  queue.Push(PriorityClass::kNone, kT0, 11);
  queue.Push(PriorityClass::kBe, kT0, 12);
  EXPECT_THAT(Drain(queue),
              ElementsAre(0, 1, 2, 3, 4, 10, 11, 12, 5, 6, 7, 8, 9));
}

// Which of an `early` item enqueued at kT0 and an RT item enqueued `later`
// pops first.
int FirstOf(PriorityClass early, absl::Duration later) {
  ClassQueue<int> queue;
  queue.Push(early, kT0, 1);
  queue.Push(PriorityClass::kRt, kT0 + later, 2);
  return queue.Pop()->item;
}

TEST(ClassQueueTest, IdleAgesPastRtAfterIdleDelay) {
  const absl::Duration delay = ClassQueueOptions().idle_delay;
  EXPECT_EQ(FirstOf(PriorityClass::kIdle, delay - absl::Nanoseconds(1)), 2);
  EXPECT_EQ(FirstOf(PriorityClass::kIdle, delay), 2);  // a tie goes to RT
  EXPECT_EQ(FirstOf(PriorityClass::kIdle, delay + absl::Nanoseconds(1)), 1);
}

TEST(ClassQueueTest, BeAgesPastRtAfterBeDelay) {
  const absl::Duration delay = ClassQueueOptions().be_delay;
  for (PriorityClass c : {PriorityClass::kBe, PriorityClass::kNone}) {
    EXPECT_EQ(FirstOf(c, delay - absl::Nanoseconds(1)), 2);
    EXPECT_EQ(FirstOf(c, delay), 2);
    EXPECT_EQ(FirstOf(c, delay + absl::Nanoseconds(1)), 1);
  }
}

TEST(ClassQueueTest, IdleAgesPastBe) {
  const ClassQueueOptions options;
  const absl::Duration gap = options.idle_delay - options.be_delay;
  ClassQueue<int> queue;
  queue.Push(PriorityClass::kIdle, kT0, 1);
  queue.Push(PriorityClass::kBe, kT0 + gap, 2);
  queue.Push(PriorityClass::kBe, kT0 + gap + absl::Nanoseconds(1), 3);
  EXPECT_THAT(Drain(queue), ElementsAre(2, 1, 3));
}

TEST(ClassQueueTest, FifoOptionsGiveEnqueueOrder) {
  ClassQueue<int> queue(ClassQueueOptions::Fifo());
  queue.Push(PriorityClass::kIdle, kT0, 1);
  queue.Push(PriorityClass::kBe, kT0 + kTick, 2);
  queue.Push(PriorityClass::kRt, kT0 + 2 * kTick, 3);
  queue.Push(PriorityClass::kNone, kT0 + 3 * kTick, 4);
  // The same instant: push order, not class order.
  queue.Push(PriorityClass::kIdle, kT0 + 4 * kTick, 5);
  queue.Push(PriorityClass::kRt, kT0 + 4 * kTick, 6);
  EXPECT_THAT(Drain(queue), ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(ClassQueueTest, InfiniteDelaysGiveStrictClassOrder) {
  ClassQueue<int> queue({absl::InfiniteDuration(), absl::InfiniteDuration()});
  queue.Push(PriorityClass::kIdle, kT0, 1);
  queue.Push(PriorityClass::kBe, kT0 + absl::Hours(1), 2);
  queue.Push(PriorityClass::kRt, kT0 + absl::Hours(2), 3);
  EXPECT_THAT(Drain(queue), ElementsAre(3, 2, 1));
}

// With one RT push and one pop per tick (a saturated worker), an item of
// class `waiting` enqueued at kT0 still runs, once its delay has passed.
absl::Duration WaitUnderRtStream(PriorityClass waiting) {
  ClassQueue<int> queue;
  queue.Push(waiting, kT0, -1);
  for (int tick = 1; tick < 1000; ++tick) {
    queue.Push(PriorityClass::kRt, kT0 + tick * kTick, tick);
    if (queue.Pop()->item == -1) return tick * kTick;
  }
  return absl::InfiniteDuration();
}

TEST(ClassQueueTest, RtStreamDoesNotStarveIdleOrBe) {
  const ClassQueueOptions options;
  const absl::Duration idle_wait = WaitUnderRtStream(PriorityClass::kIdle);
  EXPECT_GT(idle_wait, options.idle_delay);
  EXPECT_LE(idle_wait, options.idle_delay + kTick);
  const absl::Duration be_wait = WaitUnderRtStream(PriorityClass::kBe);
  EXPECT_GT(be_wait, options.be_delay);
  EXPECT_LE(be_wait, options.be_delay + kTick);
}

TEST(ClassQueueTest, HoldsMoveOnlyItems) {
  ClassQueue<std::unique_ptr<int>> queue;
  queue.Push(PriorityClass::kBe, kT0, std::make_unique<int>(1));
  queue.Push(PriorityClass::kRt, kT0, std::make_unique<int>(2));
  EXPECT_EQ(*queue.Pop()->item, 2);
  EXPECT_EQ(*queue.Pop()->item, 1);
}

}  // namespace
}  // namespace verity::server
