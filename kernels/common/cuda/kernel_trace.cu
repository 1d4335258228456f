#include "kernel_trace.hpp"

#include <cupti.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace evoteam_harness::cuda {
namespace {

struct KernelRecord {
  std::string name;
  std::uint64_t start = 0, end = 0;
};

// CUPTI delivers records through C callbacks on its own thread.
std::mutex g_mutex;
std::vector<KernelRecord> g_kernels;

constexpr std::size_t k_buffer_bytes = 8u << 20;
constexpr int k_warmup_windows = 2;  // the timing loop's first two samples per side are warm-up

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, k_buffer_bytes));
  *size = *buffer == nullptr ? 0 : k_buffer_bytes;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid) {
  CUpti_Activity* record = nullptr;
  std::lock_guard<std::mutex> lock(g_mutex);
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    g_kernels.push_back({kernel->name == nullptr ? "?" : kernel->name, kernel->start, kernel->end});
  }
  std::free(buffer);
}

std::uint64_t now() {
  std::uint64_t timestamp = 0;
  cuptiGetTimestamp(&timestamp);
  return timestamp;
}

}  // namespace

void KernelTrace::start() {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_kernels.clear();
  }
  m_windows.clear();
  m_available = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) == CUPTI_SUCCESS &&
                cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS;
}

void KernelTrace::begin_window(const char* side) {
  if (m_available) m_windows.push_back({side, now(), 0});
}

void KernelTrace::end_window() {
  if (m_available && !m_windows.empty()) m_windows.back().end = now();
}

TraceVerdict KernelTrace::finish() {
  TraceVerdict verdict;
  verdict.available = m_available;
  if (!m_available) return verdict;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  std::lock_guard<std::mutex> lock(g_mutex);
  // Per window, the names of the kernels that ran inside it; per side, every window must match the first.
  std::vector<std::vector<std::string>> inside(m_windows.size());
  for (const KernelRecord& kernel : g_kernels) {
    if (kernel.name.rfind("evoteam_", 0) == 0) continue;
    ++verdict.kernels;
    bool placed = false;
    for (std::size_t w = 0; w < m_windows.size() && !placed; ++w)
      if (kernel.start >= m_windows[w].begin && kernel.end <= m_windows[w].end) {
        inside[w].push_back(kernel.name);
        placed = true;
      }
    if (!placed) {
      ++verdict.outside_windows;
      if (verdict.evidence.empty()) verdict.evidence = "kernel " + kernel.name + " ran outside every measured window";
    }
  }
  // The candidate's samples after warm-up must all run the same kernels (a library baseline may initialise lazily).
  std::map<std::string, std::vector<std::string>> first_by_side;
  std::map<std::string, int> seen_by_side;
  for (std::size_t w = 0; w < m_windows.size(); ++w) {
    std::sort(inside[w].begin(), inside[w].end());
    if (m_windows[w].side != "candidate" || ++seen_by_side[m_windows[w].side] <= k_warmup_windows) continue;
    auto [entry, fresh] = first_by_side.emplace(m_windows[w].side, inside[w]);
    if (!fresh && entry->second != inside[w] && verdict.evidence.empty())
      verdict.evidence = "candidate sample " + std::to_string(w) + " ran " + std::to_string(inside[w].size()) +
                         " kernels where its first sample ran " + std::to_string(entry->second.size());
    if (!fresh && entry->second != inside[w]) verdict.side_work = true;
  }
  verdict.side_work = verdict.side_work || verdict.outside_windows > 0;
  return verdict;
}

}  // namespace evoteam_harness::cuda
