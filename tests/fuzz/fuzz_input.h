// What the fuzz targets share: a reader that turns the fuzzer's bytes into
// choices, and the check that aborts on a broken invariant. Written here
// rather than taken from clang's <fuzzer/FuzzedDataProvider.h>, so that the
// same targets build with any compiler for their replay tests.

#ifndef VERITYD_TESTS_FUZZ_FUZZ_INPUT_H_
#define VERITYD_TESTS_FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"

namespace verity::fuzz {

// Reads the input front to back. Once it is used up every read returns zeros
// or empty strings, so a target never has to check for the end. Borrows the
// bytes; thread-compatible.
class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size)
      : data_(reinterpret_cast<const char*>(data)), size_(size) {}

  bool empty() const { return pos_ == size_; }
  size_t remaining() const { return size_ - pos_; }

  uint8_t Byte() { return empty() ? 0 : static_cast<uint8_t>(data_[pos_++]); }
  bool Bool() { return (Byte() & 1) != 0; }

  // Little-endian, from as many bytes as the type has.
  template <typename T>
  T Integer() {
    uint64_t value = 0;
    for (size_t i = 0; i < sizeof(T); ++i) {
      value |= uint64_t{Byte()} << (8 * i);
    }
    return static_cast<T>(value);
  }

  // A value in [0, n), n > 0; small n take one byte.
  uint64_t Below(uint64_t n) {
    const uint64_t raw = n <= 256 ? Byte() : Integer<uint64_t>();
    return raw % n;
  }

  // Up to `n` bytes, fewer at the end of the input.
  std::string Bytes(size_t n) {
    const size_t take = n < remaining() ? n : remaining();
    std::string out(data_ + pos_, take);
    pos_ += take;
    return out;
  }

  // A string of length Byte() (or up to `max` with a 16-bit length).
  std::string ShortString() { return Bytes(Byte()); }
  std::string String(size_t max) {
    return Bytes(Integer<uint16_t>() % (max + 1));
  }

 private:
  const char* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Reports a broken invariant and aborts, so libFuzzer saves the input and the
// replay test fails.
[[noreturn]] inline void Fail(const char* file, int line, const char* what,
                              absl::string_view detail) {
  std::fprintf(stderr, "%s:%d: invariant broken: %s %.*s\n", file, line, what,
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

}  // namespace verity::fuzz

// Aborts unless `cond`, printing `detail` (anything a string_view takes:
// the status message or the value that broke the invariant).
#define FUZZ_CHECK(cond, detail)                                 \
  do {                                                           \
    if (!(cond)) {                                               \
      ::verity::fuzz::Fail(__FILE__, __LINE__, #cond, (detail)); \
    }                                                            \
  } while (0)

#endif  // VERITYD_TESTS_FUZZ_FUZZ_INPUT_H_
