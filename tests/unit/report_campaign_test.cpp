// The campaign report over a campaign.json written by hand around real run directories (copies of the scripted
// run in tests/data/runs_before_typed_records, one of them given vendor figures): its numbers are the runs' own,
// the tasks the runner did not time say why, the summary's geometric means and counts hold on hand-made numbers,
// the page reloads itself only while the campaign or run is live, and campaigns compare side by side.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/report/campaign_report.hpp>
#include <evoteam/report/run_report.hpp>
#include <evoteam/store/store.hpp>

#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

const std::filesystem::path k_fixture_run =
    std::filesystem::path(EVOTEAM_SOURCE_DIR) / "tests/data/runs_before_typed_records/scripted_run";

CampaignRow row_of(const std::string& family, std::optional<double> speedup, std::optional<double> fraction) {
  CampaignRow row;
  row.task = family + "_task";
  row.op_family = family;
  row.workload = "w";
  row.speedup = speedup;
  row.vendor_fraction = fraction;
  return row;
}

TEST(CampaignReport, GeometricMeansAndFasterCountsOnHandMadeNumbers) {
  const std::vector<CampaignRow> rows = {
      row_of("gemm", 2.0, 2.0), row_of("gemm", 8.0, 0.5),          row_of("norm", 4.0, 1.0),
      row_of("norm", 1.0, 4.0), row_of("host", 9.0, std::nullopt), row_of("norm", std::nullopt, std::nullopt),
  };
  const CampaignSummary all = summarize_rows(rows);
  EXPECT_EQ(all.workloads, 6);
  EXPECT_EQ(all.measured, 5);
  EXPECT_EQ(all.with_vendor, 4);
  EXPECT_EQ(all.faster, 2) << "1.0 is as fast, not faster";
  ASSERT_TRUE(all.geomean_vendor_fraction);
  EXPECT_NEAR(*all.geomean_vendor_fraction, std::pow(2.0 * 0.5 * 1.0 * 4.0, 1.0 / 4), 1e-12);
  ASSERT_TRUE(all.geomean_speedup);
  EXPECT_NEAR(*all.geomean_speedup, std::pow(2.0 * 8.0 * 4.0 * 1.0 * 9.0, 1.0 / 5), 1e-12);

  const CampaignSummary norm = summarize_rows(rows, "norm");
  EXPECT_EQ(norm.workloads, 3);
  EXPECT_EQ(norm.with_vendor, 2);
  EXPECT_EQ(norm.faster, 1);
  EXPECT_NEAR(*norm.geomean_vendor_fraction, 2.0, 1e-12);
  const CampaignSummary host = summarize_rows(rows, "host");
  EXPECT_FALSE(host.geomean_vendor_fraction) << "no vendor figure: no mean, rather than a made-up 1.0";
  EXPECT_EQ(host.faster, 0);
}

// A campaign directory: two copies of the fixture run (the second with FlashInfer figures written into its best's
// evaluation), a CUDA task the runner built but could not time, and one not started yet.
struct FixtureCampaign {
  testing::TempDir dir;
  std::filesystem::path plain_run, vendor_run;
  nlohmann::json campaign;

  FixtureCampaign() {
    plain_run = dir / "runs/run-a";
    vendor_run = dir / "runs/run-b";
    for (const auto& run : {plain_run, vendor_run}) {
      std::filesystem::create_directories(run);
      std::filesystem::copy(k_fixture_run, run, std::filesystem::copy_options::recursive);
    }
    nlohmann::json eval = read_json_file(vendor_run / "best/eval.json");
    std::vector<double> fractions;
    double vendor_speedup = 2.0;
    for (nlohmann::json& workload : eval["workloads"]) {
      const double fraction = workload["speedup"].get<double>() / vendor_speedup;
      workload["vendor"] = {{"median_s", workload["baseline"]["median_s"].get<double>() / vendor_speedup},
                            {"speedup", vendor_speedup},
                            {"fraction", fraction}};
      fractions.push_back(fraction);
      vendor_speedup *= 2;  // 2x, 4x, 8x: the candidate beats it on the first workload only
    }
    eval["vendor"] = {{"name", "flashinfer"}, {"status", "measured"}, {"detail", ""}};
    write_json_atomic(vendor_run / "best/eval.json", eval);
    campaign = {{"schema", 1},
                {"kind", "campaign"},
                {"id", "campaign-20261205-064512-ab12"},
                {"suite", "kernels/"},
                {"created", "2026-12-05T06:45:12Z"},
                {"status", "finished"},
                {"exit_code", 0},
                {"budgets", {{"evaluations", 40}, {"gpu_seconds", nullptr}, {"tokens", nullptr}}},
                {"settings", {{"team", "evolving"}}},
                {"tasks",
                 {{{"name", "host_matmul"}, {"op_family", "matmul"}, {"state", "finished"}, {"run_dir", "runs/run-a"}},
                  {{"name", "host_matmul_fi"},
                   {"op_family", "matmul"},
                   {"state", "finished"},
                   {"run_dir", vendor_run.string()}},
                  {{"name", "rmsnorm_h4096"},
                   {"op_family", "rmsnorm"},
                   {"state", "built_not_timed"},
                   {"reason", "no GPU on this machine"},
                   {"task_dir", (std::filesystem::path(EVOTEAM_SOURCE_DIR) / "kernels/rmsnorm_h4096").string()},
                   {"run_dir", nullptr}},
                  {{"name", "later_task"}, {"state", "pending"}, {"run_dir", nullptr}}}}};
    write();
  }
  void write() const { write_json_atomic(dir / "campaign.json", campaign); }
};

TEST(CampaignReport, RowsCarryTheRunsOwnFigures) {
  FixtureCampaign fixture;
  const CampaignReport report = load_campaign_report(fixture.dir.path());
  EXPECT_TRUE(report.warnings.empty()) << join(report.warnings, "\n");
  ASSERT_EQ(report.tasks.size(), 4u);
  const nlohmann::json run = read_json_file(fixture.plain_run / "run.json");
  const nlohmann::json& summary = run["summary"];
  const double tokens = summary["tokens"]["input"].get<double>() + summary["tokens"]["output"].get<double>();
  for (const auto& [task, run_dir] : {std::pair<std::string, std::filesystem::path>{"host_matmul", fixture.plain_run},
                                      {"host_matmul_fi", fixture.vendor_run}}) {
    SCOPED_TRACE(task);
    const nlohmann::json eval = read_json_file(run_dir / "best/eval.json");
    std::size_t seen = 0;
    for (const CampaignRow& row : report.rows) {
      if (row.task != task) continue;
      const nlohmann::json& workload = eval["workloads"][seen++];
      EXPECT_EQ(row.workload, workload["name"]);
      EXPECT_EQ(row.op_family, "matmul");
      EXPECT_EQ(row.run_id, run["id"]);
      EXPECT_EQ(row.best_candidate, summary["best_candidate"]);
      EXPECT_EQ(row.device, "host");
      EXPECT_EQ(row.start_s, workload["baseline"]["median_s"].get<double>());
      EXPECT_EQ(row.best_s, workload["candidate"]["median_s"].get<double>());
      EXPECT_EQ(row.speedup, workload["speedup"].get<double>());
      EXPECT_EQ(row.tokens, tokens);
      EXPECT_EQ(row.cost_usd, summary["cost_usd"].get<double>());
      if (workload["vendor"].is_object()) {
        EXPECT_EQ(row.vendor_s, workload["vendor"]["median_s"].get<double>());
        EXPECT_EQ(row.vendor_fraction, workload["vendor"]["fraction"].get<double>());
        EXPECT_TRUE(row.vendor_note.empty());
      } else {
        EXPECT_FALSE(row.vendor_fraction);
        EXPECT_EQ(row.vendor_note, "host task: no GPU, no FlashInfer");
      }
    }
    EXPECT_EQ(seen, eval["workloads"].size());
  }
  // The task the runner built but did not time: one row per workload of its task, each saying so.
  std::vector<std::string> rmsnorm;
  for (const CampaignRow& row : report.rows)
    if (row.task == "rmsnorm_h4096") {
      rmsnorm.push_back(row.workload);
      EXPECT_FALSE(row.speedup);
      EXPECT_EQ(row.note, "built, not timed: no GPU on this machine");
    }
  EXPECT_EQ(rmsnorm.size(), 6u) << "kernels/rmsnorm_h4096 lists six workloads";
  const auto later = std::find_if(report.rows.begin(), report.rows.end(),
                                  [](const CampaignRow& row) { return row.task == "later_task"; });
  ASSERT_NE(later, report.rows.end());
  EXPECT_EQ(later->note, "not started yet");
  EXPECT_EQ(later->op_family, "later_task") << "a task without an op family is its own";

  // The summary: the three vendor-measured workloads (fractions s/2, s/4, s/8), faster on the first only.
  EXPECT_EQ(report.summary.workloads, 3 + 3 + 6 + 1);
  EXPECT_EQ(report.summary.measured, 6);
  EXPECT_EQ(report.summary.with_vendor, 3);
  EXPECT_EQ(report.summary.faster, 1);
  ASSERT_EQ(report.families.size(), 3u);
  EXPECT_EQ(report.families[0].family, "matmul");
  EXPECT_EQ(report.families[0].with_vendor, 3);
  EXPECT_EQ(report.families[1].family, "rmsnorm");
  EXPECT_EQ(report.families[1].measured, 0);
}

TEST(CampaignReport, PagesSayWhatIsMissingInsteadOfANumber) {
  FixtureCampaign fixture;
  const std::vector<std::filesystem::path> written = write_campaign_report(fixture.dir.path());
  ASSERT_EQ(written.size(), 2u);
  const std::string html = read_file(fixture.dir / "report.html");
  const std::string markdown = read_file(fixture.dir / "report.md");
  const CampaignReport report = load_campaign_report(fixture.dir.path());
  const std::string headline = fixed(*report.summary.geomean_vendor_fraction, 2) +
                               "x of FlashInfer's speed (geometric mean over 3 workloads with a FlashInfer time), "
                               "faster on 1 of 3";
  EXPECT_NE(markdown.find("**" + headline + "**"), std::string::npos) << markdown;
  std::string escaped = headline;
  escaped.replace(escaped.find('\''), 1, "&#39;");  // FlashInfer's, as HTML text
  EXPECT_NE(html.find("<b>" + escaped + "</b>"), std::string::npos) << html;
  EXPECT_NE(markdown.find("Workloads without a FlashInfer figure: 3 host task; 6 built, not timed; 1 not started yet"),
            std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| rmsnorm_h4096 | b16 | built, not timed: no GPU on this machine | - |"), std::string::npos);
  const CampaignRow& first = report.rows.front();
  EXPECT_NE(markdown.find("| host_matmul | " + first.workload + " | " + human_duration(*first.start_s) + " | " +
                          human_duration(*first.best_s) + " | " + fixed(*first.speedup, 2) + "x | host task"),
            std::string::npos)
      << markdown;
  // One point per vendor-measured workload in the sorted chart, the run linked relative to the campaign.
  std::size_t circles = 0;
  for (std::size_t at = html.find("<circle class=\"cand "); at != std::string::npos;
       at = html.find("<circle class=\"cand ", at + 1))
    ++circles;
  EXPECT_EQ(circles, 3u);
  EXPECT_NE(html.find("<a href=\"runs/run-a/report.html\">"), std::string::npos);
  EXPECT_EQ(html.find("http-equiv=\"refresh\""), std::string::npos) << "a finished campaign's page stays still";
  EXPECT_EQ(html.find("src=\"http"), std::string::npos) << "nothing is fetched";
}

TEST(CampaignReport, TheLivePageReloadsItselfUntilTheCampaignEnds) {
  FixtureCampaign fixture;
  fixture.campaign["status"] = "running";
  fixture.campaign["tasks"][3]["state"] = "running";
  fixture.write();
  write_campaign_report(fixture.dir.path());
  EXPECT_NE(read_file(fixture.dir / "report.html").find("<meta http-equiv=\"refresh\""), std::string::npos);
  EXPECT_NE(read_file(fixture.dir / "report.md").find("| live |"), std::string::npos);
  fixture.campaign["status"] = "stopped";
  fixture.write();
  write_campaign_report(fixture.dir.path());
  EXPECT_EQ(read_file(fixture.dir / "report.html").find("http-equiv=\"refresh\""), std::string::npos);
  EXPECT_EQ(read_file(fixture.dir / "report.md").find("| live |"), std::string::npos);
}

// A run's page reloads while run.json says running and a live process holds the run, not after a kill -9.
TEST(CampaignReport, ARunsPageIsLiveOnlyWhileItsDaemonHoldsIt) {
  testing::TempDir dir;
  const std::filesystem::path run = dir / "run";
  std::filesystem::copy(k_fixture_run, run, std::filesystem::copy_options::recursive);
  nlohmann::json run_json = read_json_file(run / "run.json");
  run_json["status"] = "running";
  write_json_atomic(run / "run.json", run_json);
  EXPECT_FALSE(load_run_report(run).live) << "running, but no one holds it: a killed run";
  {
    RunLock lock(run);
    const RunReport report = load_run_report(run);
    EXPECT_TRUE(report.live);
    const std::string html = render_report_html(report);
    EXPECT_NE(html.find("<meta http-equiv=\"refresh\""), std::string::npos);
    EXPECT_NE(html.find("id=\"live\" data-cycles=\"2\""), std::string::npos);
  }
  EXPECT_EQ(render_report_html(load_run_report(run)).find("http-equiv"), std::string::npos);
}

TEST(CampaignReport, NotACampaignIsRefusedByName) {
  testing::TempDir dir;
  EXPECT_THROW(load_campaign_report(dir.path()), InvalidInput);
  write_json_atomic(dir / "campaign.json", nlohmann::json{{"kind", "run"}});
  EXPECT_THROW(load_campaign_report(dir.path()), InvalidInput);
  EXPECT_THROW(load_campaign_report(dir / "missing"), InvalidInput);
}

TEST(CampaignReport, ADamagedRunIsAWarningAndItsRowsSaySo) {
  FixtureCampaign fixture;
  std::filesystem::remove(fixture.plain_run / "run.json");
  const CampaignReport report = load_campaign_report(fixture.dir.path());
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_EQ(report.warnings[0].rfind("host_matmul: its run was not read", 0), 0u) << report.warnings[0];
  EXPECT_EQ(report.rows.front().note, "run not readable");
}

TEST(CampaignCompare, TheSameTableSideBySideWithTheDifferencesNamed) {
  FixtureCampaign a, b;
  b.campaign["id"] = "campaign-single";
  b.campaign["settings"]["team"] = "single";
  b.campaign["budgets"]["evaluations"] = 20;
  b.campaign["tasks"].erase(3);
  b.write();
  const std::vector<CampaignReport> both = {load_campaign_report(a.dir.path()), load_campaign_report(b.dir.path())};
  const nlohmann::json json = compare_campaigns_json(both);
  ASSERT_EQ(json["campaigns"].size(), 2u);
  EXPECT_EQ(json["campaigns"][1]["id"], "campaign-single");
  EXPECT_EQ(json["campaigns"][0]["summary"]["faster_than_vendor"], 1);
  ASSERT_EQ(json["rows"].size(), both[0].rows.size());
  const nlohmann::json& first = json["rows"][0];
  EXPECT_EQ(first["task"], "host_matmul");
  EXPECT_EQ(first["entries"][0]["speedup"], *both[0].rows[0].speedup);
  EXPECT_EQ(first["entries"][1]["speedup"], *both[1].rows[0].speedup);
  EXPECT_TRUE(json["rows"].back()["entries"][1].is_null()) << "later_task is not in the second campaign";
  const std::vector<std::string> differences = json["differences"];
  ASSERT_EQ(differences.size(), 2u) << json["differences"].dump();
  EXPECT_EQ(differences[0], "task later_task is in campaign-20261205-064512-ab12 but not in campaign-single");
  EXPECT_EQ(differences[1].rfind("budget evaluations differs", 0), 0u);
  const std::string text = format_campaign_comparison(both);
  EXPECT_NE(text.find("B: campaign-single (finished, team single)"), std::string::npos) << text;
  EXPECT_NE(text.find("(not in this campaign)"), std::string::npos) << text;
}

}  // namespace
}  // namespace evoteam
