// The trusted host harness: one process per phase. It owns every allocation, the inputs and the clock; the
// implementations under test are shared objects it loads and calls through the task's glue. Results go to the
// record channel only (--result-fd), one JSON line per event.
//   harness --plan plan.json --result-fd N [--candidate X.so] [--baseline Y.so] [--reference Z.so]
#include <dlfcn.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "../compare.hpp"
#include "../generate.hpp"
#include "../harness_abi.h"
#include "../oracle_files.hpp"
#include "faults.hpp"
#include "harness.hpp"
#include "stack_scrub.hpp"

namespace evoteam_harness {

double now_s() {
  timespec time{};
  clock_gettime(CLOCK_MONOTONIC, &time);
  return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_nsec) * 1e-9;
}

TrialBuffers make_trial_buffers(const Plan& plan, const TrialPlan& trial, int poison, unsigned variant) {
  TrialBuffers buffers;
  const WorkloadPlan& workload = plan.workloads[trial.workload];
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    const TensorPlan& tensor = plan.tensors[t];
    const std::size_t bytes = static_cast<std::size_t>(workload.elements[t]) * dtype_size(tensor.dtype);
    buffers.tensors.emplace_back(bytes, plan.guard_bytes, tensor.name.c_str(), tensor.is_output,
                                 layout_slot(t, variant));
    void* data = buffers.tensors.back().data();
    if (tensor.is_output) {
      fill_poison(data, workload.elements[t], tensor.dtype, poison);
    } else {
      std::string error;
      if (!generate_input(data, plan, t, workload, trial, &error)) throw std::runtime_error(error);
    }
    buffers.pointers.push_back(data);
  }
  return buffers;
}

void make_inputs_read_only(const Plan& plan, const TrialBuffers& buffers) {
  for (std::size_t t = 0; t < plan.tensors.size(); ++t)
    if (!plan.tensors[t].is_output) buffers.tensors[t].set_read_only(true);
}

std::vector<GuardedBuffer> make_outputs(const Plan& plan, const TrialPlan& trial, int poison, unsigned variant) {
  std::vector<GuardedBuffer> outputs;
  const WorkloadPlan& workload = plan.workloads[trial.workload];
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    const TensorPlan& tensor = plan.tensors[t];
    if (!tensor.is_output) {
      outputs.emplace_back();
      continue;
    }
    outputs.emplace_back(static_cast<std::size_t>(workload.elements[t]) * dtype_size(tensor.dtype), plan.guard_bytes,
                         tensor.name.c_str(), true, layout_slot(t, variant));
    fill_poison(outputs.back().data(), workload.elements[t], tensor.dtype, poison);
  }
  return outputs;
}

void poison_outputs(const Plan& plan, const TrialPlan& trial, std::vector<void*>& pointers, int poison) {
  const WorkloadPlan& workload = plan.workloads[trial.workload];
  for (std::size_t t = 0; t < plan.tensors.size(); ++t)
    if (plan.tensors[t].is_output) fill_poison(pointers[t], workload.elements[t], plan.tensors[t].dtype, poison);
}

std::vector<GuardedBuffer> load_references(const Plan& plan, const TrialPlan& trial) {
  std::vector<GuardedBuffer> references;
  const WorkloadPlan& workload = plan.workloads[trial.workload];
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    const TensorPlan& tensor = plan.tensors[t];
    if (!tensor.is_compared()) {
      references.emplace_back();
      continue;
    }
    const std::size_t bytes = static_cast<std::size_t>(workload.elements[t]) * dtype_size(tensor.dtype);
    references.emplace_back(bytes, 64, "reference", false, 0);
    const std::string path = trial.reference + "." + tensor.name + ".bin";
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (file == nullptr) throw std::runtime_error("missing reference output " + path);
    const std::size_t read = std::fread(references.back().data(), 1, bytes, file);
    std::fclose(file);
    if (read != bytes) throw std::runtime_error("short reference output " + path);
  }
  return references;
}

double call_implementation(const Implementation& implementation, const Plan& plan, const TrialPlan& trial,
                           const std::vector<void*>& pointers, double deadline_s) {
  const WorkloadPlan& workload = plan.workloads[trial.workload];
  set_activity(trial.id, implementation.phase);
  scrub_stack();
  arm_watchdog(deadline_s);
  const double start = now_s();
  evoteam_glue_call(implementation.entry, pointers.data(), workload.axes.data(), nullptr);
  const double wall = now_s() - start;
  disarm_watchdog();
  set_activity(trial.id, "harness");
  return wall;
}

std::string check_outputs(const Plan& plan, const TrialPlan& trial, const std::vector<GuardedBuffer>& tensors,
                          const std::vector<GuardedBuffer>& references, int poison, JsonLine& line) {
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    if (tensors[t].data() == nullptr) continue;
    GuardDamage damage = tensors[t].check_guards();
    if (damage.damaged) {
      line.field("tensor", plan.tensors[t].name).field("side", damage.after ? "after" : "before");
      line.field("guard_offset", damage.offset);
      return "oob_write";
    }
  }
  const WorkloadPlan& workload = plan.workloads[trial.workload];
  std::string worst_tensor;
  CompareResult worst;
  worst.normwise = -1;
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    if (!plan.tensors[t].is_compared()) continue;
    CompareResult result = compare_output(tensors[t].data(), references[t].data(), workload.elements[t],
                                          plan.tensors[t].dtype, plan.tolerances[t], poison);
    if (result.status != "ok" || result.normwise > worst.normwise) {
      worst = result;
      worst_tensor = plan.tensors[t].name;
    }
    if (result.status != "ok") break;
  }
  line.field("tensor", worst_tensor).field("max_abs", worst.max_abs).field("max_rel", worst.max_rel);
  line.field("normwise", worst.normwise);
  if (worst.status != "ok") {
    line.field("first_bad", worst.first_bad).field("bad_count", worst.bad_count);
    line.field("candidate_value", worst.candidate_value).field("reference_value", worst.reference_value);
  }
  return worst.status;
}

namespace {

int run_reference(const HarnessContext& context) {
  const Plan& plan = context.plan;
  for (const TrialPlan& trial : plan.trials) {
    TrialBuffers buffers = make_trial_buffers(plan, trial, 0, 0);
    // The inputs are written before the call, as generated: a reference that mutated them would not change them.
    for (std::size_t t = 0; t < plan.tensors.size(); ++t)
      write_trial_input(trial, plan.tensors[t], buffers.pointers[t], buffers.tensors[t].bytes());
    const double wall = call_implementation(context.reference, plan, trial, buffers.pointers, trial.deadline_s);
    for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
      GuardDamage damage = buffers.tensors[t].check_guards();
      if (damage.damaged) throw std::runtime_error("the reference wrote outside tensor " + plan.tensors[t].name);
      if (!plan.tensors[t].is_compared()) continue;
      const std::int64_t unwritten =
          count_poison(buffers.pointers[t], plan.workloads[trial.workload].elements[t], plan.tensors[t].dtype, 0);
      if (unwritten > 0)
        throw std::runtime_error("the reference left " + std::to_string(unwritten) + " elements of " +
                                 plan.tensors[t].name + " unwritten");
      const std::string path = trial.reference + "." + plan.tensors[t].name + ".bin";
      std::FILE* file = std::fopen(path.c_str(), "wb");
      if (file == nullptr) throw std::runtime_error("cannot write " + path);
      const std::size_t bytes = buffers.tensors[t].bytes();
      const bool ok = std::fwrite(buffers.tensors[t].data(), 1, bytes, file) == bytes;
      if (std::fclose(file) != 0 || !ok) throw std::runtime_error("cannot write " + path);
    }
    emit(JsonLine().field("ev", "reference").field("trial", trial.id).field("wall_s", wall));
  }
  return 0;
}

// Runs one correctness trial and emits its record; then the determinism repeat when this is that trial.
void run_trial(const HarnessContext& context, const TrialPlan& trial) {
  const Plan& plan = context.plan;
  emit(JsonLine().field("ev", "begin").field("trial", trial.id).field("workload", trial.workload));
  TrialBuffers buffers = make_trial_buffers(plan, trial, trial.poison, static_cast<unsigned>(trial.id));
  std::vector<std::vector<unsigned char>> pristine(plan.tensors.size());
  for (std::size_t t = 0; t < plan.tensors.size(); ++t)
    if (!plan.tensors[t].is_output) {
      const auto* bytes = static_cast<const unsigned char*>(buffers.pointers[t]);
      pristine[t].assign(bytes, bytes + buffers.tensors[t].bytes());
    }
  make_inputs_read_only(plan, buffers);
  const double wall = call_implementation(context.candidate, plan, trial, buffers.pointers, trial.deadline_s);
  JsonLine line;
  line.field("ev", "trial").field("trial", trial.id).field("workload", trial.workload).field("wall_s", wall);
  std::string status;
  for (std::size_t t = 0; t < plan.tensors.size() && status.empty(); ++t) {
    GuardDamage damage = buffers.tensors[t].check_guards();
    if (damage.damaged) {
      status = "oob_write";
      line.field("tensor", plan.tensors[t].name).field("side", damage.after ? "after" : "before");
      line.field("guard_offset", damage.offset);
    }
  }
  for (std::size_t t = 0; t < plan.tensors.size() && status.empty(); ++t) {
    if (plan.tensors[t].is_output) continue;
    const std::int64_t first = first_difference(buffers.pointers[t], pristine[t].data(),
                                                plan.workloads[trial.workload].elements[t], plan.tensors[t].dtype);
    if (first >= 0) {
      status = "input_mutated";
      line.field("tensor", plan.tensors[t].name).field("first_bad", first);
    }
  }
  std::vector<GuardedBuffer> references;
  if (status.empty()) {
    references = load_references(plan, trial);
    status = check_outputs(plan, trial, buffers.tensors, references, trial.poison, line);
  }
  line.field("status", status);
  emit(line);
  if (status != "ok" || trial.id != plan.determinism_trial) return;
  // Determinism: the same inputs again, in new buffers (the first ones stay mapped, so every address
  // differs) under a different poison; the outputs must match bit for bit.
  TrialBuffers repeat = make_trial_buffers(plan, trial, trial.poison + 1, static_cast<unsigned>(trial.id) + 1);
  make_inputs_read_only(plan, repeat);
  call_implementation(context.candidate, plan, trial, repeat.pointers, trial.deadline_s);
  JsonLine determinism;
  determinism.field("ev", "determinism").field("trial", trial.id);
  bool identical = true;
  for (std::size_t t = 0; t < plan.tensors.size() && identical; ++t) {
    if (!plan.tensors[t].is_compared()) continue;
    const std::int64_t first = first_difference(buffers.pointers[t], repeat.pointers[t],
                                                plan.workloads[trial.workload].elements[t], plan.tensors[t].dtype);
    if (first >= 0) {
      identical = false;
      determinism.field("tensor", plan.tensors[t].name).field("first_bad", first);
    }
  }
  determinism.field("identical", identical);
  emit(determinism);
}

int run_correctness(const HarnessContext& context) {
  for (const TrialPlan& trial : context.plan.trials) run_trial(context, trial);
  return 0;
}

Implementation load_implementation(const char* path, const char* phase) {
  Implementation implementation;
  implementation.phase = phase;
  if (path == nullptr) return implementation;
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw std::runtime_error(std::string("cannot load ") + phase + ": " + dlerror());
  implementation.entry = dlsym(handle, evoteam_glue_entry_name());
  if (implementation.entry == nullptr)
    throw std::runtime_error(std::string(phase) + " does not define " + evoteam_glue_entry_name());
  return implementation;
}

}  // namespace
}  // namespace evoteam_harness

int main(int argc, char** argv) {
  using namespace evoteam_harness;
  const char* plan_path = nullptr;
  const char* paths[3] = {nullptr, nullptr, nullptr};
  int fd = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--plan")
      plan_path = argv[i + 1];
    else if (flag == "--result-fd")
      fd = std::atoi(argv[i + 1]);
    else if (flag == "--candidate")
      paths[0] = argv[i + 1];
    else if (flag == "--baseline")
      paths[1] = argv[i + 1];
    else if (flag == "--reference")
      paths[2] = argv[i + 1];
  }
  if (plan_path == nullptr || fd < 3) {
    std::fprintf(stderr,
                 "usage: harness --plan FILE --result-fd N [--candidate SO] [--baseline SO] [--reference SO]\n");
    return 2;
  }
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  open_record_channel(fd);
  install_fault_handlers();
  prepare_stack_scrub();
  HarnessContext context;
  context.parent = getppid();
  try {
    context.plan = load_plan(plan_path);
    emit(JsonLine()
             .field("ev", "start")
             .field("mode", context.plan.mode)
             .field("pid", static_cast<std::int64_t>(getpid())));
    set_activity(-1, "load");
    context.candidate = load_implementation(paths[0], "candidate");
    context.baseline = load_implementation(paths[1], "baseline");
    context.reference = load_implementation(paths[2], "reference");
    set_activity(-1, "harness");
  } catch (const std::exception& error) {
    emit(JsonLine().field("ev", "load_error").field("message", error.what()));
    return 3;
  }
  try {
    const std::string& mode = context.plan.mode;
    int code = 2;
    if (mode == "reference")
      code = run_reference(context);
    else if (mode == "correctness")
      code = run_correctness(context);
    else if (mode == "timing")
      code = run_timing(context);
    else if (mode == "profile")
      code = run_profile(context);
    else if (mode == "compare")
      code = run_compare_files(context.plan);
    else
      throw std::runtime_error("unknown mode " + mode);
    emit(JsonLine().field("ev", "done").field("mode", mode));
    return code;
  } catch (const std::exception& error) {
    emit(JsonLine().field("ev", "error").field("message", error.what()));
    return 2;
  }
}
