#pragma once
// One rank of a group (a task with a ranks axis): the harness owns the NCCL communicator of each workload, hands
// it to every call through the glue, lines the ranks up before timed calls and agrees with the other ranks on
// every decision that changes what runs next (warm-up, stopping, failures), so that no rank waits in a
// collective its peers never enter. NCCL itself is reached through the glue only (evoteam_glue_comm_*): the
// shared harness objects never link it; the glue of a ranked task does (-lnccl).
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "../plan.hpp"

extern "C" {
// Defined by every CUDA glue (src/eval/glue.cpp); without a ranks axis they refuse (-1).
int evoteam_glue_ranks_axis(void);                     // index into the axes, or -1
void evoteam_glue_set_comm(void* comm, int32_t rank);  // appended to every later evoteam_glue_call
int evoteam_glue_comm_unique_id(void* id, int bytes);  // 0 or an NCCL result code
int evoteam_glue_comm_init(void** comm, int ranks, const void* id, int rank);
int evoteam_glue_comm_destroy(void* comm);
// In-place maximum over the ranks of `count` doubles in device memory, on `stream`.
int evoteam_glue_max_over_ranks(void* comm, double* values, int64_t count, void* stream);
const char* evoteam_glue_comm_error(int code);
}

namespace evoteam_harness::cuda {

constexpr int k_comm_id_bytes = 128;  // sizeof(ncclUniqueId)

class RankGroup {
 public:
  // Starts the watchdog that ends this process when the evaluator raises the group's abort file (another rank
  // failed) or when forming a communicator outlasts plan.ranks.init_timeout_s.
  explicit RankGroup(const Plan& plan);
  ~RankGroup();
  RankGroup(const RankGroup&) = delete;
  RankGroup& operator=(const RankGroup&) = delete;

  // The communicator of `workload`, created when the workload changes (the previous one destroyed): rank 0
  // publishes a fresh id, every rank joins, and the glue passes it to every call.
  void use_workload(int workload, cudaStream_t stream);
  void close();
  int rank() const { return m_plan.ranks.rank; }

  // Every rank has enqueued its part and waited: on return, all ranks got here.
  void barrier(cudaStream_t stream, double deadline_s);
  // Enqueues the same one-element collective without waiting: the stream moves on when every rank's did.
  void enqueue_barrier(cudaStream_t stream);
  // `values` replaced by their maximum over the ranks (decisions every rank must take alike).
  void max_over_ranks(std::vector<double>& values, cudaStream_t stream, double deadline_s);
  // Whether `local` holds on any rank.
  bool any(bool local, cudaStream_t stream, double deadline_s);

 private:
  const Plan& m_plan;
  void* m_comm = nullptr;
  int m_workload = -1;
  int m_ordinal = 0;
  double* m_device = nullptr;  // staging for max_over_ranks (small)
  double* m_host = nullptr;    // pinned, so the copies stay asynchronous and the wait keeps its deadline
  static constexpr int k_values = 8;
};

// FNV-1a over the compared outputs of a set, as 16 hex digits: what ranks report for the cross-rank check.
std::string outputs_hash(const Plan& plan, const std::vector<std::vector<unsigned char>>& outputs);

// Generous wait for the harness's own collectives: a candidate that hangs meets its own deadline first.
double group_deadline_s(double call_deadline_s);

}  // namespace evoteam_harness::cuda
