// The CUDA harness's plan-driven modes (reference, correctness, timing, profile), with the same records as the
// host harness so the evaluator judges both alike. Inputs are generated and outputs compared on the host
// (generate.*, compare.*); the device holds one guarded cudaMalloc per tensor. Every call of an implementation is
// followed by a wait with its deadline: a kernel that does not finish becomes a "hang" record and the process
// ends (the driver tears the context down with it). Timing: CUDA events around the implementation's launches on
// the harness's stream, the L2 flushed before every sample, candidate and baseline interleaved (ABBA) over
// rotating input sets, every timed output poisoned before and re-checked after, fresh-set probes at the end.
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../compare.hpp"
#include "../generate.hpp"
#include "../harness_abi.h"
#include "../oracle_files.hpp"
#include "../stop_rule.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "l2_flush.hpp"
#include "plan_modes.hpp"
#include "rank_group.hpp"

namespace evoteam_harness::cuda {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::size_t tensor_bytes(const Plan& plan, const WorkloadPlan& workload, std::size_t t) {
  return static_cast<std::size_t>(workload.elements[t]) * dtype_size(plan.tensors[t].dtype);
}

// Host copies of a trial's inputs (generated) and poisoned outputs.
std::vector<Bytes> host_tensors(const Plan& plan, const TrialPlan& trial, int poison) {
  const WorkloadPlan& workload = plan.workloads[trial.workload];
  std::vector<Bytes> host(plan.tensors.size());
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    host[t].assign(tensor_bytes(plan, workload, t), 0);
    if (plan.tensors[t].is_output) {
      fill_poison(host[t].data(), workload.elements[t], plan.tensors[t].dtype, poison);
    } else {
      std::string error;
      if (!generate_input(host[t].data(), plan, t, workload, trial, &error)) throw std::runtime_error(error);
    }
  }
  return host;
}

DeviceSet upload(const Plan& plan, const std::vector<Bytes>& host) {
  DeviceSet set;
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    set.buffers.emplace_back(host[t].size(), plan.guard_bytes, plan.tensors[t].name.c_str());
    EVOTEAM_CUDA_CHECK(cudaMemcpy(set.buffers.back().data(), host[t].data(), host[t].size(), cudaMemcpyHostToDevice));
    set.pointers.push_back(set.buffers.back().data());
  }
  return set;
}

Bytes download(const DeviceBuffer& buffer) {
  Bytes bytes(buffer.bytes());
  EVOTEAM_CUDA_CHECK(cudaMemcpy(bytes.data(), buffer.data(), bytes.size(), cudaMemcpyDeviceToHost));
  return bytes;
}

Bytes read_reference(const TrialPlan& trial, const TensorPlan& tensor, std::size_t bytes) {
  const std::string path = trial.reference + "." + tensor.name + ".bin";
  std::ifstream in(path, std::ios::binary);
  Bytes data(bytes);
  if (!in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(bytes)))
    throw std::runtime_error("cannot read reference " + path);
  return data;
}

// Waits for everything queued on `stream` with a deadline. A kernel still running at the deadline is a hang.
void wait_with_deadline(cudaStream_t stream, double deadline_s, int trial, const char* who) {
  cudaEvent_t done = nullptr;
  EVOTEAM_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  EVOTEAM_CUDA_CHECK(cudaEventRecord(done, stream));
  const double start = now_s();
  cudaError_t status = cudaEventQuery(done);
  while (status == cudaErrorNotReady) {
    if (now_s() - start > deadline_s) {
      emit(JsonLine().field("ev", "hang").field("phase", who).field("trial", trial)
               .field("deadline_ms", static_cast<std::int64_t>(deadline_s * 1000)));
      std::fflush(nullptr);
      _exit(k_exit_fault);
    }
    usleep(20);
    status = cudaEventQuery(done);
  }
  // A fault inside the kernel surfaces here, after it finished: it is the implementation's.
  if (status != cudaSuccess) fail(status, "kernel execution", "candidate", __FILE__, __LINE__);
  check_candidate(cudaSuccess, who);
  EVOTEAM_CUDA_CHECK(cudaEventDestroy(done));
}

void check_launch(int returned, const char* who) {
  set_phase(who);
  if (returned != 0) fail(static_cast<cudaError_t>(returned), "entry point return value", "candidate", __FILE__, __LINE__);
  const cudaError_t launch = cudaGetLastError();
  if (launch != cudaSuccess) fail(launch, "cudaGetLastError after the call", "candidate", __FILE__, __LINE__);
}

void plan_for(const Implementation& implementation, const Plan& plan, const TrialPlan& trial, void* const* pointers,
              cudaStream_t stream) {
  if (implementation.plan == nullptr) return;
  set_phase(implementation.phase);
  const int returned = evoteam_glue_call(implementation.plan, pointers, plan.workloads[trial.workload].axes.data(), stream);
  check_launch(returned, implementation.phase);
  wait_with_deadline(stream, trial.deadline_s, trial.id, implementation.phase);
  set_phase("harness");
}

// One call of an implementation on a device set; returns its wall time including the wait.
double call(const Implementation& implementation, const Plan& plan, const TrialPlan& trial, DeviceSet& set,
            cudaStream_t stream) {
  plan_for(implementation, plan, trial, set.pointers.data(), stream);
  set_phase(implementation.phase);
  const double start = now_s();
  const int returned = evoteam_glue_call(implementation.entry, set.pointers.data(), plan.workloads[trial.workload].axes.data(), stream);
  check_launch(returned, implementation.phase);
  wait_with_deadline(stream, trial.deadline_s, trial.id, implementation.phase);
  set_phase("harness");
  return now_s() - start;
}

std::string check_guards(const Plan& plan, const DeviceSet& set, JsonLine& line) {
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    const GuardDamage damage = set.buffers[t].check_guards();
    if (damage.damaged) {
      line.field("tensor", plan.tensors[t].name).field("side", damage.after ? "after" : "before").field("guard_offset", damage.offset);
      return "oob_write";
    }
  }
  return "ok";
}

std::string compare_outputs(const Plan& plan, const TrialPlan& trial, const DeviceSet& set, const std::vector<Bytes>& references,
                            int poison, JsonLine& line, std::vector<Bytes>* outputs) {
  const WorkloadPlan& workload = plan.workloads[trial.workload];
  std::string worst_tensor;
  CompareResult worst;
  worst.normwise = -1;
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    if (!plan.tensors[t].is_compared()) continue;
    Bytes output = download(set.buffers[t]);
    const CompareResult result = compare_output(output.data(), references[t].data(), workload.elements[t],
                                                plan.tensors[t].dtype, plan.tolerances[t], poison);
    if (outputs != nullptr) (*outputs)[t] = std::move(output);
    if (result.status != "ok" || result.normwise > worst.normwise) {
      worst = result;
      worst_tensor = plan.tensors[t].name;
    }
    if (result.status != "ok") break;
  }
  line.field("tensor", worst_tensor).field("max_abs", worst.max_abs).field("max_rel", worst.max_rel).field("normwise", worst.normwise);
  if (worst.status != "ok") {
    line.field("first_bad", worst.first_bad).field("bad_count", worst.bad_count);
    line.field("candidate_value", worst.candidate_value).field("reference_value", worst.reference_value);
  }
  return worst.status;
}

std::vector<Bytes> load_references(const Plan& plan, const TrialPlan& trial) {
  std::vector<Bytes> references(plan.tensors.size());
  const WorkloadPlan& workload = plan.workloads[trial.workload];
  for (std::size_t t = 0; t < plan.tensors.size(); ++t)
    if (plan.tensors[t].is_compared()) references[t] = read_reference(trial, plan.tensors[t], tensor_bytes(plan, workload, t));
  return references;
}

// The index of the first input whose device copy differs from the host original, with its first bad element.
std::pair<std::size_t, std::int64_t> mutated_input(const Plan& plan, const TrialPlan& trial, const DeviceSet& set,
                                                   const std::vector<Bytes>& host) {
  for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
    if (plan.tensors[t].is_output) continue;
    const Bytes now = download(set.buffers[t]);
    const std::int64_t first = first_difference(now.data(), host[t].data(), plan.workloads[trial.workload].elements[t], plan.tensors[t].dtype);
    if (first >= 0) return {t, first};
  }
  return {plan.tensors.size(), -1};
}

// Ranks of a group meet before each call, so a peer still preparing its inputs does not eat into the call's
// deadline (the call's collectives wait for every rank).
static void meet(const CudaContext& context, const TrialPlan& trial) {
  if (context.ranks != nullptr) context.ranks->barrier(context.stream, group_deadline_s(trial.deadline_s));
}

int run_reference(const CudaContext& context) {
  const Plan& plan = context.plan;
  for (const TrialPlan& trial : plan.trials) {
    if (context.ranks != nullptr) context.ranks->use_workload(trial.workload, context.stream);
    std::vector<Bytes> host = host_tensors(plan, trial, 0);
    for (std::size_t t = 0; t < plan.tensors.size(); ++t) write_trial_input(trial, plan.tensors[t], host[t].data(), host[t].size());
    DeviceSet set = upload(plan, host);
    meet(context, trial);
    const double wall = call(context.reference, plan, trial, set, context.stream);
    for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
      if (set.buffers[t].check_guards().damaged) throw std::runtime_error("the reference wrote outside tensor " + plan.tensors[t].name);
      if (!plan.tensors[t].is_compared()) continue;
      const Bytes output = download(set.buffers[t]);
      const std::int64_t unwritten = count_poison(output.data(), plan.workloads[trial.workload].elements[t], plan.tensors[t].dtype, 0);
      if (unwritten > 0)
        throw std::runtime_error("the reference left " + std::to_string(unwritten) + " elements of " + plan.tensors[t].name + " unwritten");
      const std::string path = trial.reference + "." + plan.tensors[t].name + ".bin";
      std::ofstream out(path, std::ios::binary);
      if (!out.write(reinterpret_cast<const char*>(output.data()), static_cast<std::streamsize>(output.size())) || !out.flush())
        throw std::runtime_error("cannot write " + path);
    }
    emit(JsonLine().field("ev", "reference").field("trial", trial.id).field("wall_s", wall));
  }
  return 0;
}

int run_correctness(const CudaContext& context) {
  const Plan& plan = context.plan;
  for (const TrialPlan& trial : plan.trials) {
    if (context.ranks != nullptr) context.ranks->use_workload(trial.workload, context.stream);
    emit(JsonLine().field("ev", "begin").field("trial", trial.id).field("workload", trial.workload));
    std::vector<Bytes> host = host_tensors(plan, trial, trial.poison);
    DeviceSet set = upload(plan, host);
    meet(context, trial);
    const double wall = call(context.candidate, plan, trial, set, context.stream);
    JsonLine line;
    line.field("ev", "trial").field("trial", trial.id).field("workload", trial.workload).field("wall_s", wall);
    std::vector<Bytes> outputs(plan.tensors.size());
    std::string status = check_guards(plan, set, line);
    if (status == "ok") {
      const auto [mutated, first] = mutated_input(plan, trial, set, host);
      if (mutated < plan.tensors.size()) {
        status = "input_mutated";
        line.field("tensor", plan.tensors[mutated].name).field("first_bad", first);
      }
    }
    if (status == "ok") status = compare_outputs(plan, trial, set, load_references(plan, trial), trial.poison, line, &outputs);
    // Ranks compare their outputs bit for bit through the evaluator.
    if (context.ranks != nullptr && status == "ok") line.field("output_hash", outputs_hash(plan, outputs));
    line.field("status", status);
    emit(line);
    // Every rank repeats the same trial, whatever its own status: the repeat is a collective call.
    if ((status != "ok" && context.ranks == nullptr) || trial.id != plan.determinism_trial) continue;
    // Determinism: the same inputs in new buffers under another poison; outputs must match bit for bit.
    std::vector<Bytes> again = host_tensors(plan, trial, trial.poison + 1);
    DeviceSet repeat = upload(plan, again);
    meet(context, trial);
    call(context.candidate, plan, trial, repeat, context.stream);
    if (status != "ok") continue;
    JsonLine determinism;
    determinism.field("ev", "determinism").field("trial", trial.id);
    bool identical = true;
    for (std::size_t t = 0; t < plan.tensors.size() && identical; ++t) {
      if (!plan.tensors[t].is_compared()) continue;
      const Bytes second = download(repeat.buffers[t]);
      const std::int64_t bad = first_difference(outputs[t].data(), second.data(), plan.workloads[trial.workload].elements[t], plan.tensors[t].dtype);
      if (bad >= 0) {
        identical = false;
        determinism.field("tensor", plan.tensors[t].name).field("first_bad", bad);
      }
    }
    determinism.field("identical", identical);
    emit(determinism);
  }
  return 0;
}

int run_profile(const CudaContext& context) {
  // Under Nsight Compute the evaluator selects the launches; this mode only makes them, a few times.
  const Plan& plan = context.plan;
  const TrialPlan& trial = plan.trial(plan.profile_trial);
  if (context.ranks != nullptr) context.ranks->use_workload(trial.workload, context.stream);
  std::vector<Bytes> host = host_tensors(plan, trial, 0);
  DeviceSet set = upload(plan, host);
  std::vector<double> samples;
  for (int i = 0; i < 3; ++i) samples.push_back(call(context.candidate, plan, trial, set, context.stream));
  emit(JsonLine().field("ev", "profile").field("trial", trial.id).array("samples", samples));
  return 0;
}

}  // namespace evoteam_harness::cuda
