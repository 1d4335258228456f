// campaign.json as types: the budgets and their split, the tasks' states, and the campaign's end by the run's rule.
#include <algorithm>
#include <cmath>

#include <evoteam/campaign/campaign.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

namespace evoteam {

namespace {

struct CampaignStateName {
  CampaignTaskState state;
  const char* name;
};

constexpr CampaignStateName k_campaign_state_names[] = {
    {CampaignTaskState::pending, "pending"},   {CampaignTaskState::running, "running"},
    {CampaignTaskState::finished, "finished"}, {CampaignTaskState::stopped, "stopped"},
    {CampaignTaskState::failed, "failed"},     {CampaignTaskState::built_not_timed, "built_not_timed"},
    {CampaignTaskState::skipped, "skipped"},
};

template <typename T>
nlohmann::json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

template <typename T>
std::optional<T> optional_field(const nlohmann::json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object.at(key).is_number()) return std::nullopt;
  return object.at(key).get<T>();
}

std::string text_field(const nlohmann::json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object.at(key).is_string()) return "";
  return object.at(key).get<std::string>();
}

// Whole-number budgets: a share rounded down, yet at least 1 while anything is left, so no task starts with a
// budget of 0 (which a run reads as no limit).
std::optional<long long> count_share(std::optional<long long> left, double fraction, bool& spent) {
  if (!left) return std::nullopt;
  if (*left <= 0) {
    spent = true;
    return 0;
  }
  const auto share = static_cast<long long>(std::floor(static_cast<double>(*left) * fraction + 1e-9));
  return std::clamp(share, 1LL, *left);
}

std::optional<double> amount_share(std::optional<double> left, double fraction, bool& spent) {
  if (!left) return std::nullopt;
  if (*left <= 0) {
    spent = true;
    return 0.0;
  }
  return *left * fraction;
}

template <typename T>
std::optional<T> minus(std::optional<T> total, std::optional<T> taken) {
  if (!total) return std::nullopt;
  return *total - taken.value_or(T{});
}

template <typename T>
std::optional<T> plus(std::optional<T> a, std::optional<T> b) {
  if (!a && !b) return std::nullopt;
  return a.value_or(T{}) + b.value_or(T{});
}

CampaignBudgets add_budgets(const CampaignBudgets& a, const CampaignBudgets& b) {
  CampaignBudgets sum;
  sum.evaluations = plus(a.evaluations, b.evaluations);
  sum.gpu_seconds = plus(a.gpu_seconds, b.gpu_seconds);
  sum.tokens = plus(a.tokens, b.tokens);
  sum.usd = plus(a.usd, b.usd);
  sum.wall_s = plus(a.wall_s, b.wall_s);
  return sum;
}

nlohmann::json task_json(const CampaignTask& task) {
  return {{"name", task.name},
          {"task_dir", task.task_dir.string()},
          {"op_family", task.op_family},
          {"weight", task.weight},
          {"state", to_string(task.state)},
          {"reason", task.reason},
          {"run_dir", task.run_dir.empty() ? nlohmann::json(nullptr) : nlohmann::json(task.run_dir)},
          {"device", task.device},
          {"budget", task.budget.to_json()},
          {"spent", task.spent.to_json()},
          {"exit_code", optional_json(task.exit_code)}};
}

// A budget read back from campaign.json is what a person may have edited: a negative or non-finite one is refused
// naming it, as the campaign's flags refuse it, rather than split into shares no run can keep.
void check_budgets(const CampaignBudgets& budgets, const std::string& where) {
  const auto check = [&](const char* name, std::optional<double> value) {
    if (value && (!std::isfinite(*value) || *value < 0))
      throw InvalidInput(where + ": " + name + " must be a finite number, 0 or more");
  };
  check("evaluations", budgets.evaluations ? std::optional<double>(*budgets.evaluations) : std::nullopt);
  check("gpu_seconds", budgets.gpu_seconds);
  check("tokens", budgets.tokens ? std::optional<double>(*budgets.tokens) : std::nullopt);
  check("usd", budgets.usd);
  check("wall_s", budgets.wall_s);
}

CampaignTask task_from_json(const nlohmann::json& value, const std::string& where) {
  if (!value.is_object()) throw InvalidInput(where + ": a task is not a JSON object");
  CampaignTask task;
  task.name = text_field(value, "name");
  task.task_dir = text_field(value, "task_dir");
  if (task.name.empty() || task.task_dir.empty()) throw InvalidInput(where + ": a task lacks its name or task_dir");
  task.op_family = text_field(value, "op_family");
  task.weight = optional_field<double>(value, "weight").value_or(1.0);
  if (!std::isfinite(task.weight) || task.weight <= 0)
    throw InvalidInput(where + ": task " + task.name + ": weight must be a finite number above 0");
  const std::optional<CampaignTaskState> state = parse_campaign_task_state(text_field(value, "state"));
  if (!state) throw InvalidInput(where + ": task " + task.name + " has an unknown state");
  task.state = *state;
  task.reason = text_field(value, "reason");
  task.run_dir = text_field(value, "run_dir");
  task.device = text_field(value, "device");
  task.budget = CampaignBudgets::from_json(value.value("budget", nlohmann::json::object()));
  task.spent = CampaignBudgets::from_json(value.value("spent", nlohmann::json::object()));
  check_budgets(task.budget, where + ": task " + task.name + ": budget");
  check_budgets(task.spent, where + ": task " + task.name + ": spent");
  task.exit_code = optional_field<int>(value, "exit_code");
  return task;
}

}  // namespace

bool CampaignBudgets::any() const { return evaluations || gpu_seconds || tokens || usd || wall_s; }

nlohmann::json CampaignBudgets::to_json() const {
  return {{"evaluations", optional_json(evaluations)},
          {"gpu_seconds", optional_json(gpu_seconds)},
          {"tokens", optional_json(tokens)},
          {"usd", optional_json(usd)},
          {"wall_s", optional_json(wall_s)}};
}

CampaignBudgets CampaignBudgets::from_json(const nlohmann::json& value) {
  CampaignBudgets budgets;
  budgets.evaluations = optional_field<long long>(value, "evaluations");
  budgets.gpu_seconds = optional_field<double>(value, "gpu_seconds");
  budgets.tokens = optional_field<long long>(value, "tokens");
  budgets.usd = optional_field<double>(value, "usd");
  budgets.wall_s = optional_field<double>(value, "wall_s");
  return budgets;
}

CampaignBudgets budgets_left(const CampaignBudgets& total, const CampaignBudgets& committed) {
  CampaignBudgets left;
  left.evaluations = minus(total.evaluations, committed.evaluations);
  left.gpu_seconds = minus(total.gpu_seconds, committed.gpu_seconds);
  left.tokens = minus(total.tokens, committed.tokens);
  left.usd = minus(total.usd, committed.usd);
  left.wall_s = minus(total.wall_s, committed.wall_s);
  return left;
}

std::optional<CampaignBudgets> budget_share(const CampaignBudgets& left, double weight, double weight_left) {
  EVOTEAM_CHECK(weight > 0 && weight_left >= weight, "a task's weight is positive and within the weight left");
  const double fraction = std::min(1.0, weight / weight_left);
  bool spent = false;
  CampaignBudgets share;
  share.evaluations = count_share(left.evaluations, fraction, spent);
  share.gpu_seconds = amount_share(left.gpu_seconds, fraction, spent);
  share.tokens = count_share(left.tokens, fraction, spent);
  share.usd = amount_share(left.usd, fraction, spent);
  share.wall_s = amount_share(left.wall_s, fraction, spent);
  if (spent) return std::nullopt;
  return share;
}

std::string to_string(CampaignTaskState state) {
  for (const CampaignStateName& entry : k_campaign_state_names)
    if (entry.state == state) return entry.name;
  EVOTEAM_CHECK(false, "every campaign task state has a name");
  return "";
}

std::optional<CampaignTaskState> parse_campaign_task_state(const std::string& text) {
  for (const CampaignStateName& entry : k_campaign_state_names)
    if (text == entry.name) return entry.state;
  return std::nullopt;
}

bool has_ended(CampaignTaskState state) {
  return state != CampaignTaskState::pending && state != CampaignTaskState::running;
}

nlohmann::json Campaign::to_json() const {
  nlohmann::json task_list = nlohmann::json::array();
  for (const CampaignTask& task : tasks) task_list.push_back(task_json(task));
  return {{"schema", k_campaign_schema},
          {"kind", "campaign"},
          {"id", id},
          {"suite", suite},
          {"created", created},
          {"status", evoteam::to_string(status)},
          {"exit_code", optional_json(exit_code)},
          {"budgets", budgets.to_json()},
          {"settings", settings},
          {"tasks", task_list}};
}

Campaign Campaign::from_json(const nlohmann::json& value, const std::filesystem::path& source) {
  const std::string where = source.string();
  if (!value.is_object() || text_field(value, "kind") != "campaign")
    throw InvalidInput(where + " is not a campaign (no \"kind\": \"campaign\")");
  if (optional_field<int>(value, "schema") != k_campaign_schema)
    throw InvalidInput(where + ": unsupported schema (this evoteam reads schema " + std::to_string(k_campaign_schema) +
                       ")");
  Campaign campaign;
  campaign.id = text_field(value, "id");
  campaign.suite = text_field(value, "suite");
  campaign.created = text_field(value, "created");
  const std::optional<RunStatus> status = parse_run_status(text_field(value, "status"));
  if (!status) throw InvalidInput(where + ": unknown status");
  campaign.status = *status;
  campaign.exit_code = optional_field<int>(value, "exit_code");
  campaign.budgets = CampaignBudgets::from_json(value.value("budgets", nlohmann::json::object()));
  check_budgets(campaign.budgets, where + ": budgets");
  campaign.settings = value.value("settings", nlohmann::json::object());
  if (!value.contains("tasks") || !value["tasks"].is_array()) throw InvalidInput(where + ": no \"tasks\" array");
  // A campaign is made with at least one task; one without any has nothing to resume or to report as done.
  if (value["tasks"].empty()) throw InvalidInput(where + ": \"tasks\" is empty: a campaign has at least one task");
  for (const nlohmann::json& task : value["tasks"]) campaign.tasks.push_back(task_from_json(task, where));
  return campaign;
}

bool is_campaign_dir(const std::filesystem::path& dir) {
  std::error_code error;
  return std::filesystem::is_regular_file(dir / k_campaign_json_name, error);
}

Campaign read_campaign(const std::filesystem::path& campaign_dir) {
  const std::filesystem::path file = campaign_dir / k_campaign_json_name;
  return Campaign::from_json(read_json_file(file), file);
}

void write_campaign(const std::filesystem::path& campaign_dir, const Campaign& campaign) {
  write_json_atomic(campaign_dir / k_campaign_json_name, campaign.to_json());
}

CampaignBudgets committed_budgets(const Campaign& campaign) {
  CampaignBudgets committed;
  for (const CampaignTask& task : campaign.tasks) {
    if (task.state == CampaignTaskState::running)
      committed = add_budgets(committed, task.budget);
    else if (has_ended(task.state))
      committed = add_budgets(committed, task.spent);
  }
  return committed;
}

CampaignEnd campaign_end(const Campaign& campaign, bool interrupted) {
  const auto exit_of = [](ExitCode code) { return static_cast<int>(code); };
  bool any_failed = false, any_stopped = interrupted, any_budget = false;
  for (const CampaignTask& task : campaign.tasks) {
    switch (task.state) {
      case CampaignTaskState::failed: any_failed = true; break;
      case CampaignTaskState::stopped:
      case CampaignTaskState::pending:
      case CampaignTaskState::running: any_stopped = true; break;
      case CampaignTaskState::skipped: any_budget = true; break;
      case CampaignTaskState::finished:
        any_budget = any_budget || task.exit_code == exit_of(ExitCode::budget_exhausted);
        break;
      case CampaignTaskState::built_not_timed: break;
    }
  }
  if (any_stopped) return {RunStatus::stopped, exit_of(ExitCode::interrupted)};
  if (any_failed) return {RunStatus::failed, exit_of(ExitCode::failure)};
  return {RunStatus::finished, any_budget ? exit_of(ExitCode::budget_exhausted) : exit_of(ExitCode::success)};
}

}  // namespace evoteam
