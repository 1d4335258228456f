// `evoteam compare` of campaigns: the campaign table side by side — the same suite run two ways (an evolving team
// against a single agent at equal budget) — with rows matched by task and workload, and what keeps the campaigns
// from being like for like (a task only one ran, a budget that differs) said rather than hidden.
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include <evoteam/core/json_fields.hpp>
#include <evoteam/core/text.hpp>

#include "report/campaign_sections.hpp"
#include "report/report_sections.hpp"

namespace evoteam {

namespace {

using RowKey = std::pair<std::string, std::string>;  // task, workload

nlohmann::json number_or_null(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// Every (task, workload) of any campaign, in the first campaign's order, then what the others add.
std::vector<RowKey> all_rows(const std::vector<CampaignReport>& campaigns) {
  std::vector<RowKey> keys;
  std::set<RowKey> seen;
  for (const CampaignReport& campaign : campaigns)
    for (const CampaignRow& row : campaign.rows)
      if (seen.insert({row.task, row.workload}).second) keys.emplace_back(row.task, row.workload);
  return keys;
}

std::vector<std::map<RowKey, const CampaignRow*>> rows_by_key(const std::vector<CampaignReport>& campaigns) {
  std::vector<std::map<RowKey, const CampaignRow*>> maps;
  for (const CampaignReport& campaign : campaigns) {
    std::map<RowKey, const CampaignRow*>& map = maps.emplace_back();
    for (const CampaignRow& row : campaign.rows) map.emplace(RowKey{row.task, row.workload}, &row);
  }
  return maps;
}

nlohmann::json entry_json(const CampaignRow& row) {
  return {{"run", row.run_id},
          {"best_candidate", row.best_candidate},
          {"start_s", number_or_null(row.start_s)},
          {"best_s", number_or_null(row.best_s)},
          {"speedup", number_or_null(row.speedup)},
          {"vendor_s", number_or_null(row.vendor_s)},
          {"vendor_fraction", number_or_null(row.vendor_fraction)},
          {"note", row.note},
          {"vendor_note", row.vendor_note}};
}

// A row's figures in the text table: speedup and fraction of the vendor, or the first words of why not.
std::string entry_text(const CampaignRow* row) {
  if (row == nullptr) return "(not in this campaign)";
  if (!row->speedup) return row->note.substr(0, 28);
  return speedup_text(row->speedup) + " / " + (row->vendor_fraction ? fraction_text(row->vendor_fraction) : "-");
}

}  // namespace

std::vector<std::string> campaign_differences(const std::vector<CampaignReport>& campaigns) {
  std::vector<std::string> differences;
  if (campaigns.size() < 2) return differences;
  std::vector<std::set<std::string>> task_sets;
  for (const CampaignReport& campaign : campaigns) {
    std::set<std::string>& names = task_sets.emplace_back();
    for (const CampaignTaskResult& task : campaign.tasks) names.insert(task.name);
  }
  for (std::size_t i = 0; i < campaigns.size(); ++i)
    for (const std::string& name : task_sets[i])
      for (std::size_t j = 0; j < campaigns.size(); ++j)
        if (!task_sets[j].count(name))
          differences.push_back("task " + name + " is in " + campaigns[i].id + " but not in " + campaigns[j].id);
  for (const auto& [name, limit] : campaigns.front().budgets.items()) {
    bool differ = false;
    std::vector<std::string> values;
    for (const CampaignReport& campaign : campaigns) {
      const nlohmann::json other = campaign.budgets.value(name, nlohmann::json(nullptr));
      differ |= other != limit;
      values.push_back(campaign.id + "=" + other.dump());
    }
    if (differ) differences.push_back("budget " + name + " differs: " + join(values, ", "));
  }
  return differences;
}

nlohmann::json compare_campaigns_json(const std::vector<CampaignReport>& campaigns) {
  nlohmann::json heads = nlohmann::json::array();
  for (const CampaignReport& campaign : campaigns) {
    nlohmann::json families = nlohmann::json::array();
    for (const CampaignSummary& family : campaign.families) families.push_back(to_json(family));
    heads.push_back({{"id", campaign.id},
                     {"dir", campaign.dir.string()},
                     {"suite", campaign.suite},
                     {"status", campaign.status},
                     {"budgets", campaign.budgets},
                     {"settings", campaign.settings},
                     {"tokens", campaign.tokens},
                     {"cost_usd", campaign.cost_usd},
                     {"summary", to_json(campaign.summary)},
                     {"families", families}});
  }
  const std::vector<std::map<RowKey, const CampaignRow*>> maps = rows_by_key(campaigns);
  nlohmann::json rows = nlohmann::json::array();
  for (const RowKey& key : all_rows(campaigns)) {
    nlohmann::json entries = nlohmann::json::array();
    std::string family;
    for (const auto& map : maps) {
      const auto found = map.find(key);
      if (found == map.end()) {
        entries.push_back(nullptr);
        continue;
      }
      family = found->second->op_family;
      entries.push_back(entry_json(*found->second));
    }
    rows.push_back({{"task", key.first}, {"op_family", family}, {"workload", key.second}, {"entries", entries}});
  }
  nlohmann::json differences = campaign_differences(campaigns);
  return {{"campaigns", heads}, {"rows", rows}, {"differences", differences}};
}

std::string format_campaign_comparison(const std::vector<CampaignReport>& campaigns) {
  std::ostringstream out;
  for (std::size_t i = 0; i < campaigns.size(); ++i) {
    const CampaignReport& campaign = campaigns[i];
    const std::string vendor = campaign_vendor_label(campaign);
    out << static_cast<char>('A' + i % 26) << ": " << campaign.id << " (" << campaign.status
        << (campaign.settings.contains("team") ? ", team " + text_or(campaign.settings, "team") : "") << ") "
        << vendor_headline(campaign.summary, vendor) << "; " << speedup_headline(campaign.summary) << "; "
        << fixed(campaign.tokens, 0) << " tokens, $" << fixed(campaign.cost_usd, 2) << "\n";
  }
  out << "\n" << std::left << std::setw(28) << "task" << std::setw(22) << "workload";
  for (std::size_t i = 0; i < campaigns.size(); ++i)
    out << std::setw(30) << std::string(1, static_cast<char>('A' + i % 26)) + ": speedup / of vendor";
  out << "\n";
  const std::vector<std::map<RowKey, const CampaignRow*>> maps = rows_by_key(campaigns);
  for (const RowKey& key : all_rows(campaigns)) {
    out << std::setw(28) << key.first << std::setw(22) << key.second;
    for (const auto& map : maps) {
      const auto found = map.find(key);
      out << std::setw(30) << entry_text(found == map.end() ? nullptr : found->second);
    }
    out << "\n";
  }
  for (const std::string& difference : campaign_differences(campaigns)) out << "note: " << difference << "\n";
  return out.str();
}

}  // namespace evoteam
