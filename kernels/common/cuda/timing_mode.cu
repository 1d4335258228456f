// Timing on the GPU. Per sample: the side's outputs poisoned (a copy from a poisoned device image), the L2
// flushed (a buffer twice its size read), then CUDA events around the implementation's launches on the harness's
// stream; the stop event is waited for with the call deadline before it is read. Candidate and baseline
// alternate in ABBA order over rotating input sets with different data; every timed output is re-checked
// against its reference; after the rotation each side is timed once on fresh sets it has never seen (results
// reused across calls show up there). Kernels outside the measured windows (CUPTI) and host threads started during
// timing are side work. Samples taken while NVML reports a power or thermal slowdown are dropped. Clocks and device
// settings are never changed; persisting-L2 state is reset before timing.
#include <cuda_runtime.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "../compare.hpp"
#include "../harness_abi.h"
#include "../stop_rule.hpp"
#include "cuda_check.hpp"
#include "kernel_trace.hpp"
#include "sm_clock.hpp"
#include "l2_flush.hpp"
#include "plan_modes.hpp"
#include "rank_group.hpp"

namespace evoteam_harness::cuda {
namespace {

int thread_count() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  return -1;
}

struct RotationSet {
  const TrialPlan* trial = nullptr;
  std::vector<Bytes> host;  // pristine inputs
  DeviceSet device;         // the shared inputs (outputs unused)
  std::vector<Bytes> references;
};

struct Side {
  const Implementation* implementation = nullptr;
  const char* name = "candidate";
  std::vector<DeviceSet> outputs;           // per set: this side's output buffers
  std::vector<std::vector<void*>> pointers;  // per set: the shared inputs and this side's outputs
  NoiseTracker tracker;
  std::vector<double> samples;
  std::size_t next_set = 0;
  int poison = 0;
};

RotationSet make_set(const Plan& plan, int trial_id) {
  RotationSet set;
  set.trial = &plan.trial(trial_id);
  set.host = host_tensors(plan, *set.trial, 0);
  set.device = upload(plan, set.host);
  set.references = load_references(plan, *set.trial);
  return set;
}

// Output buffers of one side for one set, poisoned with the side's current pattern.
void attach_outputs(const Plan& plan, Side& side, const RotationSet& set) {
  std::vector<Bytes> host = host_tensors(plan, *set.trial, side.poison);
  DeviceSet outputs;
  std::vector<void*> pointers = set.device.pointers;
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    if (!plan.tensors[t].is_output) {
      outputs.buffers.emplace_back();
      outputs.pointers.push_back(nullptr);
      continue;
    }
    outputs.buffers.emplace_back(host[t].size(), plan.guard_bytes, plan.tensors[t].name.c_str());
    EVOTEAM_CUDA_CHECK(cudaMemcpy(outputs.buffers.back().data(), host[t].data(), host[t].size(), cudaMemcpyHostToDevice));
    outputs.pointers.push_back(outputs.buffers.back().data());
    pointers[t] = outputs.buffers.back().data();
  }
  side.outputs.push_back(std::move(outputs));
  side.pointers.push_back(std::move(pointers));
}

void poison(const Plan& plan, const RotationSet& set, Side& side, std::size_t index, int pattern, cudaStream_t stream) {
  const WorkloadPlan& workload = plan.workloads[set.trial->workload];
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    if (!plan.tensors[t].is_output) continue;
    Bytes image(tensor_bytes(plan, workload, t));
    fill_poison(image.data(), workload.elements[t], plan.tensors[t].dtype, pattern);
    EVOTEAM_CUDA_CHECK(cudaMemcpyAsync(side.outputs[index].buffers[t].data(), image.data(), image.size(), cudaMemcpyHostToDevice, stream));
    EVOTEAM_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
}

struct Timer {
  cudaEvent_t start = nullptr, stop = nullptr;
  Timer() {
    EVOTEAM_CUDA_CHECK(cudaEventCreate(&start));
    EVOTEAM_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~Timer() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
};

// One sample, as every rank of a group agrees on it: the maximum of the ranks' times (the group is as slow as
// its slowest rank), whether any rank's recheck failed, whether any GPU was throttled, and the longest elapsed
// time since `epoch` (so loops bounded by time end on the same round everywhere). One process: its own values.
struct Sample {
  bool ok = true;
  double sample_s = 0;
  bool throttled = false;
  double elapsed_s = 0;
};

// One sample on the side's next set. A recheck failure is emitted here (by the rank that saw it).
Sample take_sample(const Plan& plan, std::vector<RotationSet>& sets, Side& side, L2Flusher& flusher, Timer& timer,
                   KernelTrace& trace, const SmClock& clock, cudaStream_t stream, RankGroup* ranks, double epoch) {
  const std::size_t index = side.next_set;
  side.next_set = (side.next_set + 1) % sets.size();
  RotationSet& set = sets[index];
  const int pattern = side.poison++;
  poison(plan, set, side, index, pattern, stream);
  flusher.flush(stream);
  set_phase(side.implementation->phase);
  // The window holds the harness's collectives of a group too (the same ones in every sample), so none of
  // its kernels runs outside every window; the timed events hold the implementation's launches alone.
  trace.begin_window(side.name);
  if (ranks != nullptr) {
    // All ranks start together: a host-side meeting (the flush done everywhere), then a collective right
    // before the start event, so no rank's clock runs while it waits for a late peer's launch.
    ranks->barrier(stream, group_deadline_s(plan.call_deadline_s));
    ranks->enqueue_barrier(stream);
    set_phase(side.implementation->phase);
  }
  EVOTEAM_CUDA_CHECK(cudaEventRecord(timer.start, stream));
  const int returned = evoteam_glue_call(side.implementation->entry, side.pointers[index].data(),
                                         plan.workloads[set.trial->workload].axes.data(), stream);
  EVOTEAM_CUDA_CHECK(cudaEventRecord(timer.stop, stream));
  check_launch(returned, side.implementation->phase);
  wait_with_deadline(stream, plan.call_deadline_s, set.trial->id, side.implementation->phase);
  set_phase("harness");
  Sample sample;
  float ms = 0;
  EVOTEAM_CUDA_CHECK(cudaEventElapsedTime(&ms, timer.start, timer.stop));
  sample.sample_s = static_cast<double>(ms) * 1e-3;
  sample.throttled = clock.throttled();
  // The timed outputs must still be right: a sample that skipped work cannot count.
  JsonLine line;
  std::string status = check_guards(plan, side.outputs[index], line);
  if (status == "ok") status = compare_outputs(plan, *set.trial, side.outputs[index], set.references, pattern, line);
  if (status != "ok") {
    line.field("ev", "recheck_fail").field("side", side.name).field("status", status);
    line.field("trial", set.trial->id).field("workload", set.trial->workload).field("sample", static_cast<std::int64_t>(side.samples.size()));
    emit(line);
    sample.ok = false;
  }
  sample.elapsed_s = now_s() - epoch;
  if (ranks != nullptr) {
    std::vector<double> values = {sample.sample_s, sample.ok ? 0.0 : 1.0, sample.throttled ? 1.0 : 0.0, sample.elapsed_s};
    ranks->max_over_ranks(values, stream, group_deadline_s(plan.call_deadline_s));
    sample = {values[1] == 0, values[0], values[2] > 0, values[3]};
  }
  trace.end_window();
  return sample;
}

bool time_workload(const CudaContext& context, const TimingWorkloadPlan& entry, L2Flusher& flusher, KernelTrace& trace,
                   const SmClock& clock) {
  const Plan& plan = context.plan;
  cudaStream_t stream = context.stream;
  RankGroup* ranks = context.ranks;
  if (ranks != nullptr) ranks->use_workload(entry.workload, stream);
  const double setup_begin = now_s();
  std::vector<RotationSet> sets, probes;
  for (int id : entry.sets) sets.push_back(make_set(plan, id));
  for (int id : entry.probes) probes.push_back(make_set(plan, id));
  Side candidate, baseline, candidate_probe, baseline_probe;
  candidate.implementation = candidate_probe.implementation = &context.candidate;
  baseline.implementation = baseline_probe.implementation = &context.baseline;
  baseline.name = baseline_probe.name = "baseline";
  baseline.poison = 1;
  for (Side* side : {&candidate, &baseline})
    for (const RotationSet& set : sets) attach_outputs(plan, *side, set);
  for (Side* side : {&candidate_probe, &baseline_probe})
    for (const RotationSet& set : probes) attach_outputs(plan, *side, set);
  // A vendor's host-side scheduling belongs to setup, never to a sample.
  const std::pair<Side*, const std::vector<RotationSet>*> planned[] = {
      {&candidate, &sets}, {&baseline, &sets}, {&candidate_probe, &probes}, {&baseline_probe, &probes}};
  for (const auto& [side, side_sets] : planned)
    for (std::size_t index = 0; index < side_sets->size(); ++index)
      plan_for(*side->implementation, plan, *(*side_sets)[index].trial, side->pointers[index].data(), stream);
  const double setup_s = now_s() - setup_begin;
  const int threads_before = thread_count();
  Timer timer;
  trace.start();
  const double begin = now_s();
  for (int round = 0, warm = 0; warm == 0 || round < 2; ++round)
    for (Side* side : {&candidate, &baseline}) {
      const Sample sample = take_sample(plan, sets, *side, flusher, timer, trace, clock, stream, ranks, begin);
      if (!sample.ok) return false;
      warm = sample.elapsed_s >= plan.warmup_s ? 1 : 0;
    }
  const double measure_begin = now_s();
  double timed = 0;
  double elapsed = 0;
  std::int64_t throttled = 0;
  std::vector<double> clocks_mhz;
  StopReason reason = StopReason::none;
  for (std::size_t pair = 0; reason == StopReason::none; ++pair) {
    Side* order[2] = {&candidate, &baseline};
    if (pair % 2 == 1) std::swap(order[0], order[1]);
    for (Side* side : order) {
      const Sample sample = take_sample(plan, sets, *side, flusher, timer, trace, clock, stream, ranks, measure_begin);
      if (!sample.ok) return false;
      elapsed = sample.elapsed_s;
      timed += sample.sample_s;
      // A sample taken while the GPU slowed itself down measures the cooling, not the kernel.
      if (sample.throttled) {
        ++throttled;
        continue;
      }
      if (clock.readable()) clocks_mhz.push_back(static_cast<double>(clock.mhz()));
      side->samples.push_back(sample.sample_s);
      side->tracker.add(sample.sample_s);
    }
    reason = should_stop(candidate.tracker, baseline.tracker, plan.stop, timed, elapsed);
  }
  const double measured_s = now_s() - measure_begin;
  for (std::size_t index = 0; index < probes.size(); ++index) {
    Side* order[2] = {&candidate_probe, &baseline_probe};
    if (index % 2 == 1) std::swap(order[0], order[1]);
    for (Side* side : order) {
      const Sample sample = take_sample(plan, probes, *side, flusher, timer, trace, clock, stream, ranks, measure_begin);
      if (!sample.ok) return false;
      side->samples.push_back(sample.sample_s);
    }
  }
  bool mutated_here = false;
  for (const RotationSet& set : sets) {
    const auto [mutated, first] = mutated_input(plan, *set.trial, set.device, set.host);
    if (mutated < plan.tensors.size()) {
      emit(JsonLine().field("ev", "input_mutated").field("trial", set.trial->id).field("workload", set.trial->workload)
               .field("tensor", plan.tensors[mutated].name).field("first_bad", first));
      mutated_here = true;
      break;
    }
  }
  // Every rank stops after this workload when any rank's inputs changed (the agreement in a window of its own,
  // so its kernel is not taken for side work).
  if (ranks != nullptr) {
    trace.begin_window("harness");
    mutated_here = ranks->any(mutated_here, stream, group_deadline_s(plan.call_deadline_s));
    trace.end_window();
  }
  if (mutated_here) return false;
  const int threads_after = thread_count();
  JsonLine line;
  line.field("ev", "timing").field("workload", entry.workload).field("stop", to_string(reason)).field("clock", "cuda_events");
  line.array("candidate", candidate.samples).array("baseline", baseline.samples);
  line.array("candidate_wall", candidate.samples).array("baseline_wall", baseline.samples);
  line.array("candidate_probe", candidate_probe.samples).array("baseline_probe", baseline_probe.samples);
  line.field("batch_candidate", 1).field("batch_baseline", 1);
  line.field("sets", static_cast<std::int64_t>(sets.size())).field("elapsed_s", now_s() - begin).field("timed_s", timed);
  line.field("setup_s", setup_s).field("warmup_s", measure_begin - begin).field("measured_s", measured_s);
  line.field("flush_bytes", static_cast<std::int64_t>(flusher.bytes())).field("throttled_samples_dropped", throttled);
  line.field("sm_clock", clock.readable() ? "nvml" : "not readable");
  if (!clocks_mhz.empty()) {
    std::sort(clocks_mhz.begin(), clocks_mhz.end());
    line.field("sm_clock_mhz_min", clocks_mhz.front()).field("sm_clock_mhz_median", clocks_mhz[clocks_mhz.size() / 2]);
    line.field("sm_clock_mhz_max", clocks_mhz.back());
  }
  line.field("threads_before", threads_before).field("threads_after", threads_after);
  // Kernels outside the measured windows, or a different set of kernels in some sample, come from CUPTI's activity
  // records where it can be enabled; new host threads are checked always.
  const TraceVerdict traced = trace.finish();
  line.field("side_work", threads_after > threads_before || traced.side_work);
  line.field("side_work_check", traced.available ? "cupti kernel activity and host threads" : "host threads only (CUPTI unavailable)");
  if (traced.available) line.field("kernels_traced", traced.kernels).field("kernels_outside_windows", traced.outside_windows);
  if (!traced.evidence.empty()) line.field("side_work_evidence", traced.evidence);
  emit(line);
  return true;
}

}  // namespace

int run_timing(const CudaContext& context) {
  if (context.candidate.entry == nullptr || context.baseline.entry == nullptr)
    throw std::runtime_error("timing needs --candidate and --baseline");
  // Persisting-L2 lines left by an earlier process would favour whoever runs second.
  EVOTEAM_CUDA_CHECK(cudaCtxResetPersistingL2Cache());
  int device = 0;
  EVOTEAM_CUDA_CHECK(cudaGetDevice(&device));
  L2Flusher flusher(device);
  SmClock clock;
  clock.open(device);
  for (const TimingWorkloadPlan& entry : context.plan.timing) {
    KernelTrace trace;  // one per workload: its verdict goes into that workload's record
    if (!time_workload(context, entry, flusher, trace, clock)) break;
  }
  return 0;
}

}  // namespace evoteam_harness::cuda
