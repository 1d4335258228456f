#pragma once
// One cudaMalloc per tensor, never pooled, laid out as [0xA5 guard][payload][0x5A guard] so an out-of-bounds
// write by the candidate lands in a guard (checked after every call) instead of in another tensor. The payload
// starts 256-byte aligned (the alignment cudaMalloc gives, which vectorised kernels may assume).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace evoteam_harness::cuda {

constexpr unsigned char k_guard_before = 0xA5;
constexpr unsigned char k_guard_after = 0x5A;
constexpr std::size_t k_payload_alignment = 256;

// Where the payload sits in the allocation: host-side arithmetic, tested without a device.
struct GuardLayout {
  std::size_t guard_before = 0;  // bytes, a multiple of k_payload_alignment
  std::size_t payload = 0;
  std::size_t guard_after = 0;
  std::size_t total() const { return guard_before + payload + guard_after; }
};
GuardLayout guard_layout(std::size_t payload_bytes, std::size_t guard_bytes);

// First damaged guard byte, from host copies of the two guards.
struct GuardDamage {
  bool damaged = false;
  bool after = false;       // false: before the payload
  std::int64_t offset = 0;  // bytes from the payload boundary
};
GuardDamage find_guard_damage(const std::vector<unsigned char>& before, const std::vector<unsigned char>& after);

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Allocates and fills both guards; every CUDA call is checked (a failure ends the process).
  DeviceBuffer(std::size_t bytes, std::size_t guard_bytes, const char* name);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return m_base == nullptr ? nullptr : m_base + m_layout.guard_before; }
  std::size_t bytes() const { return m_layout.payload; }
  const char* name() const { return m_name; }
  GuardDamage check_guards() const;  // copies the guards back to the host

 private:
  void release() noexcept;
  unsigned char* m_base = nullptr;
  GuardLayout m_layout;
  const char* m_name = "";
};

}  // namespace evoteam_harness::cuda
