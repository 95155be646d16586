// The fuzz targets' independent predicates: docs/protocol.md's grammar of
// digests and names, written again from the document (character by character,
// sharing no code with the parsers), for the targets to compare the parsers'
// accept/reject with.

#ifndef VERITYD_TESTS_FUZZ_PREDICATES_H_
#define VERITYD_TESTS_FUZZ_PREDICATES_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace verity::fuzz {

inline bool IsHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
         (c >= 'A' && c <= 'F');
}

// "sha256:" + 64 hex digits or "sha512:" + 128, either case.
inline bool LooksLikeDigest(absl::string_view text) {
  size_t hex_digits;
  if (text.substr(0, 7) == "sha256:") {
    hex_digits = 64;
  } else if (text.substr(0, 7) == "sha512:") {
    hex_digits = 128;
  } else {
    return false;
  }
  if (text.size() != 7 + hex_digits) return false;
  for (size_t i = 7; i < text.size(); ++i) {
    if (!IsHexDigit(text[i])) return false;
  }
  return true;
}

// A relative path of 1 to 1024 bytes: no leading '/', no empty, "." or ".."
// component, no NUL. Scans once, tracking the current component.
inline bool LooksLikeName(absl::string_view name) {
  if (name.empty() || name.size() > 1024) return false;
  size_t component = 0;  // bytes in the current component
  size_t dots = 0;       // how many of them are '.'
  for (char c : name) {
    if (c == '\0') return false;
    if (c == '/') {
      if (component == 0 || component == dots) {
        if (component <= 2) return false;  // "", "." or ".."
      }
      component = dots = 0;
      continue;
    }
    ++component;
    if (c == '.') ++dots;
  }
  return component != 0 && !(component == dots && component <= 2);
}

}  // namespace verity::fuzz

#endif  // VERITYD_TESTS_FUZZ_PREDICATES_H_
