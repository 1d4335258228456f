#include "sm_clock.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>

namespace evoteam_harness::cuda {
namespace {

constexpr int k_nvml_success = 0;
constexpr int k_nvml_clock_sm = 1;
// nvmlClocksThrottleReasons: SwPowerCap 0x4, HwSlowdown 0x8, SwThermalSlowdown 0x20, HwThermalSlowdown 0x40,
// HwPowerBrakeSlowdown 0x80. Idle, application clocks and sync boost are not slowdowns of a running kernel.
constexpr unsigned long long k_slowdown_reasons = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

}  // namespace

bool SmClock::open(int device) {
  m_library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (m_library == nullptr) return false;
  auto init = reinterpret_cast<int (*)()>(dlsym(m_library, "nvmlInit_v2"));
  auto by_uuid = reinterpret_cast<int (*)(const char*, void**)>(dlsym(m_library, "nvmlDeviceGetHandleByUUID"));
  m_clock_info = reinterpret_cast<int (*)(void*, int, unsigned int*)>(dlsym(m_library, "nvmlDeviceGetClockInfo"));
  m_reasons = reinterpret_cast<int (*)(void*, unsigned long long*)>(dlsym(m_library, "nvmlDeviceGetCurrentClocksEventReasons"));
  if (m_reasons == nullptr)
    m_reasons = reinterpret_cast<int (*)(void*, unsigned long long*)>(dlsym(m_library, "nvmlDeviceGetCurrentClocksThrottleReasons"));
  if (init == nullptr || by_uuid == nullptr || m_clock_info == nullptr || init() != k_nvml_success) return false;
  // NVML numbers devices its own way; the UUID names the GPU this process uses whatever CUDA_VISIBLE_DEVICES says.
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, device) != cudaSuccess) return false;
  const auto* b = reinterpret_cast<const unsigned char*>(properties.uuid.bytes);
  char uuid[64];
  std::snprintf(uuid, sizeof uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
                b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  void* handle = nullptr;
  if (by_uuid(uuid, &handle) != k_nvml_success) return false;
  m_device = handle;
  return true;
}

unsigned int SmClock::mhz() const {
  unsigned int clock = 0;
  if (m_device != nullptr) m_clock_info(m_device, k_nvml_clock_sm, &clock);
  return clock;
}

bool SmClock::throttled() const {
  unsigned long long reasons = 0;
  if (m_device == nullptr || m_reasons == nullptr || m_reasons(m_device, &reasons) != k_nvml_success) return false;
  return (reasons & k_slowdown_reasons) != 0;
}

}  // namespace evoteam_harness::cuda
