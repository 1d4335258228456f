#include "oracle_files.hpp"

#include <cstdio>
#include <stdexcept>
#include <vector>

#include "compare.hpp"
#include "record.hpp"

namespace evoteam_harness {
namespace {

std::vector<unsigned char> read_exactly(const std::string& path, std::size_t bytes) {
  std::vector<unsigned char> data(bytes);
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) throw std::runtime_error("missing " + path);
  const std::size_t read = std::fread(data.data(), 1, bytes, file);
  // One byte more than expected means the file is longer than the tensor: as wrong as a short one.
  unsigned char extra = 0;
  const bool longer = std::fread(&extra, 1, 1, file) == 1;
  std::fclose(file);
  if (read != bytes || longer) throw std::runtime_error(path + " does not hold " + std::to_string(bytes) + " bytes");
  return data;
}

}  // namespace

void write_trial_input(const TrialPlan& trial, const TensorPlan& tensor, const void* data, std::size_t bytes) {
  if (trial.inputs.empty() || tensor.is_output) return;
  const std::string path = trial.inputs + "." + tensor.name + ".bin";
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) throw std::runtime_error("cannot write " + path);
  const bool ok = std::fwrite(data, 1, bytes, file) == bytes;
  if (std::fclose(file) != 0 || !ok) throw std::runtime_error("cannot write " + path);
}

int run_compare_files(const Plan& plan) {
  for (const TrialPlan& trial : plan.trials) {
    const WorkloadPlan& workload = plan.workloads[static_cast<std::size_t>(trial.workload)];
    for (std::size_t t = 0; t < plan.tensors.size(); ++t) {
      const TensorPlan& tensor = plan.tensors[t];
      if (!tensor.is_compared()) continue;
      const std::size_t bytes = static_cast<std::size_t>(workload.elements[t]) * dtype_size(tensor.dtype);
      const std::vector<unsigned char> oracle = read_exactly(trial.oracle + "." + tensor.name + ".bin", bytes);
      const std::vector<unsigned char> reference = read_exactly(trial.reference + "." + tensor.name + ".bin", bytes);
      // Poison slot 0 is a NaN with a payload no numeric library produces, so "unwritten" cannot fire by luck.
      const CompareResult result =
          compare_output(oracle.data(), reference.data(), workload.elements[t], tensor.dtype, plan.tolerances[t], 0);
      JsonLine line;
      line.field("ev", "compare")
          .field("trial", trial.id)
          .field("workload", trial.workload)
          .field("tensor", tensor.name);
      line.field("status", result.status).field("max_abs", result.max_abs).field("max_rel", result.max_rel);
      line.field("normwise", result.normwise);
      if (result.status != "ok") {
        line.field("first_bad", result.first_bad).field("bad_count", result.bad_count);
        line.field("oracle_value", result.candidate_value).field("reference_value", result.reference_value);
      }
      emit(line);
    }
  }
  return 0;
}

}  // namespace evoteam_harness
