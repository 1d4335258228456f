// `evoteam report` and `evoteam compare`: a run's or a campaign's report as HTML and Markdown, and runs or
// campaigns side by side.
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include <evoteam/campaign/campaign.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/report/campaign_report.hpp>
#include <evoteam/report/compare.hpp>
#include <evoteam/report/report.hpp>
#include <evoteam/report/run_report.hpp>

#include "cli/command.hpp"

namespace evoteam::cli {

void add_report(CLI::App& sub, CommandContext& context) {
  auto run = std::make_shared<std::string>();
  auto runs_dir = std::make_shared<std::string>();
  auto out_dir = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>();
  sub.add_option("RUN", *run,
                 "Run directory or a run id under --runs-dir; or a campaign directory (holding campaign.json) or a "
                 "campaign id under --runs-dir/campaigns")
      ->required();
  sub.add_option("--runs-dir", *runs_dir, "Directory holding run directories (default: store.runs_dir)");
  sub.add_option("--out", *out_dir, "Write report.html and report.md here (default: the run or campaign directory)");
  sub.add_option("--format", *format, "Write only this one: html or md")->check(CLI::IsMember({"html", "md"}));
  sub.callback([&context, run, runs_dir, out_dir, format] {
    context.action = [&context, run, runs_dir, out_dir, format] {
      std::vector<ReportFormat> formats{ReportFormat::html, ReportFormat::markdown};
      if (*format == "html") formats = {ReportFormat::html};
      if (*format == "md") formats = {ReportFormat::markdown};
      std::vector<std::filesystem::path> written;
      if (const std::optional<std::filesystem::path> campaign = find_campaign(*run, context.runs_dir(*runs_dir))) {
        written = write_campaign_report(load_campaign_report(*campaign),
                                        out_dir->empty() ? *campaign : std::filesystem::path(*out_dir), formats);
      } else {
        const std::filesystem::path dir = resolve_run(*run, context.runs_dir(*runs_dir));
        const RunReport report = load_run_report(dir);
        for (const std::string& skipped : report.journal_skipped) std::cerr << "warning: " << skipped << "\n";
        written = write_run_report(report, out_dir->empty() ? dir : std::filesystem::path(*out_dir), formats);
      }
      for (const auto& path : written) std::cout << path.string() << "\n";
      return 0;
    };
  });
}

void add_compare(CLI::App& sub, CommandContext& context) {
  auto runs = std::make_shared<std::vector<std::string>>();
  auto runs_dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto html = std::make_shared<std::string>();
  sub.add_option("RUN", *runs,
                 "Run directories or run ids under --runs-dir; or campaigns (directories holding campaign.json, or ids "
                 "under --runs-dir/campaigns): their tables side by side")
      ->required();
  sub.add_option("--runs-dir", *runs_dir, "Directory holding run directories (default: store.runs_dir)");
  sub.add_flag("--json", *json, "Print a JSON array, one object per run");
  sub.add_option("--html", *html, "Also write the table and the overlaid best-so-far curves to this HTML file");
  sub.callback([&context, runs, runs_dir, json, html] {
    context.action = [&context, runs, runs_dir, json, html] {
      std::vector<CampaignReport> campaigns;
      for (const std::string& name : *runs)
        if (const std::optional<std::filesystem::path> campaign = find_campaign(name, context.runs_dir(*runs_dir)))
          campaigns.push_back(load_campaign_report(*campaign));
      if (!campaigns.empty()) {
        if (campaigns.size() != runs->size())
          throw InvalidInput("compare takes runs or campaigns, not both: " + std::to_string(campaigns.size()) + " of " +
                             std::to_string(runs->size()) + " are campaigns");
        if (!html->empty()) throw InvalidInput("--html compares runs; each campaign has its own report.html");
        if (*json)
          print_json(compare_campaigns_json(campaigns));
        else
          std::cout << format_campaign_comparison(campaigns);
        return 0;
      }
      std::vector<RunComparison> compared;
      for (const std::string& run : *runs)
        compared.push_back(compare_entry(load_run_report(resolve_run(run, context.runs_dir(*runs_dir)))));
      for (const RunComparison& run : compared)
        for (const std::string& skipped : run.journal_skipped)
          std::cerr << "warning: " << run.run << ": " << skipped << "\n";
      if (!html->empty()) write_file_atomic(*html, render_comparison_html(compared));
      if (*json) {
        nlohmann::json items = nlohmann::json::array();
        for (const RunComparison& run : compared) items.push_back(to_json(run));
        print_json(items);
      } else {
        std::cout << format_comparison_table(compared);
      }
      return 0;
    };
  });
}

}  // namespace evoteam::cli
