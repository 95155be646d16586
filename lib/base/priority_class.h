// The Linux I/O priority classes (IOPRIO_CLASS_*) a read is served with, as the
// dispatch design uses them: RT before BE before IDLE; NONE is served as BE, as
// the kernel's I/O schedulers do.

#ifndef VERITYD_LIB_BASE_PRIORITY_CLASS_H_
#define VERITYD_LIB_BASE_PRIORITY_CLASS_H_

#include <array>

#include "absl/strings/string_view.h"

namespace verity {

// Same numbers as IOPRIO_CLASS_* and the protocol's PriorityClass.
enum class PriorityClass : int { kNone = 0, kRt = 1, kBe = 2, kIdle = 3 };

inline constexpr int kNumPriorityClasses = 4;

inline constexpr std::array<PriorityClass, kNumPriorityClasses>
    kAllPriorityClasses = {PriorityClass::kNone, PriorityClass::kRt,
                           PriorityClass::kBe, PriorityClass::kIdle};

// "none", "rt", "be", "idle": the label values metrics and flags use.
inline absl::string_view PriorityClassName(PriorityClass c) {
  switch (c) {
    case PriorityClass::kNone:
      return "none";
    case PriorityClass::kRt:
      return "rt";
    case PriorityClass::kBe:
      return "be";
    case PriorityClass::kIdle:
      return "idle";
  }
  return "none";
}

inline int Index(PriorityClass c) { return static_cast<int>(c); }

// The order classes are served in: 0 for RT, 1 for BE and NONE (one class),
// 2 for IDLE. Smaller goes first.
inline constexpr int kNumServiceRanks = 3;
inline int ServiceRank(PriorityClass c) {
  switch (c) {
    case PriorityClass::kRt:
      return 0;
    case PriorityClass::kNone:
    case PriorityClass::kBe:
      return 1;
    case PriorityClass::kIdle:
      return 2;
  }
  return 1;
}

}  // namespace verity

#endif  // VERITYD_LIB_BASE_PRIORITY_CLASS_H_
