// The run report's rows per cycle: what each cycle spent comes from the meter's ticks (not from its last
// candidate), so the rows add up to the run's totals; a team change decided by an LLM keeps the measured evidence
// beside the LLM's words.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include <evoteam/core/fs.hpp>
#include <evoteam/report/run_report.hpp>
#include <evoteam/store/store.hpp>

#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

nlohmann::json tick(const std::string& t, int tokens, double usd) {
  return {{"type", "budget_tick"}, {"t", t}, {"tokens", {{"input", tokens}}}, {"cost_usd", usd}};
}

nlohmann::json passed(const std::string& t, const std::string& id, int cycle, double speedup) {
  return {{"type", "evaluation"},
          {"t", t},
          {"record",
           {{"candidate_id", id},
            {"author_role", "optimizer"},
            {"cycle", cycle},
            {"verdict", "PASS"},
            {"passed", true},
            {"speedup", speedup}}}};
}

nlohmann::json started(const std::string& t, int cycle, const std::string& decided_by, const nlohmann::json& evidence) {
  return {{"type", "cycle_start"},
          {"t", t},
          {"cycle", cycle},
          {"change", cycle == 1 ? "initial team" : "+debugger"},
          {"evidence", evidence},
          {"team",
           {{"roles", cycle == 1 ? nlohmann::json{{{"name", "optimizer"}}}
                                 : nlohmann::json{{{"name", "debugger"}}, {{"name", "optimizer"}}}},
            {"pattern", cycle == 1 ? "solo" : "pipeline"},
            {"decided_by", decided_by},
            {"rationale", "r"}}}};
}

// Cycle 2's spending goes on after its last candidate (two ticks), as an LLM team's does.
std::filesystem::path write_ticking_run(const testing::TempDir& dir) {
  const std::filesystem::path run = dir / "20261130T100000Z-host_matmul";
  std::filesystem::create_directories(run);
  write_json_atomic(run / "run.json", {{"id", run.filename().string()},
                                       {"task", "host_matmul"},
                                       {"status", "finished"},
                                       {"stop_reason", "max_cycles"},
                                       {"summary", {{"cycles", 2}, {"evaluations", 2}}}});
  Journal journal(run / k_journal_name);
  journal.append({{"type", "run_start"}, {"t", "2026-11-30T10:00:00.000Z"}});
  journal.append(started("2026-11-30T10:00:00.000Z", 1, "rules", nlohmann::json::array()));
  journal.append(passed("2026-11-30T10:00:10.000Z", "c0001", 1, 1.0));
  journal.append(tick("2026-11-30T10:00:20.000Z", 100, 0.10));
  journal.append({{"type", "cycle_end"}, {"t", "2026-11-30T10:00:20.000Z"}, {"cycle", 1}});
  journal.append(
      started("2026-11-30T10:00:20.000Z", 2, "llm",
              {{{"signal", "build_failure_rate"}, {"evidence", ""}, {"measured", "2 of 3 failed to build"}}}));
  journal.append(tick("2026-11-30T10:00:30.000Z", 300, 0.30));
  journal.append(passed("2026-11-30T10:00:40.000Z", "c0002", 2, 2.0));
  journal.append(tick("2026-11-30T10:00:50.000Z", 900, 0.90));
  journal.append(tick("2026-11-30T10:01:00.000Z", 1500, 1.50));
  journal.append({{"type", "cycle_end"}, {"t", "2026-11-30T10:01:00.000Z"}, {"cycle", 2}});
  return run;
}

TEST(ReportCycles, EachCyclesSpendComesFromTheTicksAndTheRowsAddUpToTheTotal) {
  testing::TempDir dir;
  const RunReport report = load_run_report(write_ticking_run(dir));
  ASSERT_EQ(report.cycles.size(), 2u);
  EXPECT_DOUBLE_EQ(report.total_tokens, 1500);
  EXPECT_DOUBLE_EQ(report.cycles[0].tokens_spent, 100);
  EXPECT_DOUBLE_EQ(report.cycles[1].tokens_spent, 1400);
  EXPECT_NEAR(report.cycles[0].cost_spent + report.cycles[1].cost_spent, report.total_cost_usd, 1e-9);
  EXPECT_NEAR(report.cycles[0].wall_spent + report.cycles[1].wall_spent, report.total_wall_s, 1e-9);
  const std::string markdown = render_report_markdown(report);
  EXPECT_NE(markdown.find("| 2 | pipeline | debugger, optimizer | llm | 1 | 1400 | 1.40 | 40.0 |"), std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| total | | | | 2 | 1500 | 1.50 | 60.0 |"), std::string::npos) << markdown;
}

TEST(ReportCycles, AnLlmsTeamChangeKeepsTheMeasuredEvidence) {
  testing::TempDir dir;
  const RunReport report = load_run_report(write_ticking_run(dir));
  ASSERT_EQ(report.cycles.size(), 2u);
  ASSERT_EQ(report.cycles[1].signals.size(), 1u);
  EXPECT_EQ(report.cycles[1].signals[0], "build_failure_rate: measured: 2 of 3 failed to build");
  const std::string markdown = render_report_markdown(report);
  EXPECT_NE(markdown.find("Signals: build_failure_rate: measured: 2 of 3 failed to build"), std::string::npos)
      << markdown;
  EXPECT_EQ(markdown.find("build_failure_rate: ;"), std::string::npos) << markdown;
}

}  // namespace
}  // namespace evoteam
