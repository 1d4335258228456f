// One rank of a group: communicators per workload through the glue, barriers and agreement over NCCL, and the
// watchdog that ends the process when another rank failed (the evaluator's abort file) or the group never forms.
#include "rank_group.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "../record.hpp"
#include "cuda_check.hpp"
#include "plan_modes.hpp"
#include "rank_exchange.hpp"

namespace evoteam_harness::cuda {
namespace {

// When forming a communicator must be over (steady-clock seconds; 0: not forming one).
std::atomic<double> g_forming_deadline{0.0};

[[noreturn]] void nccl_failure(int code, const char* call) {
  throw std::runtime_error(std::string(call) + " failed: " + evoteam_glue_comm_error(code));
}

// Ends the process when the group is over for it: the evaluator raised the abort file (a peer died or hung,
// and this rank may be waiting for it inside a collective), or the communicator did not form in time.
void watch(std::string abort_file) {
  for (;;) {
    if (ranks::file_exists(abort_file)) {
      emit(JsonLine().field("ev", "peer_failed").field("message", "another rank of the group failed"));
      std::fflush(nullptr);
      _exit(k_exit_fault);
    }
    const double deadline = g_forming_deadline.load();
    if (deadline > 0 && now_s() > deadline) {
      emit(JsonLine().field("ev", "hang").field("phase", "harness").field("call", "forming the communicator").field("trial", -1));
      std::fflush(nullptr);
      _exit(k_exit_infra);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

double group_deadline_s(double call_deadline_s) { return 2 * call_deadline_s + 10; }

RankGroup::RankGroup(const Plan& plan) : m_plan(plan) {
  std::thread(watch, plan.ranks.abort_file).detach();
}

RankGroup::~RankGroup() { close(); }

void RankGroup::use_workload(int workload, cudaStream_t stream) {
  if (workload == m_workload) return;
  close();
  const RankPlan& ranks = m_plan.ranks;
  const WorkloadPlan& plan_workload = m_plan.workloads[static_cast<std::size_t>(workload)];
  const int size = static_cast<int>(plan_workload.axes[static_cast<std::size_t>(ranks.axis)]);
  const std::string path = ranks::id_file(ranks.id_prefix, m_ordinal++);
  unsigned char id[k_comm_id_bytes] = {0};
  set_phase("harness");
  g_forming_deadline = now_s() + ranks.init_timeout_s;
  if (ranks.rank == 0) {
    if (const int status = evoteam_glue_comm_unique_id(id, k_comm_id_bytes)) nccl_failure(status, "ncclGetUniqueId");
    std::string error;
    if (!ranks::publish_file(path, id, sizeof(id), &error)) throw std::runtime_error(error);
  } else {
    const ranks::AwaitStatus status = ranks::await_file(path, id, sizeof(id), ranks.init_timeout_s, ranks.abort_file);
    // An abort is the watchdog's to report; a missing id after the deadline is the group's setup failing.
    if (status == ranks::AwaitStatus::aborted) std::this_thread::sleep_for(std::chrono::seconds(5));
    if (status != ranks::AwaitStatus::ok) throw std::runtime_error("no communicator id from rank 0 at " + path);
  }
  if (const int status = evoteam_glue_comm_init(&m_comm, size, id, ranks.rank)) nccl_failure(status, "ncclCommInitRank");
  m_workload = workload;
  evoteam_glue_set_comm(m_comm, ranks.rank);
  if (m_device == nullptr) {
    EVOTEAM_CUDA_CHECK(cudaMalloc(&m_device, k_values * sizeof(double)));
    EVOTEAM_CUDA_CHECK(cudaMallocHost(&m_host, k_values * sizeof(double)));
    EVOTEAM_CUDA_CHECK(cudaMemset(m_device, 0, k_values * sizeof(double)));
  }
  // The first collective sets up connections: done here, not inside a candidate's measured or deadlined call.
  barrier(stream, ranks.init_timeout_s);
  g_forming_deadline = 0.0;
  emit(JsonLine().field("ev", "communicator").field("workload", workload).field("ranks", size).field("rank", ranks.rank));
}

void RankGroup::close() {
  if (m_comm != nullptr) {
    evoteam_glue_set_comm(nullptr, m_plan.ranks.rank);
    evoteam_glue_comm_destroy(m_comm);
    m_comm = nullptr;
  }
  m_workload = -1;
}

void RankGroup::enqueue_barrier(cudaStream_t stream) {
  if (const int status = evoteam_glue_max_over_ranks(m_comm, m_device, 1, stream)) nccl_failure(status, "barrier (ncclAllReduce)");
}

void RankGroup::barrier(cudaStream_t stream, double deadline_s) {
  enqueue_barrier(stream);
  wait_with_deadline(stream, deadline_s, -1, "harness");
}

void RankGroup::max_over_ranks(std::vector<double>& values, cudaStream_t stream, double deadline_s) {
  if (values.empty() || values.size() > static_cast<std::size_t>(k_values)) throw std::runtime_error("max_over_ranks: 1 to 8 values");
  for (std::size_t i = 0; i < values.size(); ++i) m_host[i] = values[i];
  const std::size_t bytes = values.size() * sizeof(double);
  EVOTEAM_CUDA_CHECK(cudaMemcpyAsync(m_device, m_host, bytes, cudaMemcpyHostToDevice, stream));
  if (const int status = evoteam_glue_max_over_ranks(m_comm, m_device, static_cast<int64_t>(values.size()), stream))
    nccl_failure(status, "agreement (ncclAllReduce)");
  EVOTEAM_CUDA_CHECK(cudaMemcpyAsync(m_host, m_device, bytes, cudaMemcpyDeviceToHost, stream));
  wait_with_deadline(stream, deadline_s, -1, "harness");
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = m_host[i];
}

bool RankGroup::any(bool local, cudaStream_t stream, double deadline_s) {
  std::vector<double> flag = {local ? 1.0 : 0.0};
  max_over_ranks(flag, stream, deadline_s);
  return flag[0] > 0;
}

std::string outputs_hash(const Plan& plan, const std::vector<std::vector<unsigned char>>& outputs) {
  unsigned long long hash = 1469598103934665603ull;
  for (std::size_t t = 0; t < plan.tensors.size() && t < outputs.size(); ++t)
    if (plan.tensors[t].is_compared()) hash = ranks::fnv1a(outputs[t].data(), outputs[t].size(), hash);
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", hash);
  return text;
}

}  // namespace evoteam_harness::cuda
