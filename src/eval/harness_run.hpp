#pragma once
// One harness process: the plan file it reads, the command that runs it (sandboxed, with a deadline and the
// record channel on fd 3) and its parsed record lines.
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/core/process.hpp>
#include <evoteam/eval/evaluator.hpp>
#include <evoteam/task/task.hpp>

#include "eval/battery.hpp"

namespace evoteam::eval {

// The parts every plan shares: tensors (with tolerances), workloads, guard size.
nlohmann::json base_plan(const Task& task, const Battery& battery, const CorrectnessSettings& correctness,
                         const std::string& mode);
// Adds trials with their reference file prefixes and per-call deadlines.
void add_trials(nlohmann::json& plan, const Battery& battery, const std::vector<int>& trial_ids,
                const std::filesystem::path& reference_dir, const std::vector<double>& deadlines_s);

struct HarnessSpec {
  std::filesystem::path harness;
  std::filesystem::path plan;
  std::filesystem::path scratch;  // writable; also the working directory
  std::optional<std::filesystem::path> candidate, baseline, reference;
  // The candidate is a trusted vendor library: the harness calls its `<entry>_plan` hook before each input set's
  // calls (CUDA harness only; never for a candidate's own code).
  bool candidate_plan_hook = false;
  std::vector<std::filesystem::path> readable;  // extra read-only paths inside the sandbox
  std::vector<std::filesystem::path> writable;  // extra writable paths (a shared reference cache)
  std::vector<std::string> wrapper;             // a prefix such as perf stat ... --
  std::vector<std::filesystem::path> devices;   // device nodes the sandbox must expose (GPU runs)
  std::map<std::string, std::string> env;  // added to the scrubbed environment (a pooled GPU's CUDA_VISIBLE_DEVICES)
  SandboxMode sandbox = SandboxMode::none;
  bool rank_group = false;              // one rank of a group: shares namespaces with its peers
  std::filesystem::path shared_memory;  // the group's /dev/shm (rank groups under bwrap)
  double timeout_s = 60;
  // A deadline that starts late: asked about every 200 ms, true ends the run as `timeout_s` would (an early timing
  // run's stage deadline starts at its release, which the fixed deadline above cannot know).
  std::function<bool()> past_deadline;
  std::uint64_t max_address_space = 0;
};

struct HarnessRun {
  ProcessResult process;
  std::vector<nlohmann::json> records;
  bool records_truncated = false;

  std::vector<const nlohmann::json*> all(const std::string& event) const;
  const nlohmann::json* last(const std::string& event) const;
  bool finished() const { return last("done") != nullptr; }
};

HarnessRun run_harness(ProcessRunner& runner, const HarnessSpec& spec);

// Parses record lines; a trailing partial line (a process killed mid-write) is dropped.
std::vector<nlohmann::json> parse_records(const std::string& text, bool* truncated);

}  // namespace evoteam::eval
