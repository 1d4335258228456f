// Guarded device allocations.
#include <cuda_runtime.h>

#include <utility>

#include "cuda_check.hpp"
#include "device_buffer.hpp"

namespace evoteam_harness::cuda {

GuardLayout guard_layout(std::size_t payload_bytes, std::size_t guard_bytes) {
  GuardLayout layout;
  // The leading guard is rounded up so the payload keeps cudaMalloc's alignment.
  layout.guard_before = (guard_bytes + k_payload_alignment - 1) / k_payload_alignment * k_payload_alignment;
  if (layout.guard_before == 0) layout.guard_before = k_payload_alignment;
  layout.payload = payload_bytes;
  layout.guard_after = guard_bytes == 0 ? k_payload_alignment : guard_bytes;
  return layout;
}

GuardDamage find_guard_damage(const std::vector<unsigned char>& before, const std::vector<unsigned char>& after) {
  GuardDamage damage;
  // Scan outwards from the payload: the byte next to it is the likeliest victim of an off-by-one.
  for (std::size_t i = 0; i < before.size(); ++i) {
    if (before[before.size() - 1 - i] != k_guard_before) {
      damage.damaged = true;
      damage.offset = static_cast<std::int64_t>(i);
      return damage;
    }
  }
  for (std::size_t i = 0; i < after.size(); ++i) {
    if (after[i] != k_guard_after) {
      damage.damaged = true;
      damage.after = true;
      damage.offset = static_cast<std::int64_t>(i);
      return damage;
    }
  }
  return damage;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes, std::size_t guard_bytes, const char* name)
    : m_layout(guard_layout(bytes, guard_bytes)), m_name(name) {
  void* base = nullptr;
  EVOTEAM_CUDA_CHECK(cudaMalloc(&base, m_layout.total()));
  m_base = static_cast<unsigned char*>(base);
  EVOTEAM_CUDA_CHECK(cudaMemset(m_base, k_guard_before, m_layout.guard_before));
  EVOTEAM_CUDA_CHECK(cudaMemset(m_base + m_layout.guard_before + m_layout.payload, k_guard_after, m_layout.guard_after));
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : m_base(std::exchange(other.m_base, nullptr)), m_layout(other.m_layout), m_name(other.m_name) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    m_base = std::exchange(other.m_base, nullptr);
    m_layout = other.m_layout;
    m_name = other.m_name;
  }
  return *this;
}

void DeviceBuffer::release() noexcept {
  // A failing cudaFree after a sticky error has already been reported; nothing more to say here.
  if (m_base != nullptr) (void)cudaFree(m_base);
  m_base = nullptr;
}

GuardDamage DeviceBuffer::check_guards() const {
  std::vector<unsigned char> before(m_layout.guard_before);
  std::vector<unsigned char> after(m_layout.guard_after);
  EVOTEAM_CUDA_CHECK(cudaMemcpy(before.data(), m_base, before.size(), cudaMemcpyDeviceToHost));
  EVOTEAM_CUDA_CHECK(cudaMemcpy(after.data(), m_base + m_layout.guard_before + m_layout.payload, after.size(),
                                cudaMemcpyDeviceToHost));
  return find_guard_damage(before, after);
}

}  // namespace evoteam_harness::cuda
