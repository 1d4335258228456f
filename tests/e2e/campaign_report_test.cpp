// `evoteam report CAMPAIGN` and `evoteam compare CAMPAIGN_A CAMPAIGN_B` end to end: two real runs of the builtin
// team on host tasks with a tiny budget, a campaign.json written around them by hand as the campaign runner writes
// it (with a CUDA task it built but could not time), and the report's numbers checked against the runs' own files.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "support/test_cache.hpp"

namespace evoteam {
namespace {

using namespace evoteam::testing;

const std::filesystem::path k_kernels = std::filesystem::path(EVOTEAM_SOURCE_DIR) / "kernels";
const std::vector<std::string> k_host_tasks = {"host_matmul", "host_conv2d"};

// A campaign directory under <runs>/campaigns/<id>, its runs made by `evoteam optimize`, shared by the tests below.
struct ReportedCampaign {
  testing::TempDir runs;
  std::filesystem::path dir;
  std::map<std::string, std::filesystem::path> run_of;  // task → its run directory
  bool ok = false;
};

const ReportedCampaign& campaign() {
  static ReportedCampaign made;
  if (!made.dir.empty()) return made;
  made.dir = made.runs / "campaigns/campaign-20261205-070000-e2e1";
  const std::string cache = (test_cache_root() / "test-cache/campaign-report-e2e").string();
  nlohmann::json tasks = nlohmann::json::array();
  made.ok = true;
  for (const std::string& task : k_host_tasks) {
    const ProcessResult result =
        run_evoteam({"--set", "eval.cache_dir=" + cache, "optimize", (k_kernels / task).string(), "--provider",
                     "builtin", "--runs-dir", (made.dir / "runs").string(), "--budget-evaluations", "2", "--json"},
                    std::chrono::seconds(600));
    // Exit 5: the run spent its evaluation budget, as a campaign's runs do.
    const bool ran = result.exit_code == 0 || result.exit_code == 5;
    EXPECT_TRUE(ran) << describe(result);
    if (!ran) {
      made.ok = false;
      continue;
    }
    const std::filesystem::path run = parse_stdout(result)["run_dir"].get<std::string>();
    made.run_of[task] = run;
    tasks.push_back({{"name", task},
                     {"task_dir", (k_kernels / task).string()},
                     {"op_family", task},
                     {"weight", 1.0},
                     {"state", "finished"},
                     {"reason", ""},
                     {"run_dir", run.lexically_relative(made.dir).string()},
                     {"budget", {{"evaluations", 2}}},
                     {"spent", {{"evaluations", 2}}}});
  }
  tasks.push_back({{"name", "gemm_bf16"},
                   {"task_dir", (k_kernels / "gemm_bf16").string()},
                   {"op_family", "gemm"},
                   {"weight", 1.0},
                   {"state", "built_not_timed"},
                   {"reason", "no GPU on this machine"},
                   {"run_dir", nullptr},
                   {"budget", nullptr},
                   {"spent", nullptr}});
  write_json_atomic(made.dir / "campaign.json",
                    {{"schema", 1},
                     {"kind", "campaign"},
                     {"id", made.dir.filename().string()},
                     {"suite", k_kernels.string()},
                     {"created", "2026-12-05T07:00:00Z"},
                     {"status", "finished"},
                     {"exit_code", 0},
                     {"budgets", {{"evaluations", 4}, {"gpu_seconds", nullptr}, {"tokens", nullptr}, {"usd", nullptr}}},
                     {"settings", {{"team", "evolving"}}},
                     {"tasks", tasks}});
  return made;
}

TEST(CampaignReportE2E, TheReportsNumbersAreTheRunsOwn) {
  const ReportedCampaign& made = campaign();
  ASSERT_TRUE(made.ok);
  // By id under --runs-dir, as the campaign runner files it.
  const ProcessResult result = run_evoteam(
      {"report", made.dir.filename().string(), "--runs-dir", made.runs.path().string()}, std::chrono::seconds(60));
  ASSERT_TRUE(result.ok()) << describe(result);
  EXPECT_EQ(trim(result.out.text), (made.dir / "report.html").string() + "\n" + (made.dir / "report.md").string());
  const std::string markdown = read_file(made.dir / "report.md");
  const std::string html = read_file(made.dir / "report.html");

  int measured = 0;
  for (const auto& [task, run] : made.run_of) {
    SCOPED_TRACE(task);
    const nlohmann::json run_json = read_json_file(run / "run.json");
    const nlohmann::json& summary = run_json["summary"];
    const nlohmann::json& tokens = summary["tokens"];
    const double spent = tokens["input"].get<double>() + tokens["output"].get<double>() +
                         tokens["cache_read"].get<double>() + tokens["cache_write"].get<double>();
    const nlohmann::json eval = read_json_file(run / "best/eval.json");
    for (const nlohmann::json& workload : eval["workloads"]) {
      ++measured;
      const std::string row = "| " + task + " | " + workload["name"].get<std::string>() + " | " +
                              human_duration(workload["baseline"]["median_s"].get<double>()) + " | " +
                              human_duration(workload["candidate"]["median_s"].get<double>()) + " | " +
                              fixed(workload["speedup"].get<double>(), 2) +
                              "x | host task: no GPU, no FlashInfer | - | host | " + run_json["id"].get<std::string>() +
                              " " + summary["best_candidate"].get<std::string>() + " | " + fixed(spent, 0) + " | " +
                              fixed(summary["cost_usd"].get<double>(), 2) + " |";
      EXPECT_NE(markdown.find(row), std::string::npos) << row << "\n" << markdown;
      EXPECT_NE(html.find("data-task=\"" + task + "\" data-workload=\"" + workload["name"].get<std::string>() + "\""),
                std::string::npos);
    }
    EXPECT_NE(html.find("<a href=\"runs/" + run.filename().string() + "/report.html\">"), std::string::npos);
  }
  EXPECT_NE(markdown.find("| gemm_bf16 | "), std::string::npos);
  EXPECT_NE(markdown.find("built, not timed: no GPU on this machine"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("no workload has a FlashInfer time"), std::string::npos) << markdown;
  EXPECT_NE(html.find("data-workloads=\""), std::string::npos);
  EXPECT_NE(markdown.find("over the starting kernels (geometric mean over " + std::to_string(measured) +
                          " measured workloads"),
            std::string::npos)
      << markdown;
}

TEST(CampaignReportE2E, CompareTwoCampaignsSideBySide) {
  const ReportedCampaign& made = campaign();
  ASSERT_TRUE(made.ok);
  const ProcessResult result =
      run_evoteam({"compare", made.dir.string(), made.dir.string(), "--json"}, std::chrono::seconds(60));
  ASSERT_TRUE(result.ok()) << describe(result);
  const nlohmann::json compared = parse_stdout(result);
  ASSERT_EQ(compared["campaigns"].size(), 2u) << result.out.text;
  EXPECT_TRUE(compared["differences"].empty()) << "a campaign against itself is like for like";
  const std::filesystem::path matmul = made.run_of.at("host_matmul");
  const nlohmann::json eval = read_json_file(matmul / "best/eval.json");
  const nlohmann::json& first = compared["rows"][0];
  EXPECT_EQ(first["task"], "host_matmul");
  EXPECT_EQ(first["workload"], eval["workloads"][0]["name"]);
  for (const nlohmann::json& entry : first["entries"]) {
    EXPECT_EQ(entry["speedup"], eval["workloads"][0]["speedup"]);
    EXPECT_EQ(entry["start_s"], eval["workloads"][0]["baseline"]["median_s"]);
    EXPECT_EQ(entry["run"], read_json_file(matmul / "run.json")["id"]);
  }

  const ProcessResult table = run_evoteam({"compare", made.dir.string(), made.dir.string()}, std::chrono::seconds(60));
  ASSERT_TRUE(table.ok()) << describe(table);
  EXPECT_NE(table.out.text.find("A: " + made.dir.filename().string()), std::string::npos) << table.out.text;

  const ProcessResult mixed = run_evoteam({"compare", made.dir.string(), matmul.string()}, std::chrono::seconds(60));
  EXPECT_EQ(mixed.exit_code, 3) << "runs and campaigns do not mix: " << describe(mixed);
}

}  // namespace
}  // namespace evoteam
