// The campaign's suite resolution, the budget split with its pool, campaign.json and the campaign's end rule.
#include <gtest/gtest.h>

#include <fstream>

#include <evoteam/campaign/campaign.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

using testing::TempDir;

std::filesystem::path make_task(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "task.json") << "{}\n";
  return std::filesystem::weakly_canonical(dir);
}

void write_text(const std::filesystem::path& file, const std::string& text) { std::ofstream(file) << text; }

std::vector<std::string> names(const std::vector<SuiteEntry>& entries) {
  std::vector<std::string> result;
  for (const SuiteEntry& entry : entries) result.push_back(entry.task_dir.filename().string());
  return result;
}

TEST(CampaignSuite, ADirectoryIsItsChildrenThatHoldATaskInNameOrder) {
  TempDir dir;
  make_task(dir / "suite" / "zeta");
  make_task(dir / "suite" / "alpha");
  std::filesystem::create_directories(dir / "suite" / "common");  // no task.json: not a task
  const std::vector<SuiteEntry> entries = resolve_suite((dir / "suite").string());
  EXPECT_EQ(names(entries), (std::vector<std::string>{"alpha", "zeta"}));
  for (const SuiteEntry& entry : entries) {
    EXPECT_TRUE(entry.task_dir.is_absolute());
    EXPECT_EQ(entry.weight, 1.0);
  }
}

TEST(CampaignSuite, ATaskDirectoryIsASuiteOfOne) {
  TempDir dir;
  const std::filesystem::path task = make_task(dir / "only");
  const std::vector<SuiteEntry> entries = resolve_suite(task.string());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].task_dir, task);
}

TEST(CampaignSuite, AGlobKeepsTheMatchesThatHoldATask) {
  TempDir dir;
  make_task(dir / "host_b");
  make_task(dir / "host_a");
  make_task(dir / "gpu_a");
  std::filesystem::create_directories(dir / "host_empty");
  EXPECT_EQ(names(resolve_suite((dir / "host_*").string())), (std::vector<std::string>{"host_a", "host_b"}));
  EXPECT_THROW(resolve_suite((dir / "none_*").string()), InvalidInput);
}

TEST(CampaignSuite, AListFileGivesWeightsAndSkipsComments) {
  TempDir dir;
  make_task(dir / "kernels" / "a");
  make_task(dir / "kernels" / "b");
  make_task(dir / "kernels" / "c");
  write_text(dir / "suite.txt",
             "# the overnight suite\n"
             "kernels/a 2\n"
             "\n"
             "  kernels/b   # weight 1 by default\n"
             "kernels/c 0.5\n");
  const std::vector<SuiteEntry> entries = resolve_suite((dir / "suite.txt").string());
  EXPECT_EQ(names(entries), (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].weight, 2.0);
  EXPECT_EQ(entries[1].weight, 1.0);
  EXPECT_EQ(entries[2].weight, 0.5);
}

TEST(CampaignSuite, AListFileNamesTheLineOfWhatItCannotUse) {
  TempDir dir;
  make_task(dir / "a");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a 0\n", "suite.txt:1"},        {"a -1\n", "suite.txt:1"},           {"a two\n", "weight"},
      {"a 1 extra\n", "extra"},        {"\n# x\nmissing\n", "suite.txt:3"}, {"a\na 2\n", "twice"},
      {"# only comments\n", "no task"}};
  for (const auto& [text, expected] : cases) {
    write_text(dir / "suite.txt", text);
    try {
      resolve_suite((dir / "suite.txt").string());
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InvalidInput& error) {
      EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << text << " -> " << error.what();
    }
  }
}

TEST(CampaignSuite, NothingThereIsInvalidInput) {
  TempDir dir;
  std::filesystem::create_directories(dir / "empty");
  EXPECT_THROW(resolve_suite((dir / "empty").string()), InvalidInput);
  EXPECT_THROW(resolve_suite((dir / "absent").string()), InvalidInput);
  EXPECT_THROW(resolve_suite(""), InvalidInput);
}

CampaignBudgets evaluations(long long count) {
  CampaignBudgets budgets;
  budgets.evaluations = count;
  return budgets;
}

TEST(CampaignBudget, AnEvenSplitGivesEachTaskItsShareOfWhatIsLeft) {
  // 40 evaluations over three tasks of weight 1: 13, then half of what is left, then the rest.
  const std::optional<CampaignBudgets> first = budget_share(evaluations(40), 1, 3);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->evaluations, 13);
  EXPECT_FALSE(first->gpu_seconds);  // a budget the campaign does not set stays unset
  EXPECT_EQ(budget_share(evaluations(27), 1, 2)->evaluations, 13);
  EXPECT_EQ(budget_share(evaluations(14), 1, 1)->evaluations, 14);
}

TEST(CampaignBudget, WeightsSplitInProportion) {
  CampaignBudgets total;
  total.evaluations = 40;
  total.usd = 8.0;
  total.wall_s = 3600;
  const std::optional<CampaignBudgets> share = budget_share(total, 2, 4);  // weights 2, 1, 1
  ASSERT_TRUE(share);
  EXPECT_EQ(share->evaluations, 20);
  EXPECT_DOUBLE_EQ(*share->usd, 4.0);
  EXPECT_DOUBLE_EQ(*share->wall_s, 1800.0);
}

TEST(CampaignBudget, ACountShareIsAtLeastOneWhileAnyIsLeftAndNothingOnceSpent) {
  EXPECT_EQ(budget_share(evaluations(2), 1, 5)->evaluations, 1);
  EXPECT_FALSE(budget_share(evaluations(0), 1, 1));
  EXPECT_FALSE(budget_share(evaluations(-3), 1, 1));  // overspent
  CampaignBudgets usd;
  usd.usd = 0.0;
  EXPECT_FALSE(budget_share(usd, 1, 2));
  EXPECT_TRUE(budget_share(CampaignBudgets{}, 1, 2));  // no budget at all: every task runs unlimited
}

Campaign campaign_of(const std::vector<CampaignTaskState>& states) {
  Campaign campaign;
  campaign.id = "campaign-test";
  campaign.suite = "suite";
  campaign.budgets = evaluations(40);
  for (std::size_t i = 0; i < states.size(); ++i) {
    CampaignTask task;
    task.name = "t" + std::to_string(i);
    task.task_dir = "/tasks/t" + std::to_string(i);
    task.state = states[i];
    campaign.tasks.push_back(task);
  }
  return campaign;
}

TEST(CampaignBudget, ATaskThatEndsEarlyReturnsWhatItDidNotSpendToThePool) {
  Campaign campaign = campaign_of({CampaignTaskState::finished, CampaignTaskState::running, CampaignTaskState::pending,
                                   CampaignTaskState::built_not_timed});
  campaign.tasks[0].budget = evaluations(10);
  campaign.tasks[0].spent = evaluations(4);  // target reached after 4 of its 10
  campaign.tasks[1].budget = evaluations(10);
  campaign.tasks[1].spent = evaluations(2);  // still running: it holds its whole share
  const CampaignBudgets left = budgets_left(campaign.budgets, committed_budgets(campaign));
  EXPECT_EQ(left.evaluations, 26);
  // The pending task is the last one without a share: it gets all of it.
  EXPECT_EQ(budget_share(left, 1, 1)->evaluations, 26);
}

TEST(CampaignFile, RoundTripsThroughJsonAndRejectsWhatIsNotACampaign) {
  TempDir dir;
  Campaign campaign = campaign_of({CampaignTaskState::finished, CampaignTaskState::skipped});
  campaign.created = "2026-12-05T06:45:12Z";
  campaign.settings = {{"team", "evolving"}, {"optimize_args", {"--provider", "builtin"}}};
  campaign.tasks[0].run_dir = "runs/r1";
  campaign.tasks[0].exit_code = 5;
  campaign.tasks[0].weight = 2;
  campaign.tasks[0].spent = evaluations(7);
  campaign.tasks[1].reason = "the campaign's budget was spent";
  write_campaign(dir.path(), campaign);
  EXPECT_TRUE(is_campaign_dir(dir.path()));
  const nlohmann::json written = read_json_file(dir / k_campaign_json_name);
  EXPECT_EQ(written["schema"], 1);
  EXPECT_EQ(written["kind"], "campaign");
  EXPECT_EQ(written["tasks"][1]["run_dir"], nullptr);
  EXPECT_EQ(written["budgets"]["gpu_seconds"], nullptr);
  const Campaign read = read_campaign(dir.path());
  EXPECT_EQ(read.to_json(), campaign.to_json());

  write_text(dir / k_campaign_json_name, R"({"schema": 1, "kind": "run", "tasks": []})");
  EXPECT_THROW(read_campaign(dir.path()), InvalidInput);
  write_text(dir / k_campaign_json_name, R"({"schema": 1, "kind": "campaign", "status": "running", "tasks": [
      {"name": "a", "task_dir": "/a", "state": "dreaming"}]})");
  EXPECT_THROW(read_campaign(dir.path()), InvalidInput);
}

// What a person may have edited in campaign.json is checked as the flags are: no tasks, a negative budget or a
// weight of 0 is invalid input naming the field, not a campaign that ends at once with exit 0 or a broken invariant.
TEST(CampaignFile, NoTasksANegativeBudgetOrAWeightOfZeroIsRefusedNamingIt) {
  TempDir dir;
  write_campaign(dir.path(), campaign_of({CampaignTaskState::pending}));
  const nlohmann::json valid = read_json_file(dir / k_campaign_json_name);
  const auto refusal = [&](const nlohmann::json& changed) -> std::string {
    write_json_atomic(dir / k_campaign_json_name, changed);
    try {
      read_campaign(dir.path());
    } catch (const InvalidInput& error) {
      return error.what();
    }
    return "";
  };
  nlohmann::json empty = valid;
  empty["tasks"] = nlohmann::json::array();
  EXPECT_NE(refusal(empty).find("\"tasks\" is empty"), std::string::npos);
  nlohmann::json negative = valid;
  negative["budgets"]["evaluations"] = -5;
  EXPECT_NE(refusal(negative).find("budgets: evaluations must be"), std::string::npos);
  negative = valid;
  negative["budgets"]["usd"] = -0.5;
  EXPECT_NE(refusal(negative).find("budgets: usd must be"), std::string::npos);
  nlohmann::json weightless = valid;
  weightless["tasks"][0]["weight"] = 0;
  EXPECT_NE(refusal(weightless).find("weight must be"), std::string::npos);
  EXPECT_EQ(refusal(valid), "");
}

TEST(CampaignEndRule, FollowsTheRunsRuleTaskByTask) {
  using S = CampaignTaskState;
  Campaign all_done = campaign_of({S::finished, S::built_not_timed});
  all_done.tasks[0].exit_code = 0;
  EXPECT_EQ(campaign_end(all_done, false).status, RunStatus::finished);
  EXPECT_EQ(campaign_end(all_done, false).exit_code, 0);

  all_done.tasks[0].exit_code = static_cast<int>(ExitCode::budget_exhausted);
  EXPECT_EQ(campaign_end(all_done, false).exit_code, 5);
  EXPECT_EQ(campaign_end(campaign_of({S::finished, S::skipped}), false).exit_code, 5);

  const CampaignEnd failed = campaign_end(campaign_of({S::finished, S::failed}), false);
  EXPECT_EQ(failed.status, RunStatus::failed);
  EXPECT_EQ(failed.exit_code, 1);

  const CampaignEnd stopped = campaign_end(campaign_of({S::finished, S::pending}), true);
  EXPECT_EQ(stopped.status, RunStatus::stopped);
  EXPECT_EQ(stopped.exit_code, 130);
  EXPECT_EQ(campaign_end(campaign_of({S::stopped, S::failed}), false).exit_code, 130);
}

TEST(CampaignTaskStates, EveryStateHasItsContractWord) {
  for (const char* word : {"pending", "running", "finished", "stopped", "failed", "built_not_timed", "skipped"}) {
    const std::optional<CampaignTaskState> state = parse_campaign_task_state(word);
    ASSERT_TRUE(state) << word;
    EXPECT_EQ(to_string(*state), word);
  }
  EXPECT_FALSE(parse_campaign_task_state("done"));
  EXPECT_FALSE(has_ended(CampaignTaskState::running));
  EXPECT_TRUE(has_ended(CampaignTaskState::built_not_timed));
}

}  // namespace
}  // namespace evoteam
