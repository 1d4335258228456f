#pragma once
// Elapsed wall time for stage timings, budgets and deadlines. The steady clock, never the system clock: a
// clock set back by NTP or by hand must not make a stage look instant or a budget look unspent.
#include <chrono>

namespace evoteam {

// Seconds from `start` to now, with the clock's full resolution.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace evoteam
