#pragma once
// The work order the evaluator writes for one harness process (plan.json). Everything a phase needs is
// here: tensors, workloads with precomputed sizes, trials with salted seeds, tolerances, timing settings.
#include <cstdint>
#include <string>
#include <vector>

#include "stop_rule.hpp"

namespace evoteam_harness {

// 16-bit floats are stored as their bits (half_float.hpp converts); 8-bit floats are not supported yet.
enum class DType { float32, float64, int32, int64, uint8, float16, bfloat16, other };
std::size_t dtype_size(DType dtype);

struct TensorPlan {
  std::string name;
  bool is_output = false;
  bool is_scratch = false;  // an output the implementation may use as workspace: never compared
  DType dtype = DType::float32;
  std::string generator = "battery";  // battery | uniform_int | hook
  std::string hook;

  // Whether the harness checks this tensor against the reference (outputs that are not scratch).
  bool is_compared() const { return is_output && !is_scratch; }
};

struct Tolerance {
  double rtol = 0, atol = 0, atol_rms = 0, normwise = 0;
};

struct WorkloadPlan {
  int id = 0;
  std::string name;
  bool hidden = false;
  std::vector<std::int64_t> axes;               // in evoteam_glue_axis_names() order
  std::vector<std::int64_t> elements;           // per tensor
  std::vector<std::int64_t> int_low, int_high;  // per tensor, for uniform_int generators
};

struct TrialPlan {
  int id = 0;
  int workload = 0;
  std::uint64_t seed = 0;
  std::string distribution = "normal";
  int poison = 0;
  std::string reference;  // file prefix of the reference outputs: <prefix>.<tensor>.bin
  // Reference mode: when set, the trial's inputs are written too, as <inputs>.<tensor>.bin (the Python oracle
  // reads them). Compare mode: <oracle>.<tensor>.bin are the oracle's outputs, compared with the reference's.
  std::string inputs;
  std::string oracle;
  double deadline_s = 10;
};

struct TimingWorkloadPlan {
  int workload = 0;
  std::vector<int> sets;    // trial ids whose inputs and references form the rotation
  std::vector<int> probes;  // trial ids of fresh sets timed once each after the rotation
};

// One rank of a group (tasks with a ranks axis): the evaluator starts one harness process per rank, each with
// its own plan file that differs only here. Absent for single-process tasks.
struct RankPlan {
  bool enabled = false;
  int rank = 0;
  int device = 0;               // the CUDA device this process uses
  int axis = -1;                // index of the ranks axis in WorkloadPlan::axes: a workload's group size
  std::string id_prefix;        // communicator ids: rank 0 publishes <id_prefix>.<n>.id for its n-th communicator
  std::string abort_file;       // created by the evaluator when another rank of the group failed
  double init_timeout_s = 120;  // waiting for an id file, and for the communicator to form
};

// A rank's inputs come from its own seed: the trial's seed mixed with the rank, so shards differ across ranks
// and the same (trial, rank) always gives the same bits.
std::uint64_t rank_seed(std::uint64_t seed, int rank);

struct Plan {
  std::string mode;  // reference | correctness | timing | profile | compare
  std::vector<TensorPlan> tensors;
  std::vector<WorkloadPlan> workloads;
  std::vector<TrialPlan> trials;
  std::vector<Tolerance> tolerances;  // per tensor (outputs only meaningful)
  std::size_t guard_bytes = 4096;
  int determinism_trial = -1;
  // timing
  std::vector<TimingWorkloadPlan> timing;
  StopConfig stop;
  double warmup_s = 0.1;
  double min_sample_s = 0.001;
  double side_work_fraction = 0.05;
  double call_deadline_s = 10;
  bool thread_cpu_clock = true;  // time samples by the calling thread's CPU time (else wall time)
  // When set, the timing run is started beside correctness: it prepares its input sets, then times nothing
  // until the evaluator writes "go" into this file ("stop", or no word within release_wait_s, ends it untimed).
  std::string release_file;
  double release_wait_s = 0;
  // profile
  int profile_trial = -1;
  double profile_time_s = 0.3;
  RankPlan ranks;

  const TrialPlan& trial(int id) const;
};

// Throws std::runtime_error with a message on a malformed plan (the evaluator wrote it, so that is a bug).
// For a rank, every trial's seed becomes rank_seed(seed, rank) and its reference prefix gains ".r<rank>"
// (each rank keeps its own reference outputs).
Plan load_plan(const std::string& path);

}  // namespace evoteam_harness
