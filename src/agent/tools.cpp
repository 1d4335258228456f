// The agent's tools: schemas the model sees, argument checks, and dispatch to the sandbox and backends.
#include <evoteam/agent/tools.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/history/knowledge_kind.hpp>

#include <algorithm>

namespace evoteam {

namespace {

struct ToolDefinition {
  const char* name;
  const char* description;
  std::vector<std::pair<const char*, const char*>> arguments;  // name, description
  std::vector<const char*> required;
};

// The optional argument of the tools that build: param changes over the head's values.
constexpr std::pair<const char*, const char*> k_params = {
    "params", "param changes over the head's values, e.g. \"TILE_M=64, UNROLL=4\"; omit to keep the head's"};

const std::vector<ToolDefinition>& definitions() {
  static const std::vector<ToolDefinition> tools = {
      {"read_file", "Read a text file of your workspace.", {{"path", "path relative to the workspace"}}, {"path"}},
      {"write_file",
       "Create or overwrite a file of your workspace with the given content.",
       {{"path", "path relative to the workspace"}, {"content", "the whole new content of the file"}},
       {"path", "content"}},
      {"edit_file",
       "Replace the one occurrence of `old` with `new` in a workspace file; fails if `old` is absent or appears "
       "more than once.",
       {{"path", "path relative to the workspace"},
        {"old", "exact text to replace, whitespace included"},
        {"new", "text to put in its place"}},
       {"path", "old", "new"}},
      {"list_files",
       "List the files and folders under a folder of your workspace ('.' for all).",
       {{"path", "folder relative to the workspace"}},
       {"path"}},
      {"compile", "Build the kernel in your workspace and report the compiler's errors.", {k_params}, {}},
      {"run_tests", "Build the kernel and check it against the reference on the task's workloads.", {k_params}, {}},
      {"benchmark", "Build, check and time the kernel; reports the time and speedup per workload.", {k_params}, {}},
      {"profile", "Build, check, time and profile the kernel; reports its hardware metrics.", {k_params}, {}},
      {"read_knowledge",
       "Read the team's knowledge notes: one topic (strategy, failed_attempt, hardware, constraint, "
       "action_plan) or, without a topic, all of them.",
       {{"topic", "one of the knowledge kinds; omit for all"}},
       {}},
      {"record_knowledge",
       "Record a note for this and later teams: a validated strategy, a failed attempt, a hardware fact, the "
       "action plan or a constraint.",
       {{"kind", "strategy, failed_attempt, hardware, constraint or action_plan"},
        {"text", "the note: its first line is its title"}},
       {"kind", "text"}},
      {"rule",
       "Rule on a recorded candidate: accept it, or reject it so that it can become neither a lineage's head nor the "
       "best. The ruling and its reason are recorded for the team.",
       {{"candidate", "the candidate's id, e.g. c0007"},
        {"ruling", "accept or reject"},
        {"reason", "why: the checklist items and the evidence behind them"}},
       {"candidate", "ruling", "reason"}},
      {"record_candidate",
       "Record the kernel in your workspace (at these params) as a candidate of the run now: it is evaluated in full "
       "and kept, and you go on working. Each one uses one of your turn's candidate submissions.",
       {{"summary", "what you changed, why, and what the measurements showed"}, k_params},
       {"summary"}},
      {"submit",
       "Submit the kernel in your workspace (at these params) as your result and end your turn.",
       {{"summary", "what you changed, why, and what the measurements showed"}, k_params},
       {"summary"}},
  };
  return tools;
}

const ToolDefinition* find_definition(const std::string& name) {
  for (const ToolDefinition& tool : definitions())
    if (name == tool.name) return &tool;
  return nullptr;
}

// The closed set of an argument's values, or nullptr when it is free text.
const std::vector<std::string>* allowed_values(const ToolDefinition& tool, const std::string& argument) {
  static const std::vector<std::string> rulings = {"accept", "reject"};
  if (argument == "kind" && std::string(tool.name) == "record_knowledge") return &knowledge_kinds();
  if (argument == "ruling" && std::string(tool.name) == "rule") return &rulings;
  return nullptr;
}

nlohmann::json schema_of(const ToolDefinition& tool) {
  nlohmann::json properties = nlohmann::json::object();
  for (const auto& [name, description] : tool.arguments) {
    properties[name] = {{"type", "string"}, {"description", description}};
    if (const std::vector<std::string>* values = allowed_values(tool, name)) properties[name]["enum"] = *values;
  }
  nlohmann::json required = nlohmann::json::array();
  for (const char* name : tool.required) required.push_back(name);
  return {{"type", "object"}, {"properties", properties}, {"required", required}, {"additionalProperties", false}};
}

// The schemas are flat objects of strings, so the check is short; the message tells the model what to fix.
std::string argument_problem(const ToolDefinition& tool, const nlohmann::json& input) {
  if (!input.is_object()) return "arguments must be a JSON object, got " + input.dump();
  for (const char* name : tool.required)
    if (!input.contains(name)) return std::string("missing argument '") + name + "'";
  for (const auto& item : input.items()) {
    // Named references, not structured bindings: clang before 16 cannot capture a binding in a lambda.
    const std::string& key = item.key();
    const nlohmann::json& value = item.value();
    auto known = std::find_if(tool.arguments.begin(), tool.arguments.end(),
                              [&](const auto& argument) { return key == argument.first; });
    if (known == tool.arguments.end()) return "unknown argument '" + key + "'";
    if (!value.is_string()) return "argument '" + key + "' must be a string, got " + value.type_name();
    if (const std::vector<std::string>* values = allowed_values(tool, key))
      if (std::find(values->begin(), values->end(), value.get<std::string>()) == values->end())
        return "argument '" + key + "' must be one of " + join(*values, ", ");
  }
  return "";
}

ToolOutcome error_outcome(ToolStatus status, std::string message) {
  ToolOutcome outcome;
  outcome.status = status;
  outcome.content = "error: " + std::move(message);
  return outcome;
}

ToolOutcome from_result(const ToolResult& result) {
  ToolOutcome outcome;
  outcome.status = result.is_error ? ToolStatus::failed : ToolStatus::ok;
  outcome.content = result.content;
  return outcome;
}

}  // namespace

std::optional<Stage> tool_stage(const std::string& tool_name) {
  if (tool_name == "compile") return Stage::build;
  if (tool_name == "run_tests") return Stage::correctness;
  if (tool_name == "benchmark") return Stage::timing;
  if (tool_name == "profile") return Stage::profile;
  return std::nullopt;
}

const std::vector<std::string>& knowledge_kinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> names;
    for (KnowledgeKind kind : recordable_knowledge_kinds()) names.push_back(to_string(kind));
    return names;
  }();
  return kinds;
}

const std::vector<std::string>& tool_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> result;
    for (const ToolDefinition& tool : definitions()) result.emplace_back(tool.name);
    return result;
  }();
  return names;
}

std::string truncate_middle(const std::string& text, std::size_t max_chars) {
  if (text.size() <= max_chars || max_chars == 0) return text;
  // Cut on UTF-8 character boundaries so the result stays valid text.
  auto boundary = [&](std::size_t pos) {
    while (pos > 0 && pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) --pos;
    return pos;
  };
  const std::size_t head = boundary(max_chars / 2);
  const std::size_t tail = boundary(text.size() - max_chars / 2);
  return text.substr(0, head) + "\n[... " + std::to_string(tail - head) +
         " characters left out; read a narrower part if you need them ...]\n" + text.substr(tail);
}

bool Toolbox::can_edit() const {
  return std::find(m_enabled.begin(), m_enabled.end(), "write_file") != m_enabled.end() ||
         std::find(m_enabled.begin(), m_enabled.end(), "edit_file") != m_enabled.end();
}

Toolbox::Toolbox(const Workspace& workspace, EvaluationBackend* evaluator, KnowledgeAccess* knowledge,
                 std::vector<std::string> enabled, ToolSettings settings, ReviewAccess* review)
    : m_workspace(workspace), m_evaluator(evaluator), m_knowledge(knowledge), m_review(review), m_settings(settings) {
  if (enabled.empty()) enabled = tool_names();
  for (const std::string& name : enabled)
    if (find_definition(name) == nullptr) throw InvalidInput("unknown tool '" + name + "'");
  // Contract order, whatever order the role listed them in.
  for (const std::string& name : tool_names())
    if (std::find(enabled.begin(), enabled.end(), name) != enabled.end()) m_enabled.push_back(name);
}

std::optional<std::string> Toolbox::budget_spent() const { return m_budget_check ? m_budget_check() : std::nullopt; }

std::vector<ToolSpec> Toolbox::specs() const {
  std::vector<ToolSpec> specs;
  for (const std::string& name : m_enabled) {
    const ToolDefinition& tool = *find_definition(name);
    specs.push_back({tool.name, tool.description, schema_of(tool)});
  }
  return specs;
}

ToolOutcome Toolbox::call(const std::string& name, const nlohmann::json& input) {
  const ToolDefinition* tool = find_definition(name);
  if (tool == nullptr || std::find(m_enabled.begin(), m_enabled.end(), name) == m_enabled.end()) {
    return error_outcome(ToolStatus::format_error,
                         "unknown tool '" + name + "'; your tools are: " + join(m_enabled, ", "));
  }
  if (std::string problem = argument_problem(*tool, input); !problem.empty())
    return error_outcome(ToolStatus::format_error, name + ": " + problem);
  if (std::optional<std::string> spent = budget_spent()) {
    ToolOutcome outcome = error_outcome(ToolStatus::failed, "not run: " + *spent + "; your turn ends");
    outcome.budget_spent = *spent;
    return outcome;
  }
  ToolOutcome outcome;
  try {
    outcome = run(name, input);
  } catch (const WorkspaceError& error) {
    outcome = error_outcome(ToolStatus::failed, error.what());
  }
  outcome.content = truncate_middle(outcome.content, m_settings.max_output_chars);
  return outcome;
}

ToolOutcome Toolbox::run(const std::string& name, const nlohmann::json& input) {
  auto arg = [&](const char* key) { return input.value(key, std::string()); };
  ToolOutcome outcome;
  if (name == "read_file") {
    outcome.content = m_workspace.read(arg("path"));
  } else if (name == "write_file") {
    m_workspace.write(arg("path"), arg("content"));
    outcome.content = "wrote " + std::to_string(arg("content").size()) + " bytes to " + arg("path");
  } else if (name == "edit_file") {
    m_workspace.edit(arg("path"), arg("old"), arg("new"));
    outcome.content = "edited " + arg("path");
  } else if (name == "list_files") {
    outcome.content = m_workspace.list(arg("path"));
  } else if (std::optional<Stage> stage = tool_stage(name)) {
    if (m_evaluator == nullptr) return error_outcome(ToolStatus::failed, "no evaluator is available to this agent");
    return from_result(m_evaluator->evaluate(m_workspace, *stage, arg("params")));
  } else if (name == "read_knowledge" || name == "record_knowledge") {
    if (m_knowledge == nullptr)
      return error_outcome(ToolStatus::failed, "no knowledge base is available to this agent");
    if (name == "read_knowledge") {
      outcome.content = m_knowledge->read(arg("topic"));
    } else {
      m_knowledge->record(arg("kind"), arg("text"));
      outcome.content = "recorded in " + arg("kind");
    }
  } else if (name == "rule") {
    if (m_review == nullptr) return error_outcome(ToolStatus::failed, "no review is available to this agent");
    return from_result(m_review->rule(arg("candidate"), arg("ruling") == "accept", arg("reason")));
  } else if (name == "record_candidate") {
    if (m_evaluator == nullptr) return error_outcome(ToolStatus::failed, "no evaluator is available to this agent");
    return from_result(m_evaluator->submit(m_workspace, arg("summary"), arg("params")));
  } else if (name == "submit") {
    // A role that cannot edit has no kernel of its own: its submit only ends the turn.
    if (m_evaluator != nullptr && can_edit()) {
      ToolResult recorded = m_evaluator->submit(m_workspace, arg("summary"), arg("params"));
      if (recorded.is_error) return from_result(recorded);  // bad params: the model fixes them, the turn goes on
      outcome.content = recorded.content;
    } else {
      outcome.content = "submitted";
    }
    outcome.submitted = true;
    outcome.summary = arg("summary");
  }
  return outcome;
}

}  // namespace evoteam
