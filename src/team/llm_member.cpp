// LLM-backed team members: each role is an agent (the tool-calling loop) working in its own workspace on a copy
// of its lineage's head. Its compile/test/benchmark/profile tools go through the lab (counted, not recorded);
// what it submits is evaluated by the lab and becomes a candidate.
#include <evoteam/team/llm_team.hpp>

#include <algorithm>

#include <evoteam/agent/agent.hpp>
#include <evoteam/agent/tools.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/store/store.hpp>

#include "team/lab_tool_backend.hpp"
#include "team/turn_setup.hpp"

namespace evoteam {

namespace {

// The agents' read_knowledge/record_knowledge, served by the run's knowledge base.
class KnowledgeBaseAccess : public KnowledgeAccess {
 public:
  // `candidate`: the head the agent works from, so its notes name the candidate they are about.
  KnowledgeBaseAccess(KnowledgeBase& knowledge, std::string author, std::size_t digest_chars, std::string candidate)
      : m_knowledge(knowledge),
        m_author(std::move(author)),
        m_digest_chars(digest_chars),
        m_candidate(std::move(candidate)) {}

  std::string read(const std::string& topic) override {
    if (topic.empty()) return m_knowledge.digest(m_digest_chars);
    KnowledgeKind kind = kind_named_by_model(topic);
    if (kind == KnowledgeKind::action_plan) return m_knowledge.action_plan();
    std::string text;
    // The run's task's entries (general and older ones too), as in the digest: another task's would mislead.
    for (const KnowledgeEntry& entry : m_knowledge.entries_for_task(kind)) text += format_knowledge_entry(entry);
    return text.empty() ? "(nothing recorded)" : text;
  }

  void record(const std::string& kind_text, const std::string& text) override {
    KnowledgeKind kind = kind_named_by_model(kind_text);
    if (kind == KnowledgeKind::action_plan) {
      m_knowledge.write_action_plan(text);
      return;
    }
    std::string title = text.substr(0, text.find('\n')).substr(0, 120);
    KnowledgeEntry entry{title, {{"author", m_author}}, text};
    if (!m_candidate.empty()) entry.fields[k_field_candidate] = m_candidate;
    m_knowledge.add(kind, entry);
  }

 private:
  // A kind or topic the model named: an unknown one is the model's mistake, answered as a tool error
  // (WorkspaceError), not an invalid-input error that would end the run.
  static KnowledgeKind kind_named_by_model(const std::string& text) {
    try {
      return knowledge_kind_from_string(text);
    } catch (const InvalidInput& error) {
      throw WorkspaceError(error.what());
    }
  }

  KnowledgeBase& m_knowledge;
  std::string m_author;
  std::size_t m_digest_chars;
  std::string m_candidate;
};

bool has_tool(const RoleDefinition& role, const std::string& tool) {
  return std::find(role.tools.begin(), role.tools.end(), tool) != role.tools.end();
}

class LlmMember : public TeamMember {
 public:
  LlmMember(LlmTeam& team, RoleDefinition role) : m_team(team), m_role(std::move(role)) {}

  TurnOutcome act(TurnContext& context) override {
    TurnSetup turn = prepare_turn(context, {m_team.run_dir, m_role.name, m_team.workspace_limits, m_team.digest_chars,
                                            std::to_string(m_team.settings_for(m_role).limits.max_steps) + " steps"});
    const Task& task = *turn.task;
    AgentPrompt prompt{fit_prompt(render(m_role, turn.prompt_values),
                                  task.target == Target::cuda ? task.archs : std::vector<std::string>{}),
                       "Cycle " + std::to_string(context.cycle) + ". Your workspace holds " +
                           join(task.kernel_files, ", ") + " of " + turn.head.candidate_id +
                           ". Work as your role says; call submit with a one-paragraph summary when done." +
                           (has_tool(m_role, "record_candidate")
                                ? " record_candidate records a version as a candidate and lets you go on working."
                                : "")};

    Lab& lab = *context.lab;
    LabToolBackend backend(lab, turn.head, task.kernel_files, turn.submission);
    KnowledgeBaseAccess knowledge(*context.knowledge, m_role.name, m_team.digest_chars, turn.head.candidate_id);
    LabReview review(lab, *context.knowledge, m_role.name);
    Toolbox tools(turn.workspace, &backend, &knowledge, m_role.tools, m_team.tool_settings, &review);
    tools.set_budget_check([&lab] { return lab.budget_spent(); });
    AgentResult result = run_agent(m_team.settings_for(m_role), prompt, *m_team.provider, tools, *m_team.meter,
                                   turn.member_dir / "transcript.jsonl");

    TurnOutcome outcome;
    outcome.usage.tokens = static_cast<long long>(result.usage.total());
    outcome.usage.cost_usd = result.cost_usd;
    outcome.usage.evaluations = backend.trials();
    outcome.provider_refused = result.provider_refused;
    outcome.summary = to_string(result.stop) + ": " + (result.summary.empty() ? result.detail : result.summary);
    for (const LabOutcome& submitted : backend.submissions()) {
      outcome.usage.evaluations += submitted.reused ? 0 : 1;
      outcome.summary += " → " + describe_record(submitted.record);
    }
    outcome.handoff_note = outcome.summary;
    return outcome;
  }

 private:
  LlmTeam& m_team;
  RoleDefinition m_role;
};

}  // namespace

AgentSettings LlmTeam::settings_for(const RoleDefinition& role) const {
  AgentSettings settings = agent_settings;
  settings.role = role.name;
  settings.model = role.model.empty() ? model : role.model;
  if (context_window > 0 && settings.model == model)
    settings.context_window = context_window;
  else if (prices)
    if (const ModelInfo* info = prices->find(settings.model); info != nullptr)
      settings.context_window = info->max_input_tokens;
  return settings;
}

std::unique_ptr<TeamMember> LlmTeam::make_member(const RoleAssignment& assignment) {
  auto it = roles.find(assignment.name);
  if (it == roles.end())
    throw InvalidInput("no role file for '" + assignment.name + "' in " + default_roles_dir().string());
  return std::make_unique<LlmMember>(*this, it->second);
}

std::unique_ptr<KnowledgeAccess> make_knowledge_access(KnowledgeBase& knowledge, std::string author,
                                                       std::size_t digest_chars, std::string candidate) {
  return std::make_unique<KnowledgeBaseAccess>(knowledge, std::move(author), digest_chars, std::move(candidate));
}

}  // namespace evoteam
