// The campaign's loop: each task's run is a child `evoteam optimize` of this same binary in its own session, started
// when a slot (a device, or the one slot of a machine without GPUs) is free, with its share of what is left of the
// budgets; its end is read from the run's own files. A daemon killed with -9 leaves its runs going: resume adopts
// the live ones, resumes the ones that stopped or died, and starts the pending ones.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <ctime>
#include <iomanip>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include <spdlog/spdlog.h>

#include <evoteam/campaign/campaign.hpp>
#include <evoteam/cluster/cluster.hpp>
#include <evoteam/core/config.hpp>
#include <evoteam/core/detach.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/core/timestamp.hpp>
#include <evoteam/report/report.hpp>
#include <evoteam/report/status.hpp>
#include <evoteam/task/task.hpp>

#include "campaign/campaign_spawn.hpp"

extern char** environ;

namespace evoteam {

namespace {

// Often enough that a run's end starts the next task within a breath, rarely enough to cost nothing.
constexpr std::chrono::milliseconds k_campaign_poll{250};
// The starting kernel's static and build stages on a machine that cannot time a CUDA task.
constexpr std::chrono::minutes k_build_check_timeout{30};
// A run whose daemon keeps dying is not resumed forever within one session of the campaign.
constexpr int k_max_resumes_per_session = 2;
constexpr const char* k_campaign_daemon_log = "daemon.log";

std::string campaign_id() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  ::gmtime_r(&now, &parts);
  std::ostringstream id;
  std::random_device random;
  id << "campaign-" << std::put_time(&parts, "%Y%m%d-%H%M%S") << "-" << std::hex << std::setw(4) << std::setfill('0')
     << (random() & 0xffffu);
  return id.str();
}

std::string number_text(double value) {
  std::ostringstream text;
  text << std::setprecision(12) << value;
  return text.str();
}

// task.json's op family when it names one (FlashInfer definitions call it op_type), else the task's name.
std::string op_family_of(const std::filesystem::path& task_dir, const std::string& name) {
  try {
    const nlohmann::json task = read_json_file(task_dir / "task.json");
    for (const char* key : {"op_family", "op_type"})
      if (task.contains(key) && task[key].is_string() && !task[key].get<std::string>().empty())
        return task[key].get<std::string>();
  } catch (const Error&) {
    // An unreadable task.json fails when its run starts, with the loader's message.
  }
  return name;
}

std::vector<std::string> string_list(const nlohmann::json& settings, const char* key) {
  std::vector<std::string> values;
  if (settings.contains(key) && settings[key].is_array())
    for (const nlohmann::json& value : settings[key])
      if (value.is_string()) values.push_back(value.get<std::string>());
  return values;
}

std::string setting_text(const nlohmann::json& settings, const char* key) {
  return settings.contains(key) && settings[key].is_string() ? settings[key].get<std::string>() : "";
}

// What the run's own files say it spent, by the campaign's budget names.
CampaignBudgets spent_of(const std::filesystem::path& run_dir) {
  CampaignBudgets spent;
  const RunStatusView view = run_status(run_dir);
  for (const BudgetBurn& burn : view.budgets) {
    if (burn.name == "evaluations") spent.evaluations = std::llround(burn.spent);
    if (burn.name == "gpu_seconds") spent.gpu_seconds = burn.spent;
    if (burn.name == "tokens") spent.tokens = std::llround(burn.spent);
    if (burn.name == "usd") spent.usd = burn.spent;
    if (burn.name == "hours") spent.wall_s = burn.spent * 3600.0;
  }
  return spent;
}

int summary_cycles(const std::filesystem::path& run_dir) {
  try {
    const nlohmann::json run = read_run_json(run_dir);
    const nlohmann::json summary = run.value("summary", nlohmann::json::object());
    return summary.contains("cycles") && summary["cycles"].is_number_integer() ? summary["cycles"].get<int>() : 0;
  } catch (const Error&) {
    return 0;
  }
}

class CampaignRunner {
 public:
  CampaignRunner(const Config& config, std::filesystem::path dir, Campaign campaign, const CampaignHooks& hooks)
      : m_config(config), m_dir(std::move(dir)), m_campaign(std::move(campaign)), m_hooks(hooks) {
    m_self = std::filesystem::read_symlink("/proc/self/exe");
    choose_slots();
  }

  // Takes over the runs a previous daemon left: live ones are watched, stopped or dead ones resumed.
  void adopt_runs() {
    for (std::size_t i = 0; i < m_campaign.tasks.size(); ++i) {
      CampaignTask& task = m_campaign.tasks[i];
      const bool unfinished = task.state == CampaignTaskState::running || task.state == CampaignTaskState::stopped;
      if (!unfinished) continue;
      if (task.run_dir.empty()) {
        task.state = CampaignTaskState::pending;  // it never got its run: start it afresh
        continue;
      }
      task.state = CampaignTaskState::running;
      const std::filesystem::path run = m_dir / task.run_dir;
      if (lock_holder(run)) continue;
      const nlohmann::json run_json = read_run_json(run);
      const std::optional<RunStatus> status = parse_run_status(run_json.value("status", ""));
      if (status == RunStatus::running || status == RunStatus::stopped)
        resume_run(i);
      else
        record_end(i);
    }
    save();
  }

  CampaignOutcome loop() {
    while (true) {
      if (interrupted()) return stop_all();
      for (std::size_t i = 0; i < m_campaign.tasks.size(); ++i)
        if (m_campaign.tasks[i].state == CampaignTaskState::running) watch(i);
      start_pending();
      bool active = false;
      for (const CampaignTask& task : m_campaign.tasks) active = active || !has_ended(task.state);
      if (!active) break;
      std::this_thread::sleep_for(k_campaign_poll);
    }
    return finish(false);
  }

  void save() {
    write_campaign(m_dir, m_campaign);
    if (m_hooks.on_progress) m_hooks.on_progress(m_dir);
  }

 private:
  // Slots: one per device when this machine times CUDA tasks on several, else one. Host tasks take a slot too, so
  // a host-only machine runs one task at a time and no two timings share a GPU.
  void choose_slots() {
    ClusterSettings cluster = cluster_settings(m_config);
    const std::string devices = setting_text(m_campaign.settings, "devices");
    if (!devices.empty()) cluster.devices = devices;
    const std::string executor = setting_text(m_campaign.settings, "executor");
    if (!executor.empty()) cluster.executor = executor_from_string(executor);
    m_slots = {""};
    m_can_time_cuda = cluster.executor != Executor::local;  // the cluster places and times every run
    bool probed = m_can_time_cuda;
    m_cuda.assign(m_campaign.tasks.size(), false);
    for (std::size_t i = 0; i < m_campaign.tasks.size(); ++i) {
      Task loaded;
      try {
        loaded = load_task(m_campaign.tasks[i].task_dir);
      } catch (const Error&) {
        continue;  // it fails with the loader's message when its turn comes
      }
      m_cuda[i] = loaded.target == Target::cuda;
      if (!m_cuda[i] || !loaded.ranks_axis.empty() || probed) continue;
      probed = true;
      const std::vector<std::string> found = local_devices(cluster, loaded, system_runner());
      m_can_time_cuda = !(found.size() == 1 && found.front().empty());
      if (m_can_time_cuda) m_slots = found;
    }
  }

  // A CUDA task where nothing can time it never takes a share: the budget goes to the tasks that can use it.
  bool takes_share(std::size_t index) const { return !(m_cuda[index] && !m_can_time_cuda); }

  bool slot_free(const std::string& slot) const {
    for (const CampaignTask& task : m_campaign.tasks)
      if (task.state == CampaignTaskState::running && task.device == slot) return false;
    return true;
  }

  std::vector<std::string> child_args(const std::vector<std::string>& tail) const {
    std::vector<std::string> args = string_list(m_campaign.settings, "global_args");
    args.insert(args.end(), tail.begin(), tail.end());
    return args;
  }

  void start_pending() {
    for (std::size_t i = 0; i < m_campaign.tasks.size(); ++i) {
      if (m_campaign.tasks[i].state != CampaignTaskState::pending) continue;
      std::optional<std::string> slot;
      for (const std::string& candidate : m_slots)
        if (slot_free(candidate)) {
          slot = candidate;
          break;
        }
      if (!slot) return;  // in suite order: a later task never overtakes an earlier one
      start(i, *slot);
      if (interrupted()) return;
    }
  }

  void start(std::size_t index, const std::string& slot) {
    CampaignTask& task = m_campaign.tasks[index];
    Task loaded;
    try {
      loaded = load_task(task.task_dir);
    } catch (const Error& error) {
      end_task(index, CampaignTaskState::failed, error.what());
      return;
    }
    m_cuda[index] = loaded.target == Target::cuda;
    const bool multi_gpu = !loaded.ranks_axis.empty();
    if (loaded.target == Target::cuda && !m_can_time_cuda) {
      check_build(index);
      return;
    }
    double weight_left = 0;
    for (std::size_t other = 0; other < m_campaign.tasks.size(); ++other)
      if (m_campaign.tasks[other].state == CampaignTaskState::pending && takes_share(other))
        weight_left += m_campaign.tasks[other].weight;
    const std::optional<CampaignBudgets> share =
        budget_share(budgets_left(m_campaign.budgets, committed_budgets(m_campaign)), task.weight, weight_left);
    if (!share) {
      end_task(index, CampaignTaskState::skipped, "the campaign's budget was spent before this task's turn");
      return;
    }
    std::vector<std::string> tail = {"optimize", task.task_dir.string(), "--runs-dir",
                                     (m_dir / k_campaign_runs_folder).string()};
    const std::vector<std::string> passed = string_list(m_campaign.settings, "optimize_args");
    tail.insert(tail.end(), passed.begin(), passed.end());
    if (share->evaluations) tail.insert(tail.end(), {"--budget-evaluations", std::to_string(*share->evaluations)});
    if (share->gpu_seconds) tail.insert(tail.end(), {"--budget-gpu-seconds", number_text(*share->gpu_seconds)});
    if (share->tokens) tail.insert(tail.end(), {"--budget-tokens", std::to_string(*share->tokens)});
    if (share->usd) tail.insert(tail.end(), {"--budget-usd", number_text(*share->usd)});
    if (share->wall_s) tail.insert(tail.end(), {"--budget-hours", number_text(*share->wall_s / 3600.0)});
    // One device per CUDA run when there are several; a multi-GPU task keeps the devices the user named.
    const std::string devices = setting_text(m_campaign.settings, "devices");
    if (loaded.target == Target::cuda && !slot.empty() && !multi_gpu)
      tail.insert(tail.end(), {"--devices", slot});
    else if (!devices.empty() && devices != "all")
      tail.insert(tail.end(), {"--devices", devices});
    spdlog::info("campaign: starting {}{}", task.name, slot.empty() ? "" : " on device " + slot);
    const DetachedStart started = start_detached(child_args(tail));
    if (!started.announced) {
      end_task(index, CampaignTaskState::failed,
               "evoteam optimize exited with code " + std::to_string(started.exit_code) +
                   " before its run existed (the campaign's daemon.log has its message)");
      return;
    }
    task.state = CampaignTaskState::running;
    task.reason.clear();
    task.budget = *share;
    task.device = slot;
    task.run_dir = std::filesystem::path(*started.announced).lexically_relative(m_dir).string();
    if (task.run_dir.empty() || task.run_dir.rfind("..", 0) == 0) task.run_dir = *started.announced;
    m_children[index] = started.pid;
    m_cycles_seen[index] = 0;
    save();
  }

  // A CUDA task where no GPU can time it: its starting kernel must still pass the static and build stages.
  void check_build(std::size_t index) {
    CampaignTask& task = m_campaign.tasks[index];
    Command command;
    command.argv = {m_self.string()};
    for (const std::string& arg :
         child_args({"eval", task.task_dir.string(), "--stages", "static,build", "--json", "--no-cache"}))
      command.argv.push_back(arg);
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
      const std::string text(*entry);
      if (const std::size_t eq = text.find('='); eq != std::string::npos)
        command.env[text.substr(0, eq)] = text.substr(eq + 1);
    }
    command.timeout = k_build_check_timeout;
    command.output_cap = 0;
    spdlog::info("campaign: {} is a CUDA task and no GPU is here: checking that its starting kernel builds", task.name);
    const ProcessResult result = system_runner().run(command);
    if (result.interrupted) return;  // the campaign is stopping: the task stays pending for a resume
    if (result.ok()) {
      end_task(index, CampaignTaskState::built_not_timed,
               "no GPU on this machine: the starting kernel passed the static and build stages; nothing was timed");
      return;
    }
    std::string why = result.describe();
    try {
      const nlohmann::json verdict = nlohmann::json::parse(result.out.text);
      why = verdict.value("verdict", std::string("?")) + ": " + first_line(verdict.value("reason", std::string()));
    } catch (const nlohmann::json::exception&) {
      if (!trim(result.err.text).empty()) why += ": " + first_line(trim(result.err.text));
    }
    end_task(index, CampaignTaskState::failed, "the starting kernel did not pass static and build: " + why);
  }

  void end_task(std::size_t index, CampaignTaskState state, const std::string& reason) {
    CampaignTask& task = m_campaign.tasks[index];
    task.state = state;
    task.reason = reason;
    spdlog::info("campaign: {} {}{}", task.name, to_string(state), reason.empty() ? "" : " (" + reason + ")");
    save();
  }

  bool child_alive(std::size_t index) {
    const auto found = m_children.find(index);
    if (found == m_children.end()) return false;
    int status = 0;
    const pid_t reaped = ::waitpid(found->second, &status, WNOHANG);
    if (reaped == 0) return true;
    m_children.erase(found);  // exited (and reaped), or not ours to wait for
    return false;
  }

  void watch(std::size_t index) {
    const CampaignTask& task = m_campaign.tasks[index];
    const std::filesystem::path run = m_dir / task.run_dir;
    const bool ours_alive = child_alive(index);
    if (ours_alive || lock_holder(run)) {
      const int cycles = summary_cycles(run);
      if (cycles != m_cycles_seen[index]) {
        m_cycles_seen[index] = cycles;
        if (m_hooks.on_progress) m_hooks.on_progress(m_dir);  // a cycle ended
      }
      return;
    }
    const nlohmann::json run_json = read_run_json(run);
    if (!recorded_exit_code(run_json)) {
      resume_run(index);  // its daemon died without recording its end
      return;
    }
    record_end(index);
  }

  void resume_run(std::size_t index) {
    CampaignTask& task = m_campaign.tasks[index];
    const std::filesystem::path run = m_dir / task.run_dir;
    if (++m_resumes[index] > k_max_resumes_per_session) {
      end_task(index, CampaignTaskState::failed, "its run's daemon died again after being resumed");
      return;
    }
    spdlog::info("campaign: resuming the run of {} ({})", task.name, task.run_dir);
    m_children[index] = spawn_in_session(m_self, child_args({"resume", run.string()}), run / k_campaign_daemon_log);
    task.state = CampaignTaskState::running;
    save();
  }

  void record_end(std::size_t index) {
    CampaignTask& task = m_campaign.tasks[index];
    const std::filesystem::path run = m_dir / task.run_dir;
    const nlohmann::json run_json = read_run_json(run);
    task.exit_code = recorded_exit_code(run_json);
    task.spent = spent_of(run);
    const std::string stop_reason = run_json.contains("stop_reason") && run_json["stop_reason"].is_string()
                                        ? run_json["stop_reason"].get<std::string>()
                                        : "";
    switch (parse_run_status(run_json.value("status", "")).value_or(RunStatus::failed)) {
      case RunStatus::finished: end_task(index, CampaignTaskState::finished, ""); break;
      case RunStatus::stopped: end_task(index, CampaignTaskState::stopped, stop_reason); break;
      case RunStatus::running:
      case RunStatus::failed: end_task(index, CampaignTaskState::failed, stop_reason); break;
    }
  }

  // `evoteam stop` of the campaign: every live run is asked to stop at its next safe point, then recorded.
  CampaignOutcome stop_all() {
    spdlog::info("campaign: interrupted; stopping its live runs");
    for (std::size_t i = 0; i < m_campaign.tasks.size(); ++i) {
      const CampaignTask& task = m_campaign.tasks[i];
      if (task.state != CampaignTaskState::running) continue;
      if (const std::optional<int> holder = lock_holder(m_dir / task.run_dir); holder && *holder > 0)
        ::kill(*holder, SIGTERM);
      if (const auto child = m_children.find(i); child != m_children.end()) ::kill(child->second, SIGTERM);
    }
    for (std::size_t i = 0; i < m_campaign.tasks.size(); ++i) {
      if (m_campaign.tasks[i].state != CampaignTaskState::running) continue;
      const std::filesystem::path run = m_dir / m_campaign.tasks[i].run_dir;
      while (child_alive(i) || lock_holder(run)) std::this_thread::sleep_for(k_campaign_poll);
      if (recorded_exit_code(read_run_json(run)))
        record_end(i);
      else
        end_task(i, CampaignTaskState::stopped, "its run ended without recording its end");
    }
    return finish(true);
  }

  CampaignOutcome finish(bool was_interrupted) {
    const CampaignEnd end = campaign_end(m_campaign, was_interrupted);
    m_campaign.status = end.status;
    m_campaign.exit_code = end.exit_code;
    save();
    return {m_dir, m_campaign};
  }

  const Config& m_config;
  std::filesystem::path m_dir;
  Campaign m_campaign;
  const CampaignHooks& m_hooks;
  std::filesystem::path m_self;
  std::vector<std::string> m_slots;
  bool m_can_time_cuda = false;             // a GPU here, or a cluster that brings its own
  std::vector<bool> m_cuda;                 // by task: a CUDA task (as far as its task.json loads)
  std::map<std::size_t, pid_t> m_children;  // runs this daemon started, by task
  std::map<std::size_t, int> m_cycles_seen;
  std::map<std::size_t, int> m_resumes;
};

std::filesystem::path claim_campaign_dir(const CampaignOptions& options, std::string& id) {
  if (!options.out_dir.empty()) {
    if (is_campaign_dir(options.out_dir))
      throw InvalidInput(options.out_dir.string() + " already holds a campaign; `evoteam resume " +
                         options.out_dir.string() + "` continues it");
    std::error_code error;
    if (std::filesystem::exists(options.out_dir, error) && !std::filesystem::is_empty(options.out_dir, error))
      throw InvalidInput("--out " + options.out_dir.string() + " exists and is not empty");
    evoteam::create_directories(options.out_dir);
    return options.out_dir;
  }
  const std::filesystem::path parent = options.runs_dir / k_campaigns_folder;
  evoteam::create_directories(parent);
  for (;;) {
    const std::filesystem::path dir = parent / id;
    std::error_code error;
    if (std::filesystem::create_directory(dir, error)) return dir;  // mkdir is the atomic claim of the id
    if (error) throw IoError("cannot create campaign directory " + dir.string() + ": " + error.message());
    id = campaign_id();
  }
}

}  // namespace

nlohmann::json CampaignOutcome::to_json() const {
  nlohmann::json value = campaign.to_json();
  value["dir"] = dir.string();
  return value;
}

CampaignOutcome run_campaign(const Config& config, const CampaignOptions& options, const CampaignHooks& hooks) {
  Campaign campaign;
  campaign.suite = options.suite;
  campaign.budgets = options.budgets;
  campaign.settings = options.settings;
  campaign.created = utc_iso_timestamp();
  for (const SuiteEntry& entry : resolve_suite(options.suite)) {
    CampaignTask task;
    task.task_dir = entry.task_dir;
    task.name = entry.task_dir.filename().string();
    task.op_family = op_family_of(entry.task_dir, task.name);
    task.weight = entry.weight;
    campaign.tasks.push_back(task);
  }
  campaign.id = campaign_id();
  const std::filesystem::path dir = claim_campaign_dir(options, campaign.id);
  RunLock lock(dir, k_campaign_lock_name);
  evoteam::create_directories(dir / k_campaign_runs_folder);
  write_campaign(dir, campaign);
  if (hooks.on_created) hooks.on_created(dir);
  spdlog::info("campaign {}: {} task(s) of {}", campaign.id, campaign.tasks.size(), options.suite);
  CampaignRunner runner(config, dir, campaign, hooks);
  runner.save();
  return runner.loop();
}

CampaignOutcome resume_campaign(const Config& config, const std::filesystem::path& campaign_dir,
                                const CampaignHooks& hooks) {
  RunLock lock(campaign_dir, k_campaign_lock_name);
  Campaign campaign = read_campaign(campaign_dir);
  campaign.status = RunStatus::running;
  campaign.exit_code.reset();
  write_campaign(campaign_dir, campaign);
  if (hooks.on_created) hooks.on_created(campaign_dir);
  spdlog::info("campaign {}: resuming", campaign.id);
  CampaignRunner runner(config, campaign_dir, campaign, hooks);
  runner.adopt_runs();
  return runner.loop();
}

}  // namespace evoteam
