#pragma once
// Internals shared by the host harness's modes (harness_main.cpp: reference, correctness; timing_mode.cpp:
// timing, profile).
#include <sys/types.h>

#include <string>
#include <vector>

#include "../plan.hpp"
#include "../record.hpp"
#include "guarded_buffer.hpp"

namespace evoteam_harness {

struct Implementation {
  void* entry = nullptr;  // null when not loaded
  const char* phase = "candidate";
};

struct HarnessContext {
  Plan plan;
  Implementation candidate;
  Implementation baseline;
  Implementation reference;
  pid_t parent = 0;  // the process that started this one (its evaluator, or the sandbox's init), read first thing
};

// The buffers of one trial: every tensor its own guarded allocation. Inputs are generated; outputs poisoned.
struct TrialBuffers {
  std::vector<GuardedBuffer> tensors;
  std::vector<void*> pointers;
};

// `variant` picks the layout (guarded_buffer.hpp): the same variant gives the same addresses modulo 4 KiB.
// Throws std::runtime_error when a hook is unknown.
TrialBuffers make_trial_buffers(const Plan& plan, const TrialPlan& trial, int poison, unsigned variant);
// The inputs read-only from here on (the calls of a candidate or baseline); outputs stay writable.
void make_inputs_read_only(const Plan& plan, const TrialBuffers& buffers);
// New output buffers for an existing set of inputs (the timing loop keeps one output set per side).
std::vector<GuardedBuffer> make_outputs(const Plan& plan, const TrialPlan& trial, int poison, unsigned variant);
void poison_outputs(const Plan& plan, const TrialPlan& trial, std::vector<void*>& pointers, int poison);
// Reads <trial.reference>.<tensor>.bin for every output (empty buffers for inputs). Throws on a missing file.
std::vector<GuardedBuffer> load_references(const Plan& plan, const TrialPlan& trial);
// Calls an implementation with the watchdog armed; returns its wall time in seconds.
double call_implementation(const Implementation& implementation, const Plan& plan, const TrialPlan& trial,
                           const std::vector<void*>& pointers, double deadline_s);
double now_s();

// Checks every tensor's guards, then compares the outputs with the references (poison, non-finite, tolerance).
// Returns "ok" or the first failure's status, and adds its evidence (or the worst output's error norms) to
// `line`.
std::string check_outputs(const Plan& plan, const TrialPlan& trial, const std::vector<GuardedBuffer>& tensors,
                          const std::vector<GuardedBuffer>& references, int poison, JsonLine& line);

int run_timing(const HarnessContext& context);
int run_profile(const HarnessContext& context);

}  // namespace evoteam_harness
