#pragma once
// `evoteam campaign SUITE`: one ordinary run per task of a suite, under one campaign directory, with the suite's
// budgets split across its tasks. The campaign directory holds campaign.json (which run belongs to which task and
// its state), campaign.lock (the daemon's lock while it is alive) and runs/<run>/ (what `evoteam optimize` writes).
// Every task's run is a child `evoteam optimize` of the same binary in its own session, so `status`, `report`,
// `resume` and `wait` read it as any run; results are read from the runs' own files, never copied.
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/store/store.hpp>

namespace evoteam {

class Config;

inline constexpr int k_campaign_schema = 1;
inline constexpr const char* k_campaign_json_name = "campaign.json";
inline constexpr const char* k_campaign_lock_name = "campaign.lock";
inline constexpr const char* k_campaign_runs_folder = "runs";
// Under store.runs_dir when --out is not given.
inline constexpr const char* k_campaigns_folder = "campaigns";

// --- The suite -------------------------------------------------------------------------------------------

struct SuiteEntry {
  std::filesystem::path task_dir;  // absolute, holding task.json
  double weight = 1.0;             // its share of the budgets relative to the others
};

// SUITE as the user wrote it: a directory (its direct children holding task.json are the tasks, in name order; a
// directory that itself holds task.json is a suite of one), a glob over task directories, or a file listing task
// directories one per line with an optional weight ("kernels/host_matmul 2"; "#" starts a comment; a relative path
// is read against the list's own folder first, then the working directory). Throws InvalidInput naming the line or
// path when a listed task has no task.json, a weight is not a positive number, a task is listed twice, or the
// suite holds no task.
std::vector<SuiteEntry> resolve_suite(const std::string& suite);

// --- Budgets ---------------------------------------------------------------------------------------------

// The --budget-* limits of the whole campaign, or of one task's share; an unset one is no limit.
struct CampaignBudgets {
  std::optional<long long> evaluations;
  std::optional<double> gpu_seconds;
  std::optional<long long> tokens;
  std::optional<double> usd;
  std::optional<double> wall_s;  // --budget-hours, in seconds

  bool any() const;
  nlohmann::json to_json() const;  // every key, null when unset
  static CampaignBudgets from_json(const nlohmann::json& value);
};

// What is left of `total` once `committed` is taken (per budget; a budget unset in `total` stays unset).
CampaignBudgets budgets_left(const CampaignBudgets& total, const CampaignBudgets& committed);

// One task's share of `left`: weight / weight_left of each budget, where weight_left is the weight of the task and
// of every task not yet started after it, so the last task gets whatever is left. Counts are whole numbers rounded
// down, at least 1 while any is left. nullopt when some budget is already spent (its share would be nothing).
std::optional<CampaignBudgets> budget_share(const CampaignBudgets& left, double weight, double weight_left);

// --- campaign.json ---------------------------------------------------------------------------------------

enum class CampaignTaskState { pending, running, finished, stopped, failed, built_not_timed, skipped };
std::string to_string(CampaignTaskState state);
std::optional<CampaignTaskState> parse_campaign_task_state(const std::string& text);
// A task that will not change again unless the campaign is resumed (everything but pending and running).
bool has_ended(CampaignTaskState state);

struct CampaignTask {
  std::string name;  // the task directory's name
  std::filesystem::path task_dir;
  std::string op_family;
  double weight = 1.0;
  CampaignTaskState state = CampaignTaskState::pending;
  std::string reason;            // why, for skipped, built_not_timed and failed
  std::string run_dir;           // relative to the campaign directory; empty until started
  std::string device;            // the GPU it was given ("" for none)
  CampaignBudgets budget;        // its share when it started
  CampaignBudgets spent;         // from the run's own files, once it ended
  std::optional<int> exit_code;  // the run's
};

struct Campaign {
  std::string id;
  std::string suite;
  std::string created;
  RunStatus status = RunStatus::running;
  std::optional<int> exit_code;
  CampaignBudgets budgets;
  // team, policy, agent, devices, executor, and what each run is started with: "global_args" (--config, --set)
  // and "optimize_args" (the optimize flags passed through), so a resumed campaign starts its runs alike.
  nlohmann::json settings = nlohmann::json::object();
  std::vector<CampaignTask> tasks;

  nlohmann::json to_json() const;
  static Campaign from_json(const nlohmann::json& value, const std::filesystem::path& source);
};

bool is_campaign_dir(const std::filesystem::path& dir);
// Throws InvalidInput naming the file when it is missing or not a campaign.json of schema 1.
Campaign read_campaign(const std::filesystem::path& campaign_dir);
void write_campaign(const std::filesystem::path& campaign_dir, const Campaign& campaign);

// What the tasks that ended spent plus what the running ones were given: what the next share is taken from.
CampaignBudgets committed_budgets(const Campaign& campaign);

// The campaign's end by the run's rule, task by task: stopped (exit 130) when interrupted or any run was stopped;
// failed (exit 1) when any task failed; else finished, with exit 5 when a budget ended any run (or left a task
// without a share) and 0 otherwise. built_not_timed tasks end normally: the machine cannot time them.
struct CampaignEnd {
  RunStatus status = RunStatus::finished;
  int exit_code = 0;
};
CampaignEnd campaign_end(const Campaign& campaign, bool interrupted);

// --- Running ---------------------------------------------------------------------------------------------

struct CampaignOptions {
  std::string suite;
  CampaignBudgets budgets;
  std::filesystem::path out_dir;                       // empty: <runs_dir>/campaigns/<id>
  std::filesystem::path runs_dir;                      // store.runs_dir or --runs-dir
  nlohmann::json settings = nlohmann::json::object();  // see Campaign::settings
};

struct CampaignHooks {
  // Once the campaign directory exists (the detached daemon hands it to its caller here).
  std::function<void(const std::filesystem::path& campaign_dir)> on_created;
  // After every change of a task's state and at every cycle end of a running run.
  std::function<void(const std::filesystem::path& campaign_dir)> on_progress;
};

struct CampaignOutcome {
  std::filesystem::path dir;
  Campaign campaign;
  nlohmann::json to_json() const;
};

// Creates the campaign directory, then runs it to its end.
CampaignOutcome run_campaign(const Config& config, const CampaignOptions& options, const CampaignHooks& hooks);
// Continues a campaign whose daemon stopped or died: a run still alive is waited for, a run that was stopped or
// died is resumed (`evoteam resume`), pending tasks are started. Throws Error (exit 4) while a daemon holds it.
CampaignOutcome resume_campaign(const Config& config, const std::filesystem::path& campaign_dir,
                                const CampaignHooks& hooks);

// --- Watching --------------------------------------------------------------------------------------------

// A campaign directory given as a path, or a campaign id under <runs_dir>/campaigns; nullopt when neither.
std::optional<std::filesystem::path> find_campaign(const std::string& name, const std::filesystem::path& runs_dir);

// `status CAMPAIGN`: campaign.json with the daemon's liveness and each run's live status.
nlohmann::json campaign_status_json(const std::filesystem::path& campaign_dir);
std::string format_campaign_status(const std::filesystem::path& campaign_dir);

// Exit code and message of `wait CAMPAIGN` (as wait_for_run for a run).
struct CampaignWait {
  int exit_code = 0;
  std::string message;
};
CampaignWait wait_for_campaign(const std::filesystem::path& campaign_dir,
                               std::optional<std::chrono::milliseconds> timeout, std::chrono::milliseconds poll);

// The campaigns under <runs_dir>/campaigns, newest first: `runs` shows each as one line with its runs under it.
std::vector<std::filesystem::path> list_campaigns(const std::filesystem::path& runs_dir);
std::string format_campaign_lines(const std::vector<std::filesystem::path>& campaigns);
nlohmann::json campaign_summary_json(const std::filesystem::path& campaign_dir);

}  // namespace evoteam
