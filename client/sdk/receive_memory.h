// Keeps the memory gRPC receives messages into within the process. gRPC
// allocates its read buffers with malloc and frees them once a message is
// consumed; glibc then returns the top of its heap to the kernel past
// M_TRIM_THRESHOLD (128 KiB at first) and serves large blocks by mmap, so a
// streaming client faulted its receive memory in again message after
// message: on a 512 MiB fetch 16,000 to 60,000 minor faults and a wall time
// that varied threefold from run to run. With the stream's window fixed and
// the thresholds raised above what the windows hold, the freed buffers are
// reused and a fetch faults in its memory once.

#ifndef VERITYD_CLIENT_SDK_RECEIVE_MEMORY_H_
#define VERITYD_CLIENT_SDK_RECEIVE_MEMORY_H_

#include <cstddef>

namespace verity::client {

// The bytes kept for `receive_window_bytes` windows: 8 of them.
size_t ReceiveMemoryToRetain(size_t receive_window_bytes);

// Raises glibc's trim threshold to `bytes` and its mmap threshold to `bytes`
// (at most 32 MiB, glibc's limit), unless this process raised them higher
// before; never lowers them. Process-wide, as the settings are.
// Thread-safe.
void RetainReceiveMemory(size_t bytes);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_RECEIVE_MEMORY_H_
