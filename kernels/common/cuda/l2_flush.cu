// L2 flush by reading a buffer of twice the L2 size.
#include "cuda_check.hpp"
#include "l2_flush.hpp"

// Sums the buffer and writes the sum only under an impossible condition, so the loads cannot be removed. C linkage
// gives it a fixed name, by which the kernel trace tells the harness's launches from the implementation's
// (candidates may not define kernels named evoteam_*: the static stage rejects them).
extern "C" __global__ void evoteam_harness_read_all(const unsigned int* data, std::size_t words, unsigned int* sink) {
  unsigned int sum = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    sum ^= __ldcg(data + i);
  if (sum == 0x9E3779B9u) *sink = sum;
}

namespace evoteam_harness::cuda {
namespace {

constexpr std::size_t k_mib = std::size_t{1} << 20;

}  // namespace

std::size_t flush_bytes(std::size_t l2_bytes) {
  const std::size_t wanted = 2 * (l2_bytes == 0 ? 64 * k_mib : l2_bytes);
  return (wanted + k_mib - 1) / k_mib * k_mib;
}

L2Flusher::L2Flusher(int device) {
  int l2 = 0;
  EVOTEAM_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  m_bytes = flush_bytes(static_cast<std::size_t>(l2));
  void* buffer = nullptr;
  EVOTEAM_CUDA_CHECK(cudaMalloc(&buffer, m_bytes));
  m_buffer = static_cast<unsigned int*>(buffer);
  EVOTEAM_CUDA_CHECK(cudaMemset(m_buffer, 1, m_bytes));
  void* sink = nullptr;
  EVOTEAM_CUDA_CHECK(cudaMalloc(&sink, sizeof(unsigned int)));
  m_sink = static_cast<unsigned int*>(sink);
}

L2Flusher::~L2Flusher() {
  if (m_buffer != nullptr) (void)cudaFree(m_buffer);
  if (m_sink != nullptr) (void)cudaFree(m_sink);
}

void L2Flusher::flush(cudaStream_t stream) {
  evoteam_harness_read_all<<<1024, 256, 0, stream>>>(m_buffer, m_bytes / sizeof(unsigned int), m_sink);
  EVOTEAM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace evoteam_harness::cuda
