// TeamSpec: the team.json contract round-trips, and invalid proposals are rejected naming the field.
#include <gtest/gtest.h>

#include <evoteam/core/error.hpp>
#include <evoteam/history/team_spec.hpp>

namespace evoteam {
namespace {

const std::set<std::string> k_known = {"optimizer", "debugger", "profiling-scientist", "knowledge-integrator",
                                       "disciplinarian"};

nlohmann::json valid_spec() {
  return {{"roles",
           {{{"name", "profiling-scientist"}, {"budget_share", 0.25}},
            {{"name", "optimizer"}, {"budget_share", 0.5}},
            {{"name", "debugger"}, {"budget_share", 0.25}, {"lineage", "failing"}}}},
          {"pattern", "parallel"},
          {"directives", {"one measurable change per candidate"}},
          {"knowledge", "curated"},
          {"rationale", "a hard path blocks the best line"},
          {"evidence", {{{"signal", "recurring_error"}, {"value", 3}, {"evidence", "c0004, c0005, c0006"}}}},
          {"decided_by", "llm"}};
}

std::string error_of(const nlohmann::json& spec) {
  try {
    team_spec_from_json(spec, k_known);
  } catch (const InvalidInput& error) {
    return error.what();
  }
  return "";
}

TEST(TeamSpec, JsonRoundTripKeepsEveryField) {
  TeamSpec spec = team_spec_from_json(valid_spec(), k_known);
  ASSERT_EQ(spec.roles.size(), 3u);
  EXPECT_EQ(spec.role_names(), (std::vector<std::string>{"profiling-scientist", "optimizer", "debugger"}));
  EXPECT_EQ(spec.roles[2].lineage, "failing");
  EXPECT_EQ(spec.roles[0].lineage, "best");
  EXPECT_EQ(spec.pattern, Pattern::parallel);
  EXPECT_EQ(spec.knowledge, KnowledgeMode::curated);
  EXPECT_TRUE(spec.has_role("debugger"));
  EXPECT_FALSE(spec.has_role("disciplinarian"));

  nlohmann::json written = spec.to_json();
  // The team.json contract: roles[{name}], pattern, directives, rationale, evidence.
  for (const char* key : {"roles", "pattern", "directives", "rationale", "evidence"})
    EXPECT_TRUE(written.contains(key)) << key;
  EXPECT_EQ(written["roles"][0]["name"], "profiling-scientist");
  TeamSpec again = team_spec_from_json(written, k_known);
  EXPECT_EQ(again.to_json(), written);
  EXPECT_EQ(describe_change(spec, again), "no change");
}

TEST(TeamSpec, RejectsUnknownRole) {
  nlohmann::json spec = valid_spec();
  spec["roles"][1]["name"] = "wizard";
  EXPECT_NE(error_of(spec).find("unknown role 'wizard'"), std::string::npos) << error_of(spec);
}

TEST(TeamSpec, RejectsSharesNotSummingToOne) {
  nlohmann::json spec = valid_spec();
  spec["roles"][1]["budget_share"] = 0.3;
  EXPECT_NE(error_of(spec).find("sum to 1"), std::string::npos) << error_of(spec);
  spec["roles"][1]["budget_share"] = 0;
  EXPECT_NE(error_of(spec).find("budget_share"), std::string::npos) << error_of(spec);
}

TEST(TeamSpec, RejectsSoloWithTwoRoles) {
  nlohmann::json spec = {
      {"roles", {{{"name", "optimizer"}, {"budget_share", 0.5}}, {{"name", "debugger"}, {"budget_share", 0.5}}}},
      {"pattern", "solo"},
      {"rationale", "x"}};
  EXPECT_NE(error_of(spec).find("solo"), std::string::npos) << error_of(spec);
  spec["pattern"] = "pipeline";
  EXPECT_EQ(error_of(spec), "");
}

TEST(TeamSpec, RejectsBadPatternAndMissingFields) {
  nlohmann::json spec = valid_spec();
  spec["pattern"] = "swarm";
  EXPECT_NE(error_of(spec).find("'pattern'"), std::string::npos) << error_of(spec);
  spec = valid_spec();
  spec["knowledge"] = "everything";
  EXPECT_NE(error_of(spec).find("'knowledge'"), std::string::npos);
  spec = valid_spec();
  spec.erase("rationale");
  EXPECT_NE(error_of(spec).find("'rationale'"), std::string::npos);
  spec = valid_spec();
  spec["roles"] = nlohmann::json::array();
  EXPECT_NE(error_of(spec).find("'roles'"), std::string::npos);
  spec = valid_spec();
  spec["roles"][2]["name"] = "optimizer";
  EXPECT_NE(error_of(spec).find("twice"), std::string::npos);
  spec = valid_spec();
  spec["roles"][2]["lineage"] = "sideways";
  EXPECT_NE(error_of(spec).find("lineage"), std::string::npos);
  EXPECT_NE(error_of(nlohmann::json::array()).find("object"), std::string::npos);
}

TEST(TeamSpec, DescribeChangeNamesAddedRemovedAndPattern) {
  TeamSpec before = team_spec_from_json(
      {{"roles", {{{"name", "optimizer"}, {"budget_share", 1.0}}}}, {"pattern", "solo"}, {"rationale", "x"}}, k_known);
  TeamSpec after = team_spec_from_json(valid_spec(), k_known);
  std::string change = describe_change(before, after);
  EXPECT_NE(change.find("+debugger"), std::string::npos) << change;
  EXPECT_NE(change.find("+profiling-scientist"), std::string::npos) << change;
  EXPECT_NE(change.find("pattern solo"), std::string::npos) << change;
  EXPECT_NE(describe_change(after, before).find("-debugger"), std::string::npos);
}

TEST(TeamSpec, SchemaRequiresTheContractFields) {
  nlohmann::json schema = team_spec_schema();
  for (const char* key : {"roles", "pattern", "rationale", "evidence"})
    EXPECT_NE(std::find(schema["required"].begin(), schema["required"].end(), key), schema["required"].end()) << key;
}

}  // namespace
}  // namespace evoteam
