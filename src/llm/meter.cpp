// The process-wide budget meter.
#include <evoteam/core/clock.hpp>
#include <evoteam/core/config.hpp>
#include <evoteam/llm/meter.hpp>

#include <algorithm>

namespace evoteam {

Meter::Meter(MeterLimits limits) : m_limits(limits), m_start(std::chrono::steady_clock::now()) {}

void Meter::set_limits(const MeterLimits& limits) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_limits = limits;
}

MeterLimits Meter::limits() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_limits;
}

MeterTotals Meter::totals_locked() const {
  MeterTotals totals = m_totals;
  totals.wall_s += seconds_since(m_start);
  return totals;
}

MeterTotals Meter::totals() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return totals_locked();
}

LimitHit Meter::check() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  const MeterTotals totals = totals_locked();
  if (m_limits.max_tokens > 0 && (totals.tokens.total() >= m_limits.max_tokens || totals.refused_calls > 0))
    return LimitHit::tokens;
  if (m_limits.max_cost_usd > 0 && totals.cost_usd >= m_limits.max_cost_usd) return LimitHit::cost;
  if (m_limits.max_wall_s > 0 && totals.wall_s >= m_limits.max_wall_s) return LimitHit::wall_time;
  return LimitHit::none;
}

std::optional<std::string> Meter::admit(std::uint64_t prompt_tokens) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_limits.max_tokens == 0) return std::nullopt;
  const std::uint64_t used = m_totals.tokens.total();
  const std::uint64_t left = used >= m_limits.max_tokens ? 0 : m_limits.max_tokens - used;
  if (prompt_tokens <= left) return std::nullopt;
  ++m_totals.refused_calls;
  return "not sent: its prompt alone (about " + std::to_string(prompt_tokens) +
         " tokens) would cross the run's token budget (" + std::to_string(left) + " of " +
         std::to_string(m_limits.max_tokens) + " tokens left)";
}

void Meter::charge(const Usage& usage, double cost_usd, int unknown_cost_attempts, bool estimated) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_totals.tokens += usage;
    m_totals.cost_usd += cost_usd;
    m_totals.calls += 1;
    m_totals.estimated_calls += estimated ? 1 : 0;
    m_totals.unknown_cost_attempts += static_cast<std::uint64_t>(std::max(0, unknown_cost_attempts));
  }
  journal_totals();
}

void Meter::charge_unknown(int unknown_cost_attempts) {
  if (unknown_cost_attempts <= 0) return;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_totals.unknown_cost_attempts += static_cast<std::uint64_t>(unknown_cost_attempts);
  }
  journal_totals();
}

void Meter::journal_totals() {
  // The sink appends to the journal (an fsync), so it runs outside m_mutex and does not hold up limit checks;
  // the totals are taken under m_sink_mutex, after any earlier append, so the journal's last tick is the newest.
  std::lock_guard<std::mutex> order(m_sink_mutex);
  std::function<void(const MeterTotals&)> sink;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    sink = m_sink;
  }
  if (sink) sink(totals());
}

void Meter::set_journal_sink(std::function<void(const MeterTotals&)> sink) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_sink = std::move(sink);
}

void Meter::restore(const MeterTotals& totals) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_totals = totals;
  m_start = std::chrono::steady_clock::now();
}

void Meter::reset() {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_totals = MeterTotals{};
  m_start = std::chrono::steady_clock::now();
}

Meter& process_meter() {
  static Meter meter;
  return meter;
}

}  // namespace evoteam
