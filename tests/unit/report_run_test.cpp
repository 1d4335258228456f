// The run report and `compare` over a run directory written through the store by hand: six candidates over
// two cycles, a team change with its signal, a meter tick, a kill and a resume, a rejected candidate.
#include <gtest/gtest.h>

#include <chrono>
#include <regex>

#include <nlohmann/json.hpp>

#include <evoteam/core/fs.hpp>
#include <evoteam/report/compare.hpp>
#include <evoteam/report/run_report.hpp>
#include <evoteam/report/status.hpp>
#include <evoteam/store/store.hpp>

#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

std::string at(int seconds) {
  char stamp[40];
  std::snprintf(stamp, sizeof stamp, "2026-11-30T10:%02d:%02d.000Z", seconds / 60, seconds % 60);
  return stamp;
}

nlohmann::json evaluation(int t, const std::string& id, const std::string& parent, int cycle,
                          const std::string& verdict, double speedup, bool rejected = false) {
  const bool passed = verdict == "PASS";
  return {{"type", "evaluation"},
          {"t", at(t)},
          {"record",
           {{"candidate_id", id},
            {"parent_id", parent},
            {"author_role", cycle == 1 ? "optimizer" : "debugger"},
            {"cycle", cycle},
            {"verdict", verdict},
            {"passed", passed},
            {"rejected", rejected},
            {"ruling", rejected ? "slid back from uses_wgmma" : ""},
            {"speedup", passed ? nlohmann::json(speedup) : nlohmann::json(nullptr)}}}};
}

nlohmann::json cycle_start(int t, int cycle, const std::vector<std::string>& roles, const std::string& pattern,
                           const std::string& change, const nlohmann::json& evidence) {
  nlohmann::json role_list = nlohmann::json::array();
  for (const std::string& role : roles) role_list.push_back({{"name", role}});
  return {{"type", "cycle_start"},
          {"t", at(t)},
          {"cycle", cycle},
          {"change", change},
          {"evidence", evidence},
          {"team",
           {{"roles", role_list},
            {"pattern", pattern},
            {"decided_by", "rules"},
            {"rationale", change},
            {"directives", {"one measurable change at a time"}}}}};
}

// Two cycles; cycle 2 adds a Debugger on a build failure signal. The daemon is killed after c0004 and
// resumed 16 minutes later: that gap is nobody's work time.
std::filesystem::path write_run(const testing::TempDir& dir, int evaluation_limit = 10) {
  const std::filesystem::path run = dir / "20261130T100000Z-host_matmul";
  std::filesystem::create_directories(run / "task");
  write_json_atomic(run / "task" / "task.json", {{"target", "host"}});
  write_json_atomic(run / "run.json", {{"id", run.filename().string()},
                                       {"task", "host_matmul"},
                                       {"status", "finished"},
                                       {"stop_reason", "budget_evaluations"},
                                       {"provider", {{"name", "anthropic"}, {"model", "m1"}}},
                                       {"options", {{"team_mode", "evolving"}}},
                                       {"budgets", {{"evaluations", evaluation_limit}, {"tokens", 0}}},
                                       {"summary",
                                        {{"cycles", 2},
                                         {"evaluations", 6},
                                         {"best_candidate", "c0004"},
                                         {"best_speedup", 3.0},
                                         {"tokens", {{"input", 1000}}},
                                         {"cost_usd", 0.5},
                                         {"elapsed_s", 50.0}}}});
  Journal journal(run / k_journal_name);
  journal.append({{"type", "run_start"}, {"t", at(0)}});
  journal.append(cycle_start(0, 1, {"optimizer"}, "solo", "initial team", nlohmann::json::array()));
  journal.append(evaluation(1, "c0001", "", 1, "PASS", 1.0));
  journal.append(evaluation(10, "c0002", "c0001", 1, "PASS", 2.0));
  journal.append(evaluation(15, "c0003", "c0002", 1, "COMPILE_ERROR", 0));
  journal.append({{"type", "budget_tick"}, {"t", at(20)}, {"tokens", {{"input", 1000}}}, {"cost_usd", 0.5}});
  journal.append({{"type", "cycle_end"}, {"t", at(20)}, {"cycle", 1}});
  journal.append(cycle_start(21, 2, {"debugger", "optimizer"}, "pipeline", "+debugger, pattern solo\u2192pipeline",
                             {{{"signal", "build_failure_rate"}, {"evidence", "1 of 3 failed to build"}}}));
  journal.append(evaluation(30, "c0004", "c0002", 2, "PASS", 3.0));
  journal.append({{"type", "resume"}, {"t", at(1000)}});
  journal.append(evaluation(1010, "c0005", "c0004", 2, "PASS", 2.5, true));
  journal.append(evaluation(1020, "c0006", "c0004", 2, "NUMERIC_MISMATCH", 0));
  return run;
}

int count_of(const std::string& text, const std::string& needle) {
  int count = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

// The <svg> element with this id, whole.
std::string svg_of(const std::string& html, const std::string& id) {
  const std::size_t start = html.find("<svg class=\"chart\" id=\"" + id + "\"");
  if (start == std::string::npos) return "";
  return html.substr(start, html.find("</svg>", start) - start);
}

TEST(RunReport, ReadsCandidatesTeamsAndTheRunsTotalsFromTheJournal) {
  testing::TempDir dir;
  const RunReport report = load_run_report(write_run(dir));
  ASSERT_EQ(report.candidates.size(), 6u);
  EXPECT_EQ(report.candidates[3].id, "c0004");
  EXPECT_EQ(report.candidates[3].ordinal, 4);
  EXPECT_EQ(report.provider, "anthropic");
  EXPECT_EQ(report.target, "host");

  std::vector<std::optional<double>> expected{1.0, 2.0, 2.0, 3.0, 3.0, 3.0};
  EXPECT_EQ(report.best_so_far(), expected) << "the rejected c0005 never counts as best";
  EXPECT_EQ(report.best_path(), (std::vector<std::string>{"c0001", "c0002", "c0004"}));

  ASSERT_EQ(report.cycles.size(), 2u);
  EXPECT_FALSE(report.cycles[0].changed());
  EXPECT_TRUE(report.cycles[1].changed());
  EXPECT_EQ(report.cycles[1].added, std::vector<std::string>{"debugger"});
  EXPECT_EQ(report.cycles[1].evaluations_before, 3);
  EXPECT_DOUBLE_EQ(report.cycles[1].tokens_before, 1000);
  EXPECT_DOUBLE_EQ(report.cycles[1].cost_before, 0.5);
  ASSERT_EQ(report.cycles[1].signals.size(), 1u);
  EXPECT_EQ(report.cycles[1].signals[0], "build_failure_rate: 1 of 3 failed to build");

  EXPECT_DOUBLE_EQ(report.candidates[0].tokens, 0);
  EXPECT_DOUBLE_EQ(report.candidates[3].tokens, 1000);
  EXPECT_DOUBLE_EQ(report.candidates[3].wall_s, 30);
  EXPECT_DOUBLE_EQ(report.candidates[5].wall_s, 50)
      << "the time between the kill and the resume is not wall time worked";

  EXPECT_EQ(report.failures.at("COMPILE_ERROR"), 1);
  EXPECT_EQ(report.failures.at("NUMERIC_MISMATCH"), 1);
  EXPECT_EQ(report.failures.at("REJECTED"), 1);
  EXPECT_EQ(report.failures.count("PASS"), 0u);
}

TEST(RunReport, TheHtmlDrawsEveryCandidateAndMarksEveryTeamChangeWithNothingFetched) {
  testing::TempDir dir;
  const std::string html = render_report_html(load_run_report(write_run(dir)));
  for (const char* id : {"chart-evaluations", "chart-tokens", "chart-usd", "chart-wall"}) {
    const std::string svg = svg_of(html, id);
    ASSERT_FALSE(svg.empty()) << id;
    EXPECT_EQ(count_of(svg, "<circle class=\"cand "), 6) << id;
    EXPECT_EQ(count_of(svg, "<g class=\"team-change\" data-cycle=\"2\""), 1) << id;
    EXPECT_EQ(count_of(svg, "class=\"team-change\""), 1) << id << ": the first cycle's team is no change";
  }
  EXPECT_NE(html.find("c2: +debugger (build_failure_rate)"), std::string::npos)
      << "the label names the roles and the signal";
  EXPECT_NE(html.find("build_failure_rate: 1 of 3 failed to build"), std::string::npos)
      << "the signal is in the hover text";
  // Self-contained: no script, style sheet, image or font from anywhere.
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find(" href="), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  // The lineage: the best path marked, the failed leaf folded.
  EXPECT_EQ(count_of(html, "<li class=\"n v-pass best\">"), 3);
  EXPECT_NE(html.find("1 failed leaf</summary>c0003 COMPILE_ERROR"), std::string::npos);
}

TEST(RunReport, TheMarkdownTwinHoldsTheSameFacts) {
  testing::TempDir dir;
  const std::string markdown = render_report_markdown(load_run_report(write_run(dir)));
  EXPECT_NE(markdown.find("Best path: c0001 (1.00x) \u2192 c0002 (2.00x) \u2192 c0004 (3.00x)"), std::string::npos)
      << markdown;
  // Each cycle's own spend (candidates and the meter's ticks), adding up to the total row.
  EXPECT_NE(markdown.find("| 2 | pipeline | debugger, optimizer | rules | 3 | 0 | 0.00 | 29.0 | 3.00x |"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| total | | | | 6 | 1000 | 0.50 | 50.0 | 3.00x | |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| evaluations | 6 of 10 (60%): candidates evaluated plus the agents' trials"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| REJECTED | 1 |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("- directive: one measurable change at a time"), std::string::npos) << markdown;
}

TEST(RunReport, AnUnreadableJournalIsAWarningNotAFailure) {
  testing::TempDir dir;
  const std::filesystem::path run = write_run(dir);
  write_file_atomic(run / k_journal_name, "not a journal\n");
  const RunReport report = load_run_report(run);
  EXPECT_TRUE(report.candidates.empty());
  ASSERT_FALSE(report.warnings.empty());
  EXPECT_NE(render_report_html(report).find("journal not read"), std::string::npos);
}

// Ten thousand candidates: the charts thin their points, the best-so-far line keeps every step.
TEST(RunReport, LargeRunsThinThePointsButNeverTheBestLine) {
  RunReport report;
  report.id = "big";
  int improvements = 0;
  double best = 0;
  for (int i = 1; i <= 10000; ++i) {
    ReportCandidate candidate;
    candidate.ordinal = i;
    candidate.id = "c" + std::to_string(i);
    candidate.parent = i > 1 ? "c" + std::to_string(i / 2) : "";
    candidate.verdict = i % 7 == 0 ? "COMPILE_ERROR" : "PASS";
    if (candidate.verdict == "PASS") candidate.speedup = 1.0 + (i % 97) / 50.0 + i / 5000.0;
    if (candidate.speedup && *candidate.speedup > best) best = *candidate.speedup, ++improvements;
    candidate.tokens = i * 100.0;
    candidate.wall_s = i * 2.0;
    report.candidates.push_back(candidate);
  }
  const std::string html = render_report_html(report);
  EXPECT_LT(html.size(), 3u * 1024 * 1024);
  const std::string svg = svg_of(html, "chart-evaluations");
  const int drawn = count_of(svg, "<circle class=\"cand ");
  EXPECT_GT(drawn, 100);
  EXPECT_LE(drawn, 2500);
  EXPECT_NE(svg.find("data-candidates=\"10000\" data-plotted=\"" + std::to_string(drawn) + "\""), std::string::npos);
  std::smatch line;
  ASSERT_TRUE(std::regex_search(svg, line, std::regex("class=\"line best\" d=\"([^\"]*)\"")));
  EXPECT_EQ(count_of(line[1].str(), "V"), improvements - 1) << "one step up per improvement after the first";
}

TEST(Compare, EvaluationsToNinetyPercentAreaAndUnequalBudgets) {
  testing::TempDir dir;
  const RunComparison run = compare_entry(load_run_report(write_run(dir)));
  EXPECT_EQ(run.evaluations, 6);
  ASSERT_TRUE(run.best_speedup);
  EXPECT_DOUBLE_EQ(*run.best_speedup, 3.0);
  EXPECT_EQ(run.evaluations_to_90, 4) << "c0004 first reached 2.7x";
  ASSERT_TRUE(run.tokens_to_90);
  EXPECT_DOUBLE_EQ(*run.tokens_to_90, 1000);
  EXPECT_DOUBLE_EQ(run.auc_best, (1 + 2 + 2 + 3 + 3 + 3) / 6.0);
  EXPECT_DOUBLE_EQ(run.tokens, 1000);
  const nlohmann::json json = to_json(run);
  for (const char* key : {"run", "team_mode", "provider", "model", "evaluations", "tokens", "cost_usd", "hours",
                          "gpu_seconds", "best_speedup", "evaluations_to_90", "tokens_to_90", "auc_best"})
    EXPECT_TRUE(json.contains(key)) << key;

  testing::TempDir other_dir;
  const RunComparison other = compare_entry(load_run_report(write_run(other_dir, 20)));
  EXPECT_TRUE(budget_differences({run, run}).empty());
  const std::vector<std::string> differences = budget_differences({run, other});
  ASSERT_EQ(differences.size(), 1u);
  EXPECT_NE(differences[0].find("budget evaluations differs"), std::string::npos) << differences[0];
  const std::string html = render_comparison_html({run, other});
  EXPECT_EQ(count_of(svg_of(html, "chart-compare"), "class=\"line "), 2);
}

// Runs written by the main of 2026-12-04, before the journal's records were typed (tests/data/
// runs_before_typed_records: a scripted run with a ruling and budget ticks, a builtin run with trials, a profile and
// device time). Their report and status read as that build wrote them (expected/, the run's path as @RUN@), but for
// status's device seconds, which since count the trials' and profiles' device time too ("unattributed" where a record
// named no device), so that they add up to the GPU-seconds spent.
TEST(RunReport, RunsWrittenBeforeTypedRecordsReportAsTheyDid) {
  const std::filesystem::path old_runs =
      std::filesystem::path(EVOTEAM_SOURCE_DIR) / "tests/data/runs_before_typed_records";
  for (const std::string name : {"scripted_run", "builtin_run"}) {
    SCOPED_TRACE(name);
    const std::filesystem::path run = old_runs / name;
    const auto as_written = [&run](std::string text) {
      for (std::size_t at = text.find(run.string()); at != std::string::npos; at = text.find(run.string(), at))
        text.replace(at, run.string().size(), "@RUN@");
      return text;
    };
    const RunReport report = load_run_report(run);
    EXPECT_EQ(as_written(render_report_markdown(report)), read_file(old_runs / "expected" / (name + ".report.md")));
    EXPECT_EQ(as_written(render_report_html(report)), read_file(old_runs / "expected" / (name + ".report.html")));
    nlohmann::json status = to_json(run_status(run));
    status.erase("dir");
    status.erase("last_event_age_s");
    EXPECT_EQ(status, read_json_file(old_runs / "expected" / (name + ".status.json")));
  }
}

}  // namespace
}  // namespace evoteam
