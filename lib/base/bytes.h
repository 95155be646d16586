// Byte views of strings, for the Span-taking functions of every room.

#ifndef VERITYD_LIB_BASE_BYTES_H_
#define VERITYD_LIB_BASE_BYTES_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace verity {

// Views the bytes of a string, for passing to Span-taking functions.
inline absl::Span<const uint8_t> AsBytes(absl::string_view s) {
  return absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()),
                                   s.size());
}

// Views the bytes of a string for writing.
inline absl::Span<uint8_t> AsMutableBytes(std::string* s) {
  return absl::Span<uint8_t>(reinterpret_cast<uint8_t*>(&(*s)[0]), s->size());
}

}  // namespace verity

#endif  // VERITYD_LIB_BASE_BYTES_H_
