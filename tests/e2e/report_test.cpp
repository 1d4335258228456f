// `evoteam report` and `evoteam compare` end to end: a short real run of the builtin team on host_matmul,
// its Markdown report checked against the run's files, and its HTML report opened in headless Chromium the
// way a person opens it — the screenshot kept beside the test output, the drawn page counted.
#include <gtest/gtest.h>

#include <signal.h>

#include <cstdlib>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/store/store.hpp>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "support/test_cache.hpp"

namespace evoteam {
namespace {

using namespace evoteam::testing;

// The browser, where one is installed: scripts/test installs Debian's chromium and sets
// EVOTEAM_REQUIRE_BROWSER, so there a missing browser fails the test instead of skipping it.
std::optional<std::string> find_browser() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    Command which_command;
    which_command.argv = {"sh", "-c", std::string("command -v ") + name};
    const ProcessResult which = system_runner().run(which_command);
    if (which.ok() && !trim(which.out.text).empty()) return trim(which.out.text);
  }
  return std::nullopt;
}

ProcessResult run_browser(const std::string& browser, const std::filesystem::path& profile,
                          const std::vector<std::string>& args) {
  Command command;
  // --no-sandbox: CI runs as root, where Chromium refuses its own sandbox; the page is our own file.
  command.argv = {browser,         "--headless",        "--no-sandbox",
                  "--disable-gpu", "--hide-scrollbars", "--user-data-dir=" + profile.string()};
  command.argv.insert(command.argv.end(), args.begin(), args.end());
  command.timeout = std::chrono::seconds(120);
  command.output_cap = 0;
  return system_runner().run(command);
}

// One run of the builtin team, shared by the tests below (a run takes a few seconds with a warm cache).
const std::filesystem::path& report_run() {
  static testing::TempDir dir;
  static std::filesystem::path run_dir;
  if (!run_dir.empty()) return run_dir;
  // Shared with KnowledgeE2E: the same builtin team on the same task, so whichever runs second is served the first's
  // measurements.
  const std::string cache = (testing::test_cache_root() / "test-cache/host-matmul-builtin").string();
  const ProcessResult result = run_evoteam({"--set", "eval.cache_dir=" + cache, "optimize", k_task.string(),
                                            "--runs-dir", (dir / "runs").string(), "--max-cycles", "4", "--json"},
                                           std::chrono::seconds(300));
  EXPECT_TRUE(result.ok()) << describe(result);
  if (result.ok()) run_dir = parse_stdout(result)["run_dir"].get<std::string>();
  return run_dir;
}

std::filesystem::path team_file(const std::filesystem::path& run_dir, int cycle) {
  char name[16];
  std::snprintf(name, sizeof name, "%04d", cycle);
  return run_dir / "cycles" / name / "team.json";
}

// Cycles whose team.json records a change of team (the first cycle's team is where it starts).
std::vector<int> changed_cycles(const std::filesystem::path& run_dir) {
  std::vector<int> cycles;
  for (int cycle = 2;; ++cycle) {
    const std::filesystem::path file = team_file(run_dir, cycle);
    if (!std::filesystem::exists(file)) break;
    if (read_json_file(file).value("change", "no change") != "no change") cycles.push_back(cycle);
  }
  return cycles;
}

TEST(ReportE2E, TheMarkdownReportHoldsTheRunsFiles) {
  const std::filesystem::path& run_dir = report_run();
  ASSERT_FALSE(run_dir.empty());
  EXPECT_TRUE(std::filesystem::exists(run_dir / "report.html")) << "optimize writes the report as the run ends";
  EXPECT_TRUE(std::filesystem::exists(run_dir / "report.md")) << "optimize writes the report as the run ends";
  testing::TempDir out;
  const ProcessResult result = run_evoteam({"report", run_dir.string(), "--out", out.path().string(), "--format", "md"},
                                           std::chrono::seconds(60));
  ASSERT_TRUE(result.ok()) << describe(result);
  EXPECT_EQ(trim(result.out.text), (out / "report.md").string());
  EXPECT_FALSE(std::filesystem::exists(out / "report.html")) << "--format md writes only the Markdown";
  const std::string markdown = read_file(out / "report.md");

  const nlohmann::json run = read_json_file(run_dir / "run.json");
  const std::string best = run["summary"]["best_candidate"];
  EXPECT_NE(markdown.find(std::to_string(evaluations(run_dir).size()) + " candidates evaluated"), std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| best | " + best + " " + fixed(run["summary"]["best_speedup"].get<double>(), 2) + "x"),
            std::string::npos)
      << markdown;
  // Held in a local: a range-for over a member of a temporary reads freed memory once the temporary is gone.
  const nlohmann::json best_eval = read_json_file(run_dir / "best" / "eval.json");
  for (const nlohmann::json& workload : best_eval["workloads"])
    EXPECT_NE(markdown.find("| " + workload["name"].get<std::string>() + " | " +
                            fixed(workload["speedup"].get<double>(), 2) + "x |"),
              std::string::npos)
        << workload["name"] << "\n"
        << markdown;
  for (int cycle : changed_cycles(run_dir)) {
    const nlohmann::json team = read_json_file(team_file(run_dir, cycle));
    EXPECT_NE(
        markdown.find("- cycle " + std::to_string(cycle) + " (" + team["pattern"].get<std::string>() + ", decided by " +
                      team["decided_by"].get<std::string>() + "): " + team["change"].get<std::string>()),
        std::string::npos)
        << "cycle " << cycle << "\n"
        << markdown;
  }
}

TEST(ReportE2E, TheHtmlReportRendersInChromiumWithEveryCandidateAndTeamChange) {
  const std::optional<std::string> browser = find_browser();
  if (!browser) {
    if (std::getenv("EVOTEAM_REQUIRE_BROWSER") != nullptr)
      FAIL() << "no chromium found, and EVOTEAM_REQUIRE_BROWSER is set";
    GTEST_SKIP() << "no chromium installed (scripts/test installs it)";
  }
  const std::filesystem::path& run_dir = report_run();
  ASSERT_FALSE(run_dir.empty());
  const ProcessResult result = run_evoteam({"report", run_dir.string()}, std::chrono::seconds(60));
  ASSERT_TRUE(result.ok()) << describe(result);
  const std::filesystem::path page = run_dir / "report.html";
  ASSERT_TRUE(std::filesystem::exists(page));
  ASSERT_TRUE(std::filesystem::exists(run_dir / "report.md"));

  testing::TempDir profile;
  const std::filesystem::path shots = std::filesystem::path(EVOTEAM_TEST_HELPERS_DIR) / "test-output";
  evoteam::create_directories(shots);
  const std::filesystem::path shot = shots / "report_e2e.png";
  std::filesystem::remove(shot);
  const ProcessResult screenshot = run_browser(
      *browser, profile / "a", {"--window-size=1200,3000", "--screenshot=" + shot.string(), "file://" + page.string()});
  ASSERT_TRUE(screenshot.ok()) << screenshot.describe() << screenshot.err.text;
  EXPECT_GT(std::filesystem::file_size(shot), 10000u) << "a screenshot of a blank page is small";

  // The DOM after the page's script ran: its caption counts the circles and marks the browser drew.
  const ProcessResult dom = run_browser(*browser, profile / "b", {"--dump-dom", "file://" + page.string()});
  ASSERT_TRUE(dom.ok()) << dom.describe() << dom.err.text;
  std::smatch caption;
  ASSERT_TRUE(std::regex_search(
      dom.out.text, caption, std::regex("id=\"chart-evaluations-count\" data-drawn=\"(\\d+)\" data-marks=\"(\\d+)\"")))
      << "the page's script did not run: " << dom.out.text.substr(0, 2000);
  const std::vector<int> changes = changed_cycles(run_dir);
  EXPECT_EQ(std::stoul(caption[1].str()), evaluations(run_dir).size()) << "every evaluated candidate is drawn";
  EXPECT_EQ(std::stoul(caption[2].str()), changes.size());
  EXPECT_FALSE(changes.empty()) << "the evolving team changed at least once in four cycles";
  const std::size_t chart = dom.out.text.find("id=\"chart-evaluations\"");
  const std::string svg = dom.out.text.substr(chart, dom.out.text.find("</svg>", chart) - chart);
  for (int cycle : changes)
    EXPECT_NE(svg.find("class=\"team-change\" data-cycle=\"" + std::to_string(cycle) + "\""), std::string::npos)
        << "cycle " << cycle;
}

TEST(ReportE2E, CompareTwoRunsAsJsonAndHtml) {
  const std::filesystem::path& run_dir = report_run();
  ASSERT_FALSE(run_dir.empty());
  testing::TempDir out;
  const ProcessResult result =
      run_evoteam({"compare", run_dir.string(), run_dir.string(), "--json", "--html", (out / "compare.html").string()},
                  std::chrono::seconds(60));
  ASSERT_TRUE(result.ok()) << describe(result);
  const nlohmann::json rows = parse_stdout(result);
  ASSERT_TRUE(rows.is_array() && rows.size() == 2u) << result.out.text;
  EXPECT_EQ(rows[0]["evaluations"], evaluations(run_dir).size());
  EXPECT_EQ(rows[0]["team_mode"], "evolving");
  EXPECT_EQ(rows[0]["best_speedup"], read_json_file(run_dir / "run.json")["summary"]["best_speedup"]);
  EXPECT_TRUE(rows[0]["evaluations_to_90"].is_number());
  EXPECT_NE(read_file(out / "compare.html").find("<svg class=\"chart\" id=\"chart-compare\""), std::string::npos);

  const ProcessResult table = run_evoteam({"compare", run_dir.string()}, std::chrono::seconds(60));
  ASSERT_TRUE(table.ok()) << describe(table);
  EXPECT_NE(table.out.text.find(run_dir.filename().string()), std::string::npos) << table.out.text;

  const ProcessResult missing = run_evoteam({"compare", (out / "no-such-run").string()}, std::chrono::seconds(60));
  EXPECT_EQ(missing.exit_code, 3) << describe(missing);
}

// The cycles a live page says are finished (its "live" row), or nullopt when the page is not live.
std::optional<int> live_cycles(const std::string& page) {
  std::smatch live;
  if (!std::regex_search(page, live, std::regex("id=\"live\" data-cycles=\"(\\d+)\""))) return std::nullopt;
  return std::stoi(live[1].str());
}

bool reloads(const std::string& page) { return page.find("<meta http-equiv=\"refresh\"") != std::string::npos; }

// Polls the run's report.html until `done` holds for its text or the deadline passes; the last text read.
template <typename Predicate>
std::string poll_page(const std::filesystem::path& page, std::chrono::seconds limit, Predicate done) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const std::string text = std::filesystem::exists(page) ? read_file(page) : "";
    if (done(text) || std::chrono::steady_clock::now() >= deadline) return text;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
}

// A detached daemon outlives a failed assertion: kill whatever still holds the run when the test ends.
struct LiveRunReaper {
  std::filesystem::path run_dir;
  ~LiveRunReaper() {
    if (run_dir.empty()) return;
    const std::optional<int> pid = lock_holder(run_dir);
    if (!pid || *pid <= 0) return;
    ::kill(-*pid, SIGKILL);  // its process group: the compilers and harnesses it runs
    ::kill(*pid, SIGKILL);
  }
};

// A page left open on a live run follows it: the daemon rewrites report.html at every cycle's end, and the page
// as Chromium loads it carries the reload and the cycles so far; two cycles apart it shows two counts. Once the
// run has ended, its last rewrite drops the reload.
TEST(ReportE2E, ALiveRunsPageFollowsItsCyclesAndStopsReloadingWhenItEnds) {
  const std::optional<std::string> browser = find_browser();
  if (!browser) {
    if (std::getenv("EVOTEAM_REQUIRE_BROWSER") != nullptr)
      FAIL() << "no chromium found, and EVOTEAM_REQUIRE_BROWSER is set";
    GTEST_SKIP() << "no chromium installed (scripts/test installs it)";
  }
  testing::TempDir dir;
  // A cache of its own: every evaluation really runs, so a cycle lasts seconds and the run outlasts the dumps.
  const ProcessResult started =
      run_evoteam({"--set", "eval.cache_dir=" + (dir / "cache").string(), "optimize", k_task.string(), "--provider",
                   "builtin", "--runs-dir", (dir / "runs").string(), "--max-cycles", "12", "--detach", "--json"},
                  std::chrono::seconds(60));
  ASSERT_TRUE(started.ok()) << describe(started);
  LiveRunReaper reaper{parse_stdout(started)["run_dir"].get<std::string>()};
  const std::filesystem::path page = reaper.run_dir / "report.html";
  testing::TempDir profile;
  const auto dump = [&](const std::string& name) {
    const ProcessResult dom = run_browser(*browser, profile / name, {"--dump-dom", "file://" + page.string()});
    EXPECT_TRUE(dom.ok()) << dom.describe() << dom.err.text;
    return dom.out.text;
  };

  const std::string first_file = poll_page(page, std::chrono::seconds(300), [](const std::string& text) {
    return live_cycles(text).value_or(0) >= 1 || (!text.empty() && !reloads(text));
  });
  ASSERT_GE(live_cycles(first_file).value_or(0), 1) << "no live page after a cycle: " << first_file.substr(0, 3000);
  const std::string first = dump("a");
  ASSERT_TRUE(live_cycles(first)) << "the page Chromium loaded is not live: " << first.substr(0, 3000);
  EXPECT_TRUE(reloads(first)) << first.substr(0, 3000);

  const std::string next_file = poll_page(page, std::chrono::seconds(300), [&](const std::string& text) {
    return live_cycles(text).value_or(0) > *live_cycles(first) || (!text.empty() && !reloads(text));
  });
  ASSERT_TRUE(live_cycles(next_file)) << "the run ended before a second live cycle; raise --max-cycles";
  const std::string second = dump("b");
  ASSERT_TRUE(live_cycles(second)) << second.substr(0, 3000);
  EXPECT_GT(*live_cycles(second), *live_cycles(first)) << "the page changed between two cycles";
  EXPECT_TRUE(reloads(second));

  const ProcessResult stop = run_evoteam({"stop", reaper.run_dir.string()}, std::chrono::seconds(60));
  ASSERT_TRUE(stop.ok()) << describe(stop);
  const ProcessResult wait = run_evoteam({"wait", reaper.run_dir.string()}, std::chrono::seconds(300));
  EXPECT_EQ(wait.exit_code, 130) << describe(wait);
  // The daemon writes its last page as it exits, just after it lets go of the run that `wait` watches.
  poll_page(page, std::chrono::seconds(60), [](const std::string& text) { return !reloads(text); });
  const std::string ended = dump("c");
  EXPECT_FALSE(reloads(ended)) << "an ended run's page stops reloading: " << ended.substr(0, 3000);
  EXPECT_FALSE(live_cycles(ended));
  EXPECT_NE(ended.find("stopped (interrupted)"), std::string::npos) << ended.substr(0, 3000);
}

}  // namespace
}  // namespace evoteam
