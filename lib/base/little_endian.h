// Little-endian integers in byte buffers, as fs-verity's and dm-verity's
// on-disk structures and verityd's name statements and tree manifests store
// them, whatever the host's byte order; and a reader of such encodings.

#ifndef VERITYD_LIB_BASE_LITTLE_ENDIAN_H_
#define VERITYD_LIB_BASE_LITTLE_ENDIAN_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace verity {

// Writes the low `bytes` (at most 8) bytes of `value` to `out`.
inline void StoreLittleEndian(uint64_t value, size_t bytes, uint8_t* out) {
  for (size_t i = 0; i < bytes; ++i)
    out[i] = static_cast<uint8_t>(value >> (8 * i));
}

// Reads `bytes` (at most 8) bytes at `in`.
inline uint64_t LoadLittleEndian(const uint8_t* in, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = bytes; i-- > 0;) value = (value << 8) | in[i];
  return value;
}

// Appends the low `bytes` (at most 8) bytes of `value` to `out`.
inline void AppendLittleEndian(uint64_t value, size_t bytes, std::string* out) {
  uint8_t encoded[8];
  StoreLittleEndian(value, bytes, encoded);
  out->append(reinterpret_cast<const char*>(encoded), bytes);
}

// Reads an encoding front to back: runs of bytes and little-endian integers.
// Every read fails, taking nothing, once the input runs out. Does not own
// the input.
class LittleEndianReader {
 public:
  explicit LittleEndianReader(absl::string_view in)
      : in_(in), size_(in.size()) {}

  bool Bytes(size_t size, absl::string_view* out) {
    if (in_.size() < size) return false;
    *out = in_.substr(0, size);
    in_.remove_prefix(size);
    return true;
  }
  // An integer of `bytes` (at most 8) bytes.
  bool Integer(size_t bytes, uint64_t* out) {
    absl::string_view raw;
    if (!Bytes(bytes, &raw)) return false;
    *out =
        LoadLittleEndian(reinterpret_cast<const uint8_t*>(raw.data()), bytes);
    return true;
  }
  // Bytes read so far.
  size_t position() const { return size_ - in_.size(); }
  bool done() const { return in_.empty(); }

 private:
  absl::string_view in_;
  const size_t size_;
};

}  // namespace verity

#endif  // VERITYD_LIB_BASE_LITTLE_ENDIAN_H_
