#pragma once
// The Python oracle: a task's python_reference (task.json) run by a trusted runner script on the inputs of the
// correctness trials, its outputs compared with the C++/CUDA reference's with the task's tolerances. It checks
// the reference itself, against an independent implementation (often the published PyTorch one); no candidate
// is involved. Runs through Evaluator::check_oracle; `evoteam eval TASK --oracle` and `evoteam doctor` show it.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/core/process.hpp>
#include <evoteam/eval/eval_settings.hpp>
#include <evoteam/task/task.hpp>

namespace evoteam {

// What the configured Python (eval.oracle.python) can import, from the runner's --probe.
struct PythonProbe {
  std::string python;  // as configured
  bool runs = false;   // false: it did not start, or the probe failed (`problem` says how)
  std::string problem;
  std::string executable;  // sys.executable
  std::string version;
  std::optional<std::string> numpy;  // versions of what imports
  std::optional<std::string> torch;
  bool torch_cuda = false;

  const std::optional<std::string>& version_of(PythonFramework framework) const;
  nlohmann::json to_json() const;
};

// The runner script shipped with evoteam: kernels/common/python/oracle_runner.py under the install root.
std::filesystem::path oracle_runner_script();
PythonProbe probe_python(ProcessRunner& runner, const OracleSettings& settings);

// agreed: every compared output of every trial within tolerance; disagreed: some not; skipped: the oracle could
// not run here and nothing is wrong (framework not importable, no device); failed: the Python reference or the
// C++ reference failed (`reason` says how).
enum class OracleStatus { agreed, disagreed, skipped, failed };
std::string to_string(OracleStatus status);

// One output over every trial: the worst errors and, when some trial disagreed, where first.
struct OracleOutput {
  std::string tensor;
  int trials = 0;
  int failed_trials = 0;
  double max_abs = 0;
  double max_rel = 0;
  double normwise = 0;
  std::string first_failure;  // "trial 4 (square512, normal): numeric_mismatch at 17: oracle 1.5 vs reference 1.25"

  bool passed() const { return failed_trials == 0; }
};

struct OracleReport {
  OracleStatus status = OracleStatus::failed;
  std::string reason;  // skipped or failed: why
  std::string task;
  std::string python;
  std::string framework;
  std::string framework_version;
  std::string device;  // where the Python reference ran: "cpu", or "cuda" for a torch reference of a cuda task
  int trials = 0;
  std::vector<OracleOutput> outputs;
  double wall_s = 0;

  nlohmann::json to_json() const;
  // For people: one line of status, then one per output.
  std::string summary() const;
};

}  // namespace evoteam
