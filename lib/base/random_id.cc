// Implements RandomId with Abseil's per-call random generator.

#include "lib/base/random_id.h"

#include <cstdint>

#include "absl/random/random.h"
#include "absl/strings/escaping.h"

namespace verity {

std::string RandomId() {
  absl::BitGen gen;
  std::string bytes(16, '\0');
  for (char& c : bytes) c = static_cast<char>(absl::Uniform<uint8_t>(gen));
  return absl::BytesToHexString(bytes);
}

}  // namespace verity
