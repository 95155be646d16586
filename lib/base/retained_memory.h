// Keeps the memory a process frees within it, for reuse. gRPC allocates the
// buffers it receives messages into with malloc and frees them once a message
// is consumed; glibc then returns the top of its heap to the kernel past
// M_TRIM_THRESHOLD (128 KiB at first) and serves large blocks by mmap, so a
// process that streams faulted its receive memory in again message after
// message (docs/tuning.md has what that cost). With the thresholds raised
// above what the streams hold, the freed buffers are reused and faulted in
// once.

#ifndef VERITYD_LIB_BASE_RETAINED_MEMORY_H_
#define VERITYD_LIB_BASE_RETAINED_MEMORY_H_

#include <cstddef>

namespace verity {

// Raises glibc's trim threshold to `bytes` and its mmap threshold to `bytes`
// (at most 32 MiB, glibc's limit), unless this process raised them higher
// before; never lowers them. Process-wide, as the settings are.
// Thread-safe.
void RetainFreedMemory(size_t bytes);

}  // namespace verity

#endif  // VERITYD_LIB_BASE_RETAINED_MEMORY_H_
