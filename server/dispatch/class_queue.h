// A queue that serves items by I/O priority class with aging, so RT work runs
// before BE before IDLE without starving anyone: the ordering inside one
// verification worker.

#ifndef VERITYD_SERVER_DISPATCH_CLASS_QUEUE_H_
#define VERITYD_SERVER_DISPATCH_CLASS_QUEUE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/time/time.h"
#include "lib/base/priority_class.h"

namespace verity::server {

// Aging as deadlines: an item's deadline is its enqueue time plus its class's
// offset (RT 0, BE and NONE `be_delay`, IDLE `idle_delay`), and the earliest
// deadline runs first. So RT passes BE work for at most `be_delay` and passes
// IDLE work for at most `idle_delay`; after that the older item goes first.
// Both must be >= 0; absl::InfiniteDuration() gives strict class order (and
// lets a steady stream of RT work starve the rest).
struct ClassQueueOptions {
  // Verifying a 4 KiB block takes microseconds, so RT reads jump a backlog of
  // thousands of blocks, while RT traffic adds at most 5 ms to a BE read.
  absl::Duration be_delay = absl::Milliseconds(5);
  // IDLE work (scrubbing, prefetch) yields for up to 50 ms, but no longer:
  // it still finishes under a saturating RT/BE load.
  absl::Duration idle_delay = absl::Milliseconds(50);

  // Both delays zero: plain FIFO by enqueue time, whatever the class (the
  // order of the kernel's old WQ_UNBOUND workqueues).
  static ClassQueueOptions Fifo() {
    return {absl::ZeroDuration(), absl::ZeroDuration()};
  }
};

// Items of type T (movable) tagged with a PriorityClass and an enqueue time
// the caller supplies, so tests can use fake time. Pop() returns the item with
// the earliest deadline (see ClassQueueOptions). Ties go to the class with the
// smaller offset (RT, then BE/NONE, then IDLE with the defaults), then to the
// earlier Push(): within a class items leave in push order, BE and NONE are
// one class, and Fifo() is push order even among equal enqueue times. Items
// with an infinite delay, which never come due, leave in class order.
//
// O(1) per operation. Not thread-safe: callers hold their own lock.
template <typename T>
class ClassQueue {
 public:
  struct Popped {
    T item;
    PriorityClass priority_class;
    absl::Time enqueued;
  };

  explicit ClassQueue(const ClassQueueOptions& options = {})
      : offsets_{absl::ZeroDuration(), options.be_delay, options.idle_delay} {}

  void Push(PriorityClass priority_class, absl::Time enqueued, T item) {
    bands_[BandOf(priority_class)].push_back(
        Entry{std::move(item), priority_class, enqueued, next_seq_++});
    ++size_;
  }

  // The item with the earliest deadline, or nullopt if the queue is empty.
  std::optional<Popped> Pop() {
    const int best = NextBand();
    if (best < 0) return std::nullopt;
    Entry& front = bands_[best].front();
    Popped popped{std::move(front.item), front.priority_class, front.enqueued};
    bands_[best].pop_front();
    --size_;
    return popped;
  }

  // The most urgent class waiting, by class alone (RT, then BE or NONE,
  // then IDLE; aging aside), or nullopt if empty: for priority inheritance.
  // BE and NONE share a FIFO, so its front item's class stands for both.
  std::optional<PriorityClass> MostUrgentClass() const {
    for (const std::deque<Entry>& band : bands_) {
      if (!band.empty()) return band.front().priority_class;
    }
    return std::nullopt;
  }

  // When the item Pop() would return was pushed, or nullopt if empty.
  std::optional<absl::Time> NextEnqueued() const {
    const int best = NextBand();
    if (best < 0) return std::nullopt;
    return bands_[best].front().enqueued;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  // One FIFO per offset, most urgent first: RT, BE (with NONE, which is
  // served as BE), IDLE.
  static constexpr int kNumBands = kNumServiceRanks;

  struct Entry {
    T item;
    PriorityClass priority_class;
    absl::Time enqueued;
    uint64_t seq;  // Push() order, the last tie-break
  };

  static int BandOf(PriorityClass c) { return ServiceRank(c); }

  // The band whose front item runs next, or -1 if all are empty.
  int NextBand() const {
    int best = -1;
    for (int band = 0; band < kNumBands; ++band) {
      if (bands_[band].empty()) continue;
      if (best < 0 || Key(band) < Key(best)) best = band;
    }
    return best;
  }

  // The order key of a non-empty band's front item; smaller runs first.
  // Items that never come due keep class order among themselves.
  std::tuple<absl::Time, absl::Duration, int, uint64_t> Key(int band) const {
    const Entry& front = bands_[band].front();
    const absl::Time deadline = front.enqueued + offsets_[band];
    return {deadline, offsets_[band],
            deadline == absl::InfiniteFuture() ? band : 0, front.seq};
  }

  std::array<absl::Duration, kNumBands> offsets_;
  std::array<std::deque<Entry>, kNumBands> bands_;
  uint64_t next_seq_ = 0;
  size_t size_ = 0;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_DISPATCH_CLASS_QUEUE_H_
