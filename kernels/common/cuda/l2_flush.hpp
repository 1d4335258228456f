#pragma once
// Flushes L2 before every timed sample by reading a buffer of twice the L2 size on the harness's stream (a
// read, not a memset: a memset may be served by compression or write-back tricks that leave lines resident).
#include <cuda_runtime.h>

#include <cstddef>

namespace evoteam_harness::cuda {

// Bytes of the flush buffer for an L2 of `l2_bytes` (at least 2x, rounded up to whole 1 MiB).
std::size_t flush_bytes(std::size_t l2_bytes);

class L2Flusher {
 public:
  // Queries the device's L2 size and allocates the buffer; checked calls.
  explicit L2Flusher(int device);
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;
  void flush(cudaStream_t stream);
  std::size_t bytes() const { return m_bytes; }

 private:
  unsigned int* m_buffer = nullptr;
  unsigned int* m_sink = nullptr;
  std::size_t m_bytes = 0;
};

}  // namespace evoteam_harness::cuda
