#pragma once
// Which kernels ran, and when (CUPTI activity records), so timing can check that an implementation's kernels ran
// inside the measured windows and that every sample of one side ran the same kernels: work launched outside the
// window, or skipped in some samples, is TIMING_SIDE_WORK. Optional: where CUPTI cannot be enabled, `available`
// stays false and timing says that only host threads were checked.
#include <cstdint>
#include <string>
#include <vector>

namespace evoteam_harness::cuda {

struct TraceVerdict {
  bool available = false;
  bool side_work = false;
  std::int64_t kernels = 0;          // the implementations' kernels seen
  std::int64_t outside_windows = 0;  // of those, run outside every sample window
  std::string evidence;              // the first problem, in words
};

class KernelTrace {
 public:
  // Enables kernel activity records. Call before the first launch to be traced.
  void start();
  bool available() const { return m_available; }
  // A sample's window on the CUPTI clock: begin before the implementation's launches are enqueued, end after they
  // finished. `side` names whose window it is ("candidate", "baseline").
  void begin_window(const char* side);
  void end_window();
  // Flushes the records and judges them. Kernels named evoteam_* are the harness's own and are ignored.
  TraceVerdict finish();

 private:
  struct Window {
    std::string side;
    std::uint64_t begin = 0, end = 0;
  };
  bool m_available = false;
  std::vector<Window> m_windows;
};

}  // namespace evoteam_harness::cuda
