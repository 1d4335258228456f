// A damaged journal is said by every view that reads it: `status`, `show`, the run report and `compare` each carry
// what they left out (a field in their JSON, a warning line in their text) instead of showing less in silence.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/report/compare.hpp>
#include <evoteam/report/report.hpp>
#include <evoteam/report/run_report.hpp>
#include <evoteam/report/status.hpp>
#include <evoteam/store/store.hpp>

#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

std::filesystem::path write_small_run(const testing::TempDir& dir) {
  const std::filesystem::path run = dir / "20261130T100000Z-host_matmul";
  std::filesystem::create_directories(run);
  write_json_atomic(
      run / "run.json",
      {{"id", run.filename().string()},
       {"task", "host_matmul"},
       {"status", "finished"},
       {"stop_reason", "max_cycles"},
       {"provider", {{"name", "anthropic"}, {"model", "m1"}}},
       {"budgets", {{"evaluations", 10}, {"tokens", 0}, {"usd", 2.5}}},
       {"summary", {{"cycles", 1}, {"evaluations", 1}, {"best_candidate", "c0001"}, {"best_speedup", 1.5}}}});
  Journal journal(run / k_journal_name);
  journal.append({{"type", "run_start"}, {"t", "2026-11-30T10:00:00.000Z"}});
  journal.append({{"type", "evaluation"},
                  {"t", "2026-11-30T10:00:05.000Z"},
                  {"record",
                   {{"candidate_id", "c0001"},
                    {"author_role", "optimizer"},
                    {"cycle", 1},
                    {"verdict", "PASS"},
                    {"passed", true},
                    {"speedup", 1.5}}}});
  return run;
}

void append_raw(const std::filesystem::path& file, const std::string& text) {
  std::ofstream(file, std::ios::app) << text;
}

// Every view's word for what it left out, each as the user reads it (JSON field and text line).
struct Said {
  nlohmann::json status, show, compare;
  std::string status_text, show_text;
  std::vector<std::string> report;
};

Said read_views(const std::filesystem::path& run) {
  Said said;
  const RunStatusView view = run_status(run);
  said.status = to_json(view).value("journal_skipped", nlohmann::json());
  said.status_text = format_run_status(view);
  const nlohmann::json description = describe_run(run);
  said.show = description.value("journal", nlohmann::json::object()).value("skipped", nlohmann::json());
  said.show_text = format_run_description(description);
  const RunReport report = load_run_report(run);
  said.compare = to_json(compare_entry(report)).value("journal_skipped", nlohmann::json());
  said.report = report.warnings;
  return said;
}

void expect_said(const Said& said, const std::string& words, const std::string& damage) {
  for (const nlohmann::json* field : {&said.status, &said.show, &said.compare}) {
    ASSERT_TRUE(field->is_array()) << damage << ": no journal_skipped/skipped field";
    ASSERT_FALSE(field->empty()) << damage << ": the field is empty";
    EXPECT_NE(field->dump().find(words), std::string::npos) << damage << ": " << field->dump();
  }
  for (const std::string* text : {&said.status_text, &said.show_text}) {
    const std::size_t line = text->find("\nwarning   ");
    ASSERT_NE(line, std::string::npos) << damage << ": no warning line:\n" << *text;
    EXPECT_NE(text->find(words, line), std::string::npos) << damage << ":\n" << *text;
  }
  bool in_report = false;
  for (const std::string& warning : said.report) in_report = in_report || warning.find(words) != std::string::npos;
  EXPECT_TRUE(in_report) << damage << ": the report's warnings do not say it";
}

TEST(JournalDamage, AnIntactJournalSkipsNothing) {
  testing::TempDir dir;
  const Said said = read_views(write_small_run(dir));
  for (const nlohmann::json* field : {&said.status, &said.show, &said.compare}) {
    ASSERT_TRUE(field->is_array());
    EXPECT_TRUE(field->empty()) << field->dump();
  }
  EXPECT_EQ(said.status_text.find("warning"), std::string::npos) << said.status_text;
}

// `show` speaks plainly: the provider and budgets as words, not raw JSON, and who wrote the best.
TEST(ShowRun, ProviderBudgetsAndTheBestsAuthorReadAsWords) {
  testing::TempDir dir;
  const std::string text = format_run_description(describe_run(write_small_run(dir)));
  EXPECT_NE(text.find("provider  anthropic / m1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("budgets   10 evaluations, 2.50 USD\n"), std::string::npos) << text;
  EXPECT_NE(text.find("best      c0001  1.50x  by the optimizer\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("{\""), std::string::npos) << "raw JSON in the view:\n" << text;
}

// An absolute path that is no run is named once, not as "looked for X/run.json and X/run.json".
TEST(ResolveRun, AnAbsolutePathThatIsNoRunIsNamedOnce) {
  testing::TempDir dir;
  const std::string missing = (dir / "no-such-run").string();
  std::string message;
  try {
    resolve_run(missing, dir / "runs");
  } catch (const InvalidInput& error) {
    message = error.what();
  }
  const std::string looked = missing + "/run.json";
  ASSERT_NE(message.find(looked), std::string::npos) << message;
  EXPECT_EQ(message.find(looked, message.find(looked) + 1), std::string::npos) << message;
}

TEST(JournalDamage, ATruncatedTailIsSaid) {
  testing::TempDir dir;
  const std::filesystem::path run = write_small_run(dir);
  append_raw(run / k_journal_name, R"({"type":"evaluation","t":"2026-11-30T10:00)");
  expect_said(read_views(run), "torn by an interrupted write", "truncated tail");
}

TEST(JournalDamage, AGarbageLineIsSaid) {
  testing::TempDir dir;
  const std::filesystem::path run = write_small_run(dir);
  append_raw(run / k_journal_name, std::string("\x01garbage\xff\n", 10) + R"({"type":"cycle_end","cycle":1})" + "\n");
  expect_said(read_views(run), "not a JSON object, skipped", "garbage line");
}

TEST(JournalDamage, AMissingJournalIsSaid) {
  testing::TempDir dir;
  const std::filesystem::path run = write_small_run(dir);
  std::filesystem::remove(run / k_journal_name);
  expect_said(read_views(run), "journal.jsonl is missing", "missing journal");
}

}  // namespace
}  // namespace evoteam
