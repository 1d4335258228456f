#pragma once
// The process-wide budget meter: tokens by kind, cost, calls and wall time of a run, with hard limits checked
// before every LLM call. Each charge hands the running totals to a sink (the run journals them as a tick through
// the record layer, which the meter does not know), and a resumed run restores the last totals journaled. Safe to
// use from several threads.
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/llm/llm.hpp>

namespace evoteam {

// 0 means unlimited.
struct MeterLimits {
  std::uint64_t max_tokens = 0;  // Usage::total()
  double max_cost_usd = 0;
  double max_wall_s = 0;
};

struct MeterTotals {
  Usage tokens;
  double cost_usd = 0;
  std::uint64_t calls = 0;                  // replies received
  std::uint64_t unknown_cost_attempts = 0;  // attempts that may have been billed without a reply
  std::uint64_t estimated_calls = 0;        // replies without usage, their tokens estimated from the text
  double wall_s = 0;                        // restored wall time plus this process's time since start
  // Calls refused before they were sent, their prompt alone more than the token budget had left (Meter::admit);
  // the token budget then counts as spent. Not journaled: a resumed run (perhaps with a larger budget) asks again.
  std::uint64_t refused_calls = 0;
};

enum class LimitHit { none, tokens, cost, wall_time };

class Meter {
 public:
  explicit Meter(MeterLimits limits = {});

  void set_limits(const MeterLimits& limits);
  MeterLimits limits() const;
  // The first limit reached, checked in the order tokens, cost, wall time. The token budget is reached too once a
  // call was refused for it (admit).
  LimitHit check() const;
  // Before a call is sent: nullopt when its prompt (`prompt_tokens`, estimated or counted) fits in what the token
  // budget has left; otherwise the call is refused, counted (MeterTotals::refused_calls) and the reason returned,
  // naming both figures.
  std::optional<std::string> admit(std::uint64_t prompt_tokens);

  // Adds one reply's usage and cost (and attempts that may have been billed), then hands the running totals to the
  // journal sink if one is set. The sink runs under no lock of the meter.
  // `estimated`: the server sent no usage and `usage` is an estimate (LlmResponse::usage_estimated).
  void charge(const Usage& usage, double cost_usd, int unknown_cost_attempts = 0, bool estimated = false);
  // Counts attempts that failed after the request may have reached the model (no usage received).
  void charge_unknown(int unknown_cost_attempts);

  MeterTotals totals() const;

  // Hands the totals after every charge to `sink` (the run journals them). Pass {} to stop.
  void set_journal_sink(std::function<void(const MeterTotals&)> sink);
  // Continues from recorded totals (a resumed run's last journaled ones); the wall clock continues from their wall_s.
  void restore(const MeterTotals& totals);
  // Zero totals and a fresh wall clock (tests, a new run in the same process).
  void reset();

 private:
  MeterTotals totals_locked() const;
  void journal_totals();

  mutable std::mutex m_mutex;
  std::mutex m_sink_mutex;  // orders journal records so the last one always holds the newest totals
  MeterLimits m_limits;
  MeterTotals m_totals;  // wall_s holds the restored part only
  std::chrono::steady_clock::time_point m_start;
  std::function<void(const MeterTotals&)> m_sink;
};

// The one meter of this process (mini-swe-agent's GlobalModelStats, in C++).
Meter& process_meter();

}  // namespace evoteam
