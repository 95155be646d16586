// Little-endian integers in byte buffers, as fs-verity's and dm-verity's
// on-disk structures and verityd's name statements store them, whatever the
// host's byte order.

#ifndef VERITYD_LIB_BASE_LITTLE_ENDIAN_H_
#define VERITYD_LIB_BASE_LITTLE_ENDIAN_H_

#include <cstddef>
#include <cstdint>

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

}  // namespace verity

#endif  // VERITYD_LIB_BASE_LITTLE_ENDIAN_H_
