// evoteam's tools over MCP: for a CLI member's turn, and for a person's session on an existing run.
#include "team/lab_tool_service.hpp"

#include <algorithm>
#include <filesystem>

#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/team/llm_team.hpp>
#include <evoteam/team/run_tools.hpp>

#include "team/lab_tool_backend.hpp"

namespace evoteam {

namespace {

constexpr const char* k_describe_task = "describe_task";

// The toolbox's tools a CLI does not need from evoteam: it reads and edits its workspace itself.
bool is_file_tool(const std::string& name) {
  return name == "read_file" || name == "write_file" || name == "edit_file" || name == "list_files";
}

}  // namespace

ToolboxMcpService::ToolboxMcpService(Toolbox& toolbox, std::string contract, std::string instructions, Submits submits)
    : m_toolbox(toolbox),
      m_contract(std::move(contract)),
      m_instructions(std::move(instructions)),
      m_submits(submits) {}

std::vector<McpTool> ToolboxMcpService::tools() {
  std::vector<McpTool> tools = {{k_describe_task,
                                 "The task: what the kernel computes, its contract (entry point, files you edit, "
                                 "params and their values, static constraints) and how it is judged.",
                                 {{"type", "object"}, {"properties", nlohmann::json::object()}}}};
  for (const ToolSpec& spec : m_toolbox.specs())
    if (!is_file_tool(spec.name)) tools.push_back({spec.name, spec.description, spec.input_schema});
  return tools;
}

std::vector<std::string> ToolboxMcpService::tool_names() {
  std::vector<std::string> names;
  for (const McpTool& tool : tools()) names.push_back(tool.name);
  return names;
}

McpToolResult ToolboxMcpService::call(const std::string& name, const nlohmann::json& arguments) {
  std::lock_guard<std::mutex> lock(m_mutex);  // one call at a time, as a built-in member makes them
  ++m_calls;
  if (name == k_describe_task) return {m_contract, false};
  if (is_file_tool(name)) return {"unknown tool " + name + ": edit the files of your working directory yourself", true};
  if (m_submitted) return {"not run: you submitted, and your turn is over", true};
  const ToolOutcome outcome = m_toolbox.call(name, arguments);
  if (outcome.submitted && m_submits == Submits::end_the_turn) m_submitted = true;
  if (!outcome.budget_spent.empty()) m_budget_spent = outcome.budget_spent;
  if (!outcome.is_error()) ++m_useful_calls;
  return {outcome.content, outcome.is_error()};
}

bool ToolboxMcpService::submitted() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_submitted;
}

std::optional<std::string> ToolboxMcpService::budget_spent() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_budget_spent;
}

int ToolboxMcpService::calls() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_calls;
}

int ToolboxMcpService::useful_calls() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_useful_calls;
}

std::string describe_task_contract(const Task& task) {
  const std::filesystem::path readme = task.dir / "README.md";
  std::string text = "# Task " + task.name + "\n\n";
  text += std::filesystem::exists(readme) ? read_file(readme) : task.description + "\n";
  text += "\n## Target\n" + to_string(task.target) + (task.archs.empty() ? "" : " " + join(task.archs, ", ")) + "\n";
  text += "\n## Files you edit\n" + join(task.kernel_files, ", ") + " (the reference is " + task.reference_file + ")\n";
  text += "\n## Params\n" + describe_param_space(task) + "\n";
  text += "\n## Static constraints\n" + describe_static_constraints(task) + "\n";
  text +=
      "\n## How it is judged\nEvery candidate is built, checked against the reference on every workload (several "
      "input distributions, the task's tolerances), then timed against the baseline; the speedup is over the "
      "baseline per workload. Pass params as text, e.g. \"TILE_N=64, TILE_K=128\".\n";
  return text;
}

std::string tool_server_instructions(const std::string& scope) {
  return "evoteam's tools for " + scope +
         ": compile, run_tests, benchmark and profile judge the kernel in your working directory with evoteam's "
         "evaluator; submit (or record_candidate) records it as a candidate of the run. describe_task gives the "
         "task's contract.";
}

}  // namespace evoteam

// --- A session on an existing run ----------------------------------------------------------------------------

namespace evoteam {

namespace {

// The tools a person's session gets: no review (it is not a Disciplinarian of a cycle) and no knowledge writes.
const std::vector<std::string>& run_session_tools() {
  static const std::vector<std::string> tools = {"read_file",      "write_file",       "compile",
                                                 "run_tests",      "benchmark",        "profile",
                                                 "read_knowledge", "record_candidate", "submit"};
  return tools;
}

// Owns what the session's toolbox works on, for as long as the server runs.
class RunToolsService : public McpToolService {
 public:
  RunToolsService(Lab& lab, KnowledgeBase& knowledge, const RunToolsSettings& settings, const EvaluationRecord& head)
      : m_workspace(open_workspace(lab, head, settings)),
        m_backend(lab, head, lab.task()->kernel_files,
                  SubmissionTarget{"mcp", "best", settings.cycle, Lab::Screening::off, settings.allowance,
                                   settings.staging_dir}),
        m_knowledge(make_knowledge_access(knowledge, "mcp", 4000, head.candidate_id)),
        m_toolbox(m_workspace, &m_backend, m_knowledge.get(), run_session_tools(), settings.tool_settings),
        m_service(m_toolbox, describe_task_contract(*lab.task()), tool_server_instructions(settings.scope),
                  ToolboxMcpService::Submits::go_on) {
    m_toolbox.set_budget_check([&lab] { return lab.budget_spent(); });
  }

  std::vector<McpTool> tools() override { return m_service.tools(); }
  McpToolResult call(const std::string& name, const nlohmann::json& arguments) override {
    return m_service.call(name, arguments);
  }
  std::string instructions() override { return m_service.instructions(); }

 private:
  static Workspace open_workspace(const Lab& lab, const EvaluationRecord& head, const RunToolsSettings& settings) {
    evoteam::create_directories(settings.workspace);
    for (const std::string& file : lab.task()->kernel_files) {
      const std::filesystem::path mine = settings.workspace / file;
      if (std::filesystem::exists(mine)) continue;
      evoteam::create_directories(mine.parent_path());
      write_file_atomic(mine, read_file(lab.sources_of(head.candidate_id) / file));
    }
    return Workspace(settings.workspace, {}, settings.workspace_limits);
  }

  Workspace m_workspace;
  LabToolBackend m_backend;
  std::unique_ptr<KnowledgeAccess> m_knowledge;
  Toolbox m_toolbox;
  ToolboxMcpService m_service;
};

}  // namespace

std::unique_ptr<McpToolService> make_run_tools(Lab& lab, KnowledgeBase& knowledge, const RunToolsSettings& settings) {
  if (lab.task() == nullptr) throw InvalidInput("the run has no task to evaluate on");
  const RunHistory history = lab.snapshot();
  std::optional<EvaluationRecord> head = history.best();
  if (!head && !history.evaluations.empty()) head = history.evaluations.front();
  if (!head) throw InvalidInput("the run has no candidate yet to start from");
  return std::make_unique<RunToolsService>(lab, knowledge, settings, *head);
}

}  // namespace evoteam
