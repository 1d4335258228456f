#pragma once
// The shape of the team for one cycle, as the supervisor decided it (contract: cycles/<nnnn>/team.json holds at
// least roles[{name}], pattern, directives, rationale, evidence).
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evoteam {

enum class Pattern { solo, pipeline, parallel };
// none: agents get no knowledge; digest: every agent gets the knowledge digest in its prompt;
// curated: as digest, and a Knowledge Integrator screens attempts against recorded failures and keeps the plan.
enum class KnowledgeMode { none, digest, curated };

std::string to_string(Pattern pattern);
std::string to_string(KnowledgeMode mode);

struct RoleAssignment {
  std::string name;              // a role file's name: optimizer, debugger, ...
  double budget_share = 0;       // fraction of the cycle's budget; shares sum to 1
  std::string lineage = "best";  // which candidate line it works on: "best" or "failing" (parallel pattern)
};

struct TeamSpec {
  std::vector<RoleAssignment> roles;  // in pipeline order
  Pattern pattern = Pattern::solo;
  std::vector<std::string> directives;
  KnowledgeMode knowledge = KnowledgeMode::digest;
  std::string rationale;
  nlohmann::json evidence = nlohmann::json::array();  // [{signal, value, evidence}]
  std::string decided_by;                             // rules | llm | llm-fallback-rules | fixed | single

  bool has_role(const std::string& name) const;
  std::vector<std::string> role_names() const;
  nlohmann::json to_json() const;
};

// Parses and validates a TeamSpec (an LLM supervisor's proposal, or team.json on resume). Roles must be in
// `known_roles`, shares positive and summing to 1 (±0.01); throws InvalidInput naming the field.
TeamSpec team_spec_from_json(const nlohmann::json& value, const std::set<std::string>& known_roles);

// The JSON schema an LLM supervisor must answer with (rendered into its prompt).
nlohmann::json team_spec_schema();

// Human summary of what changed between two teams: "+debugger, -profiling-scientist, pattern solo→pipeline".
std::string describe_change(const TeamSpec& before, const TeamSpec& after);

}  // namespace evoteam
