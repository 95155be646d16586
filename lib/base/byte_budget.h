// An amount shared by many users, taken and given back without waiting:
// what all of a server's calls together may hold of one resource (bytes of
// memory, blobs being opened), whatever each call asks.

#ifndef VERITYD_LIB_BASE_BYTE_BUDGET_H_
#define VERITYD_LIB_BASE_BYTE_BUDGET_H_

#include <atomic>
#include <cstdint>

namespace verity {

// Thread-safe.
class ByteBudget {
 public:
  explicit ByteBudget(uint64_t amount) : left_(amount) {}

  // Takes `amount` if that much is left.
  bool TryTake(uint64_t amount) {
    uint64_t left = left_.load();
    while (left >= amount) {
      if (left_.compare_exchange_weak(left, left - amount)) return true;
    }
    return false;
  }
  // Takes as much of `amount` as is left; returns what it took.
  uint64_t TakeUpTo(uint64_t amount) {
    uint64_t left = left_.load();
    while (left > 0) {
      const uint64_t take = left < amount ? left : amount;
      if (left_.compare_exchange_weak(left, left - take)) return take;
    }
    return 0;
  }
  void Give(uint64_t amount) { left_.fetch_add(amount); }
  uint64_t left() const { return left_.load(); }

 private:
  std::atomic<uint64_t> left_;
};

}  // namespace verity

#endif  // VERITYD_LIB_BASE_BYTE_BUDGET_H_
