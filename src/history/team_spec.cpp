#include <evoteam/history/team_spec.hpp>

#include <algorithm>
#include <cmath>

#include <evoteam/core/error.hpp>

namespace evoteam {

std::string to_string(Pattern pattern) {
  switch (pattern) {
    case Pattern::solo: return "solo";
    case Pattern::pipeline: return "pipeline";
    case Pattern::parallel: return "parallel";
  }
  return "solo";
}

std::string to_string(KnowledgeMode mode) {
  switch (mode) {
    case KnowledgeMode::none: return "none";
    case KnowledgeMode::digest: return "digest";
    case KnowledgeMode::curated: return "curated";
  }
  return "digest";
}

bool TeamSpec::has_role(const std::string& name) const {
  return std::any_of(roles.begin(), roles.end(), [&](const RoleAssignment& role) { return role.name == name; });
}

std::vector<std::string> TeamSpec::role_names() const {
  std::vector<std::string> names;
  for (const RoleAssignment& role : roles) names.push_back(role.name);
  return names;
}

nlohmann::json TeamSpec::to_json() const {
  nlohmann::json role_list = nlohmann::json::array();
  for (const RoleAssignment& role : roles)
    role_list.push_back({{"name", role.name}, {"budget_share", role.budget_share}, {"lineage", role.lineage}});
  return {{"roles", role_list},       {"pattern", to_string(pattern)},
          {"directives", directives}, {"knowledge", to_string(knowledge)},
          {"rationale", rationale},   {"evidence", evidence},
          {"decided_by", decided_by}};
}

TeamSpec team_spec_from_json(const nlohmann::json& value, const std::set<std::string>& known_roles) {
  auto fail = [](const std::string& what) { throw InvalidInput("team spec: " + what); };
  if (!value.is_object()) fail("must be a JSON object");
  TeamSpec spec;
  if (!value.contains("roles") || !value["roles"].is_array() || value["roles"].empty())
    fail("'roles' must be a non-empty array");
  double total = 0;
  std::set<std::string> seen;
  for (const nlohmann::json& role : value["roles"]) {
    if (!role.is_object() || !role.contains("name") || !role["name"].is_string())
      fail("each of 'roles' needs a string 'name'");
    RoleAssignment assignment;
    assignment.name = role["name"].get<std::string>();
    if (!known_roles.count(assignment.name)) fail("unknown role '" + assignment.name + "'");
    if (!seen.insert(assignment.name).second) fail("role '" + assignment.name + "' appears twice");
    assignment.budget_share = role.value("budget_share", 0.0);
    if (!(assignment.budget_share > 0) || assignment.budget_share > 1)
      fail("'roles[" + assignment.name + "].budget_share' must be in (0, 1]");
    assignment.lineage = role.value("lineage", std::string("best"));
    if (assignment.lineage != "best" && assignment.lineage != "failing")
      fail("'roles[" + assignment.name + "].lineage' must be \"best\" or \"failing\"");
    total += assignment.budget_share;
    spec.roles.push_back(assignment);
  }
  if (std::fabs(total - 1.0) > 0.01) fail("budget shares must sum to 1, got " + std::to_string(total));
  std::string pattern = value.value("pattern", std::string("solo"));
  if (pattern == "solo")
    spec.pattern = Pattern::solo;
  else if (pattern == "pipeline")
    spec.pattern = Pattern::pipeline;
  else if (pattern == "parallel")
    spec.pattern = Pattern::parallel;
  else
    fail("'pattern' must be solo, pipeline or parallel, got '" + pattern + "'");
  if (spec.pattern == Pattern::solo && spec.roles.size() != 1) fail("pattern 'solo' takes exactly one role");
  std::string knowledge = value.value("knowledge", std::string("digest"));
  if (knowledge == "none")
    spec.knowledge = KnowledgeMode::none;
  else if (knowledge == "digest")
    spec.knowledge = KnowledgeMode::digest;
  else if (knowledge == "curated")
    spec.knowledge = KnowledgeMode::curated;
  else
    fail("'knowledge' must be none, digest or curated");
  if (value.contains("directives")) {
    if (!value["directives"].is_array()) fail("'directives' must be an array of strings");
    for (const nlohmann::json& directive : value["directives"]) {
      if (!directive.is_string()) fail("'directives' must be an array of strings");
      spec.directives.push_back(directive.get<std::string>());
    }
  }
  if (!value.contains("rationale") || !value["rationale"].is_string() || value["rationale"].get<std::string>().empty())
    fail("'rationale' must be a non-empty string");
  spec.rationale = value["rationale"].get<std::string>();
  spec.evidence = value.value("evidence", nlohmann::json::array());
  spec.decided_by = value.value("decided_by", std::string(""));
  return spec;
}

nlohmann::json team_spec_schema() {
  return nlohmann::json::parse(R"schema({
  "type": "object",
  "required": ["roles", "pattern", "rationale", "evidence"],
  "properties": {
    "roles": {"type": "array", "minItems": 1, "items": {"type": "object", "required": ["name", "budget_share"],
      "properties": {"name": {"type": "string"}, "budget_share": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                     "lineage": {"enum": ["best", "failing"]}}}},
    "pattern": {"enum": ["solo", "pipeline", "parallel"]},
    "directives": {"type": "array", "items": {"type": "string"}},
    "knowledge": {"enum": ["none", "digest", "curated"]},
    "rationale": {"type": "string"},
    "evidence": {"type": "array", "items": {"type": "object"}},
    "stop": {"type": "boolean", "description": "true to end the run (e.g. at the roofline)"}
  }
})schema");
}

std::string describe_change(const TeamSpec& before, const TeamSpec& after) {
  std::string text;
  auto add = [&](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
  for (const RoleAssignment& role : after.roles)
    if (!before.has_role(role.name)) add("+" + role.name);
  for (const RoleAssignment& role : before.roles)
    if (!after.has_role(role.name)) add("-" + role.name);
  if (before.pattern != after.pattern) add("pattern " + to_string(before.pattern) + "→" + to_string(after.pattern));
  if (before.knowledge != after.knowledge)
    add("knowledge " + to_string(before.knowledge) + "→" + to_string(after.knowledge));
  if (before.directives != after.directives) add("directives changed");
  return text.empty() ? "no change" : text;
}

}  // namespace evoteam
