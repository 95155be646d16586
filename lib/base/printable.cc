// Implements Printable and IsUtf8: a small UTF-8 decoder that lets whole,
// shortest-form sequences of printable code points through and escapes every
// other byte.

#include "lib/base/printable.h"

#include <cstdint>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace verity {
namespace {

// The length of the UTF-8 sequence at the start of `text` if it is whole,
// in shortest form and not a surrogate, and its code point; 0 otherwise.
size_t Utf8Sequence(absl::string_view text, uint32_t& point) {
  const auto byte = [&text](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t lead = byte(0);
  size_t length;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    point = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    point = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    point = lead & 0x07;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    point = point << 6 | (byte(i) & 0x3f);
  }
  const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (point < least[length] || point > 0x10ffff ||
      (point >= 0xd800 && point <= 0xdfff)) {
    return 0;
  }
  return length;
}

// Utf8Sequence(), but 0 for a C1 control (U+0080..U+009F), which some
// terminals act on.
size_t PrintableSequence(absl::string_view text) {
  uint32_t point = 0;
  const size_t length = Utf8Sequence(text, point);
  return point <= 0x9f ? 0 : length;
}

}  // namespace

bool IsUtf8(absl::string_view text) {
  while (!text.empty()) {
    size_t length = 1;
    if (static_cast<uint8_t>(text.front()) >= 0x80) {
      uint32_t point = 0;
      length = Utf8Sequence(text, point);
      if (length == 0) return false;
    }
    text.remove_prefix(length);
  }
  return true;
}

std::string Printable(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const char c = text.front();
    const uint8_t b = static_cast<uint8_t>(c);
    if (b >= 0x80) {
      const size_t length = PrintableSequence(text);
      if (length > 0) {
        out.append(text.data(), length);
        text.remove_prefix(length);
        continue;
      }
    }
    text.remove_prefix(1);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (b < 0x20 || b >= 0x7f) {
      absl::StrAppendFormat(&out, "\\x%02x", b);
    } else {
      out += c;
    }
  }
  return out;
}

void PrintLine(std::FILE* out, absl::string_view prefix,
               absl::string_view line) {
  const std::string text = absl::StrCat(prefix, ": ", Printable(line), "\n");
  std::fwrite(text.data(), 1, text.size(), out);
  std::fflush(out);
}

std::string Rfc3339(absl::Time time) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", time, absl::UTCTimeZone());
}

}  // namespace verity
