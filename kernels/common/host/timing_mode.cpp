// Timing and profile modes. Candidate and baseline are measured interleaved in this one process (ABBA order
// per pair of samples) over rotating input sets with different data; every timed output is poisoned before and
// re-checked against its reference after the sample; CPU time of other threads during and between samples is
// watched for work moved off the measured call. After the rotation, each side is timed once on a few fresh
// sets it has never seen: an implementation that reuses results across calls is fast on the rotation and slow
// there. The stack below the harness's frame is wiped before every sample, however deep, so nothing survives there
// between calls; the inputs are read-only once a set is made, and compared with pristine copies at the end. The sample
// time is the calling thread's CPU time by default: on a shared machine wall time also counts the time the thread was
// preempted, CPU time does not (and the candidate cannot sleep, block or use other threads, so it misses none of its
// work). Wall times are recorded alongside. A run started beside correctness prepares its sets first and
// times nothing until the evaluator releases it (Plan::release_file).
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "../compare.hpp"
#include "../harness_abi.h"
#include "../stop_rule.hpp"
#include "faults.hpp"
#include "harness.hpp"
#include "stack_scrub.hpp"

namespace evoteam_harness {
namespace {

double cpu_clock(clockid_t clock) {
  timespec time{};
  clock_gettime(clock, &time);
  return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_nsec) * 1e-9;
}

int thread_count() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  return -1;
}

struct Side {
  const Implementation* implementation = nullptr;
  const char* name = "candidate";
  std::vector<std::vector<GuardedBuffer>> outputs;  // per set
  std::vector<std::vector<void*>> pointers;         // per set: the shared inputs and this side's outputs
  // Per set: this side's last outputs that passed the full check (empty until one has). Inputs and reference
  // are fixed per set, so outputs bit-identical to verified ones are verified too: the recheck after each sample
  // is then a memcmp, and the full comparison runs only when the bits change.
  std::vector<std::vector<std::vector<unsigned char>>> verified;
  NoiseTracker tracker;
  std::vector<double> samples;
  std::vector<double> wall_samples;
  std::size_t next_set = 0;
  int batch = 1;
  int poison = 0;
  double other_threads_cpu_s = 0;  // CPU time of other threads inside this side's windows
};

struct RotationSet {
  const TrialPlan* trial = nullptr;
  TrialBuffers inputs;  // outputs in here are unused
  std::vector<GuardedBuffer> references;
  std::vector<std::vector<unsigned char>> pristine;  // copies of the inputs
};

RotationSet make_set(const Plan& plan, int trial_id, unsigned variant) {
  RotationSet set;
  set.trial = &plan.trial(trial_id);
  set.inputs = make_trial_buffers(plan, *set.trial, 0, variant);
  set.references = load_references(plan, *set.trial);
  set.pristine.resize(plan.tensors.size());
  for (std::size_t t = 0; t < plan.tensors.size(); ++t)
    if (!plan.tensors[t].is_output) {
      const auto* bytes = static_cast<const unsigned char*>(set.inputs.pointers[t]);
      set.pristine[t].assign(bytes, bytes + set.inputs.tensors[t].bytes());
    }
  make_inputs_read_only(plan, set.inputs);
  return set;
}

// True when every guard is intact and every compared output holds exactly the bits of `verified`.
bool matches_verified(const Plan& plan, const std::vector<GuardedBuffer>& outputs,
                      const std::vector<std::vector<unsigned char>>& verified) {
  if (verified.empty()) return false;
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    if (outputs[t].data() == nullptr) continue;
    if (outputs[t].check_guards().damaged) return false;
    if (!plan.tensors[t].is_compared()) continue;
    const std::size_t bytes = outputs[t].bytes();
    if (verified[t].size() != bytes || std::memcmp(outputs[t].data(), verified[t].data(), bytes) != 0) return false;
  }
  return true;
}

void remember_verified(const Plan& plan, const std::vector<GuardedBuffer>& outputs,
                       std::vector<std::vector<unsigned char>>& verified) {
  verified.assign(plan.tensors.size(), {});
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    if (outputs[t].data() == nullptr || !plan.tensors[t].is_compared()) continue;
    const auto* bytes = static_cast<const unsigned char*>(outputs[t].data());
    verified[t].assign(bytes, bytes + outputs[t].bytes());
  }
}

// One sample: `batch` calls on consecutive sets. Returns false after emitting a recheck failure.
bool take_sample(const Plan& plan, std::vector<RotationSet>& sets, Side& side, double* sample_s, double* wall_s) {
  std::vector<std::size_t> used;
  const int poison = side.poison++;
  for (int i = 0; i < side.batch; ++i) {
    const std::size_t index = (side.next_set + static_cast<std::size_t>(i)) % sets.size();
    used.push_back(index);
    poison_outputs(plan, *sets[index].trial, side.pointers[index], poison);
  }
  side.next_set = (side.next_set + static_cast<std::size_t>(side.batch)) % sets.size();
  const WorkloadPlan& workload = plan.workloads[sets[used[0]].trial->workload];
  scrub_stack();
  set_activity(sets[used[0]].trial->id, side.implementation->phase);
  arm_watchdog(plan.call_deadline_s * side.batch);
  const double thread_start = cpu_clock(CLOCK_THREAD_CPUTIME_ID);
  const double process_start = cpu_clock(CLOCK_PROCESS_CPUTIME_ID);
  const double start = now_s();
  for (std::size_t index : used)
    evoteam_glue_call(side.implementation->entry, side.pointers[index].data(), workload.axes.data(), nullptr);
  const double wall = now_s() - start;
  const double process_cpu = cpu_clock(CLOCK_PROCESS_CPUTIME_ID) - process_start;
  const double thread_cpu = cpu_clock(CLOCK_THREAD_CPUTIME_ID) - thread_start;
  disarm_watchdog();
  set_activity(-1, "harness");
  side.other_threads_cpu_s += std::max(0.0, process_cpu - thread_cpu);
  *sample_s = (plan.thread_cpu_clock ? thread_cpu : wall) / side.batch;
  *wall_s = wall / side.batch;
  for (std::size_t index : used) {
    if (matches_verified(plan, side.outputs[index], side.verified[index])) continue;
    std::vector<GuardedBuffer>& outputs = side.outputs[index];
    JsonLine line;
    std::string status = check_outputs(plan, *sets[index].trial, outputs, sets[index].references, poison, line);
    if (status != "ok") {
      line.field("ev", "recheck_fail").field("side", side.name).field("status", status);
      line.field("trial", sets[index].trial->id).field("workload", sets[index].trial->workload);
      line.field("sample", static_cast<std::int64_t>(side.samples.size()));
      emit(line);
      return false;
    }
    remember_verified(plan, outputs, side.verified[index]);
  }
  return true;
}

// One workload's rotation and probe sets with both sides' outputs. It is made one set at a time, so that a run
// preparing ahead stops the moment the evaluator's word arrives.
struct PreparedWorkload {
  PreparedWorkload(const HarnessContext& context, const TimingWorkloadPlan& plan_entry) : entry(&plan_entry) {
    candidate.implementation = &context.candidate;
    baseline.implementation = &context.baseline;
    baseline.name = "baseline";
    baseline.poison = 1;
    candidate_probe.implementation = &context.candidate;
    baseline_probe.implementation = &context.baseline;
    baseline_probe.name = "baseline";
  }
  bool complete() const { return sets.size() == entry->sets.size() && probes.size() == entry->probes.size(); }

  const TimingWorkloadPlan* entry;
  std::vector<RotationSet> sets;
  std::vector<RotationSet> probes;
  Side candidate, baseline, candidate_probe, baseline_probe;
  double setup_s = 0;
  double ahead_s = 0;  // the part of setup_s spent before the release, beside correctness
};

void add_outputs(const Plan& plan, Side& side, const RotationSet& set, unsigned variant) {
  side.outputs.push_back(make_outputs(plan, *set.trial, 0, variant));
  std::vector<void*> pointers = set.inputs.pointers;
  for (std::size_t t = 0; t < plan.tensors.size(); ++t)
    if (plan.tensors[t].is_output) pointers[t] = side.outputs.back()[t].data();
  side.pointers.push_back(pointers);
  side.verified.emplace_back();
}

// Makes the workload's next set (the rotation sets first, then the probes) and both sides' outputs for it.
void prepare_next_set(const Plan& plan, PreparedWorkload& prepared) {
  const double begin = now_s();
  const bool rotation = prepared.sets.size() < prepared.entry->sets.size();
  const unsigned variant = static_cast<unsigned>(prepared.sets.size() + prepared.probes.size());
  std::vector<RotationSet>& group = rotation ? prepared.sets : prepared.probes;
  const int trial =
      rotation ? prepared.entry->sets[prepared.sets.size()] : prepared.entry->probes[prepared.probes.size()];
  group.push_back(make_set(plan, trial, variant));
  // Both sides get the same layout per set, so neither is favoured by where its outputs sit.
  add_outputs(plan, rotation ? prepared.candidate : prepared.candidate_probe, group.back(), variant);
  add_outputs(plan, rotation ? prepared.baseline : prepared.baseline_probe, group.back(), variant);
  prepared.setup_s += now_s() - begin;
}

// Returns false when a recheck failed (its record is emitted) and timing must stop.
bool time_workload(const HarnessContext& context, PreparedWorkload& prepared) {
  const TimingWorkloadPlan& entry = *prepared.entry;
  const Plan& plan = context.plan;
  std::vector<RotationSet>& sets = prepared.sets;
  std::vector<RotationSet>& probes = prepared.probes;
  Side& candidate = prepared.candidate;
  Side& baseline = prepared.baseline;
  Side& candidate_probe = prepared.candidate_probe;
  Side& baseline_probe = prepared.baseline_probe;
  const int threads_before = thread_count();
  const double process_cpu_start = cpu_clock(CLOCK_PROCESS_CPUTIME_ID);
  const double thread_cpu_start = cpu_clock(CLOCK_THREAD_CPUTIME_ID);
  const double begin = now_s();
  // Warm-up by time, which also sizes each side's batch so a sample lasts at least min_sample_s.
  double first[2] = {0, 0};
  int index = 0;
  for (Side* side : {&candidate, &baseline}) {
    double wall = 0;
    if (!take_sample(plan, sets, *side, &first[index++], &wall)) return false;
    const double per_call = std::max(wall, 1e-7);
    const double wanted = std::ceil(plan.min_sample_s / per_call);
    side->batch = static_cast<int>(std::min<double>(std::max(1.0, wanted), static_cast<double>(sets.size())));
  }
  for (int round = 0; now_s() - begin < plan.warmup_s || round < 2; ++round) {
    double ignored = 0, ignored_wall = 0;
    if (!take_sample(plan, sets, candidate, &ignored, &ignored_wall) ||
        !take_sample(plan, sets, baseline, &ignored, &ignored_wall))
      return false;
  }
  const double measure_begin = now_s();
  const double warmup_s = measure_begin - begin;
  double timed = 0;
  StopReason reason = StopReason::none;
  for (std::size_t pair = 0; reason == StopReason::none; ++pair) {
    Side* order[2] = {&candidate, &baseline};
    if (pair % 2 == 1) std::swap(order[0], order[1]);
    for (Side* side : order) {
      double sample = 0, wall = 0;
      if (!take_sample(plan, sets, *side, &sample, &wall)) return false;
      side->samples.push_back(sample);
      side->wall_samples.push_back(wall);
      side->tracker.add(sample);
      timed += sample * side->batch;
    }
    reason = should_stop(candidate.tracker, baseline.tracker, plan.stop, timed, now_s() - measure_begin);
  }
  const double measured_s = now_s() - measure_begin;
  // Fresh sets, once each: timing that depends on having seen the inputs before shows up here.
  // Which side goes first alternates, so neither always meets the colder caches.
  for (std::size_t index = 0; index < probes.size(); ++index) {
    Side* order[2] = {&candidate_probe, &baseline_probe};
    if (index % 2 == 1) std::swap(order[0], order[1]);
    for (Side* side : order) {
      double sample = 0, wall = 0;
      if (!take_sample(plan, probes, *side, &sample, &wall)) return false;
      side->samples.push_back(sample);
    }
  }
  for (const RotationSet& set : sets)
    for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
      if (plan.tensors[t].is_output) continue;
      const std::int64_t first =
          first_difference(set.inputs.pointers[t], set.pristine[t].data(),
                           plan.workloads[set.trial->workload].elements[t], plan.tensors[t].dtype);
      if (first >= 0) {
        emit(JsonLine()
                 .field("ev", "input_mutated")
                 .field("trial", set.trial->id)
                 .field("workload", set.trial->workload)
                 .field("tensor", plan.tensors[t].name)
                 .field("first_bad", first));
        return false;
      }
    }
  const double elapsed = now_s() - begin;
  const double other_threads = (cpu_clock(CLOCK_PROCESS_CPUTIME_ID) - process_cpu_start) -
                               (cpu_clock(CLOCK_THREAD_CPUTIME_ID) - thread_cpu_start);
  const int threads_after = thread_count();
  JsonLine line;
  line.field("ev", "timing").field("workload", entry.workload).field("stop", to_string(reason));
  line.field("clock", plan.thread_cpu_clock ? "thread_cpu" : "wall");
  line.array("candidate", candidate.samples).array("baseline", baseline.samples);
  line.array("candidate_wall", candidate.wall_samples).array("baseline_wall", baseline.wall_samples);
  line.array("candidate_probe", candidate_probe.samples).array("baseline_probe", baseline_probe.samples);
  line.field("batch_candidate", candidate.batch).field("batch_baseline", baseline.batch);
  line.field("sets", static_cast<std::int64_t>(sets.size())).field("elapsed_s", elapsed).field("timed_s", timed);
  line.field("setup_s", prepared.setup_s).field("setup_ahead_s", prepared.ahead_s);
  line.field("warmup_s", warmup_s).field("measured_s", measured_s);
  line.field("other_threads_cpu_s", other_threads).field("candidate_window_other_cpu_s", candidate.other_threads_cpu_s);
  line.field("threads_before", threads_before).field("threads_after", threads_after);
  const double candidate_other = candidate.other_threads_cpu_s + candidate_probe.other_threads_cpu_s;
  const bool side_work = threads_after > threads_before || candidate_other > plan.side_work_fraction * timed + 1e-3 ||
                         other_threads > plan.side_work_fraction * elapsed + 5e-3;
  line.field("side_work", side_work);
  emit(line);
  return true;
}

// Stays on the CPU it started on: a migration mid-measurement starts the next sample with cold private caches.
// Best effort (a cgroup may forbid it); the measurement is valid either way.
void pin_to_current_cpu() {
  const int cpu = sched_getcpu();
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}

// The evaluator's word in the release file: nothing yet, "go" or "stop". It writes the file by rename, so a
// word is never seen half-written.
enum class Word { none, go, stop };

Word read_word(const std::string& file) {
  std::ifstream in(file);
  std::string word;
  if (!(in >> word)) return Word::none;
  return word == "go" ? Word::go : Word::stop;
}

// Waits for the word until `deadline` (now_s() time), polling each millisecond: a late start costs at most that.
// A harness whose evaluator died (it was re-parented: its parent is no longer `parent`) gives up at once rather
// than wait out the deadline.
Word wait_for_word(const std::string& file, double deadline, pid_t parent) {
  while (true) {
    const Word word = read_word(file);
    if (word != Word::none || now_s() >= deadline || getppid() != parent) return word;
    timespec pause{0, 1'000'000};
    nanosleep(&pause, nullptr);
  }
}

using PreparedWorkloads = std::vector<std::unique_ptr<PreparedWorkload>>;

PreparedWorkload& workload_at(const HarnessContext& context, PreparedWorkloads& prepared, std::size_t index) {
  if (!prepared[index]) prepared[index] = std::make_unique<PreparedWorkload>(context, context.plan.timing[index]);
  return *prepared[index];
}

// A run started beside correctness: prepares sets ahead (no candidate code runs) while the evaluator has not
// decided, then waits for its word and records it. True when the word is "go": nothing is timed before it.
bool prepare_until_released(const HarnessContext& context, PreparedWorkloads& prepared) {
  const Plan& plan = context.plan;
  const double begin = now_s();
  for (std::size_t index = 0;
       index < plan.timing.size() && read_word(plan.release_file) == Word::none && getppid() == context.parent;) {
    PreparedWorkload& next = workload_at(context, prepared, index);
    if (next.complete()) {
      ++index;
      continue;
    }
    const double before = next.setup_s;
    prepare_next_set(plan, next);
    next.ahead_s += next.setup_s - before;
  }
  const Word word = wait_for_word(plan.release_file, begin + plan.release_wait_s, context.parent);
  emit(JsonLine()
           .field("ev", "release")
           .field("word", word == Word::go ? "go" : (word == Word::stop ? "stop" : "none"))
           .field("waited_s", now_s() - begin));
  return word == Word::go;
}

}  // namespace

int run_timing(const HarnessContext& context) {
  if (context.candidate.entry == nullptr || context.baseline.entry == nullptr)
    throw std::runtime_error("timing needs --candidate and --baseline");
  const Plan& plan = context.plan;
  pin_to_current_cpu();
  PreparedWorkloads prepared(plan.timing.size());
  if (!plan.release_file.empty() && !prepare_until_released(context, prepared)) return 0;
  for (std::size_t index = 0; index < plan.timing.size(); ++index) {
    PreparedWorkload& next = workload_at(context, prepared, index);
    while (!next.complete()) prepare_next_set(plan, next);
    if (!time_workload(context, next)) break;
    prepared[index].reset();  // its memory serves the next workload's sets
  }
  return 0;
}

int run_profile(const HarnessContext& context) {
  const Plan& plan = context.plan;
  const TrialPlan& trial = plan.trial(plan.profile_trial);
  TrialBuffers buffers = make_trial_buffers(plan, trial, 0, 0);
  std::vector<double> samples;
  const double begin = now_s();
  while (samples.size() < 3 || now_s() - begin < plan.profile_time_s)
    samples.push_back(call_implementation(context.candidate, plan, trial, buffers.pointers, trial.deadline_s));
  emit(JsonLine().field("ev", "profile").field("trial", trial.id).array("samples", samples));
  return 0;
}

}  // namespace evoteam_harness
