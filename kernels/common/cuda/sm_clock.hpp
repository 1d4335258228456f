#pragma once
// The GPU's SM clock and throttle reasons through NVML, loaded at run time (no build dependency; absent on machines
// without the driver). Timing reads them after every sample and discards samples taken while the GPU was power-
// or thermally throttled. Clocks are only read, never set.
#include <cstdint>
#include <string>

namespace evoteam_harness::cuda {

class SmClock {
 public:
  // Finds the NVML device of CUDA device `device` by UUID; false (and readable() stays false) when NVML is missing.
  bool open(int device);
  bool readable() const { return m_device != nullptr; }
  unsigned int mhz() const;
  // Whether power capping, thermal or hardware slowdown is holding the clocks down right now.
  bool throttled() const;

 private:
  void* m_library = nullptr;
  void* m_device = nullptr;
  int (*m_clock_info)(void*, int, unsigned int*) = nullptr;
  int (*m_reasons)(void*, unsigned long long*) = nullptr;
};

}  // namespace evoteam_harness::cuda
