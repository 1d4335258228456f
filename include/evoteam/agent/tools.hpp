#pragma once
// The agent's tools. Names and argument names are a contract (role files list them): read_file {path},
// write_file {path, content}, edit_file {path, old, new}, list_files {path}, compile {}, run_tests {},
// benchmark {}, profile {} (each with params?), read_knowledge {topic?}, record_knowledge {kind, text},
// rule {candidate, ruling, reason}, record_candidate {summary, params?}, submit {summary, params?}. Tools never run a
// shell: file tools go through the Workspace sandbox, evaluation tools through an EvaluationBackend, knowledge tools
// through a KnowledgeAccess, rulings through a ReviewAccess. Mistakes of the model (bad arguments, paths that escape,
// failing builds) come back as error results; only infrastructure faults throw.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/agent/workspace.hpp>
#include <evoteam/eval/evaluator.hpp>
#include <evoteam/llm/llm.hpp>

namespace evoteam {

class Config;

struct ToolResult {
  std::string content;
  bool is_error = false;
};

// --- Evaluation seam -------------------------------------------------------------------------------------

// Runs the evaluator on the workspace's files through a stage (compile: build, run_tests: correctness,
// benchmark: timing, profile: profile; each with the stages before it). The result is text for the model
// (describe_for_agent); is_error when the requested stage did not pass. `params` is the model's text of param
// changes ("TILE_M=64, UNROLL=4") over the head's values; empty keeps the head's. A change outside the declared
// values or the param constraints is an error result.
class EvaluationBackend {
 public:
  virtual ~EvaluationBackend() = default;
  virtual ToolResult evaluate(const Workspace& workspace, Stage through, const std::string& params) = 0;
  // Records the workspace's kernel at `params` as a candidate of the run: evaluated in full and kept. An error
  // result is a mistake the model can fix (bad params); a submission past the turn's allowance is answered, not
  // recorded, and is no error.
  virtual ToolResult submit(const Workspace& workspace, const std::string& summary, const std::string& params) = 0;
};

// The evaluator stage each evaluation tool runs through; nullopt for the other tools.
std::optional<Stage> tool_stage(const std::string& tool_name);

// --- Knowledge seam --------------------------------------------------------------------------------------

// The closed set of record_knowledge kinds: strategy, failed_attempt, hardware, constraint, action_plan.
const std::vector<std::string>& knowledge_kinds();

class KnowledgeAccess {
 public:
  virtual ~KnowledgeAccess() = default;
  // The notes of one kind, or all of them when `topic` is empty. An unknown topic throws WorkspaceError
  // naming the kinds (the tool turns it into an error result).
  virtual std::string read(const std::string& topic) = 0;
  // Appends a note; `kind` is one of knowledge_kinds() (checked by the tool's schema).
  virtual void record(const std::string& kind, const std::string& text) = 0;
};

// --- Review seam -----------------------------------------------------------------------------------------

// A reviewer's binding ruling on a recorded candidate (the Disciplinarian's rule tool): a rejected candidate can
// become neither the head of a lineage nor the best. The text is for the model; an unknown candidate is an
// error result.
class ReviewAccess {
 public:
  virtual ~ReviewAccess() = default;
  virtual ToolResult rule(const std::string& candidate_id, bool accepted, const std::string& reason) = 0;
};

// --- Toolbox ---------------------------------------------------------------------------------------------

// The contract names, in documentation order.
const std::vector<std::string>& tool_names();

struct ToolSettings {
  std::size_t max_output_chars = 20000;  // longer outputs keep half head, half tail and say how much was cut
};
// agent.tool_output_max_chars.
ToolSettings tool_settings_from_config(const Config& config);

enum class ToolStatus {
  ok,
  failed,        // the tool ran and reports a failure (missing file, escape, failing build)
  format_error,  // unknown tool or arguments that do not match its schema
};

struct ToolOutcome {
  ToolStatus status = ToolStatus::ok;
  std::string content;
  bool submitted = false;    // the submit tool ran
  std::string summary;       // submit's summary
  std::string budget_spent;  // not run: this run budget is spent, and the turn ends
  bool is_error() const { return status != ToolStatus::ok; }
};

class Toolbox {
 public:
  // `enabled` lists the tools this agent gets (a role's tools); empty means all. Throws InvalidInput for a
  // name that is not a tool. The backends may be null: their tools then answer with an error.
  Toolbox(const Workspace& workspace, EvaluationBackend* evaluator, KnowledgeAccess* knowledge,
          std::vector<std::string> enabled = {}, ToolSettings settings = {}, ReviewAccess* review = nullptr);

  // Name, one-line description and JSON Schema of each enabled tool, in contract order.
  std::vector<ToolSpec> specs() const;
  // Validates the arguments against the tool's schema, runs it and cuts long output.
  ToolOutcome call(const std::string& name, const nlohmann::json& input);

  // The run's shared budgets (wall time, GPU-seconds, evaluations): once `check` names a spent one, no tool runs
  // and the turn ends at its next tool call. Without a check every call runs.
  using BudgetCheck = std::function<std::optional<std::string>()>;
  void set_budget_check(BudgetCheck check) { m_budget_check = std::move(check); }
  std::optional<std::string> budget_spent() const;

 private:
  ToolOutcome run(const std::string& name, const nlohmann::json& input);
  bool can_edit() const;  // write_file or edit_file is enabled: the agent's workspace holds its own kernel

  const Workspace& m_workspace;
  EvaluationBackend* m_evaluator;
  KnowledgeAccess* m_knowledge;
  ReviewAccess* m_review;
  std::vector<std::string> m_enabled;
  ToolSettings m_settings;
  BudgetCheck m_budget_check;
};

// Keeps `text` whole when it fits in `max_chars`, else its head and tail with a note of how many characters
// were left out in between.
std::string truncate_middle(const std::string& text, std::size_t max_chars);

}  // namespace evoteam
