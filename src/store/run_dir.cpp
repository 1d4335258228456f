#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/store/store.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace evoteam {

namespace {

constexpr int k_max_id_suffix = 10000;
constexpr const char* k_subfolders[] = {"task", "candidates", "cycles", "knowledge", "best"};

// Run ids become directory names and appear in shell commands: keep them to a safe character set.
std::string id_safe(const std::string& task_name) {
  std::string out = task_name;
  for (char& c : out) {
    const bool safe =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!safe) c = '_';
  }
  return out;
}

// mkdir is atomic: of two daemons starting the same task in the same second, each gets its own id.
std::pair<std::filesystem::path, std::string> claim_run_directory(const std::filesystem::path& runs_dir,
                                                                  const std::string& base_id) {
  for (int n = 1; n <= k_max_id_suffix; ++n) {
    const std::string id = n == 1 ? base_id : base_id + "-" + std::to_string(n);
    const std::filesystem::path path = runs_dir / id;
    if (::mkdir(path.c_str(), 0755) == 0) return {path, id};
    if (errno != EEXIST) {
      throw IoError("cannot create run directory " + path.string() + ": " + std::strerror(errno));
    }
  }
  throw IoError("cannot create a run directory for " + base_id + " in " + runs_dir.string() +
                ": too many runs with that id");
}

}  // namespace

std::string to_string(RunStatus status) {
  switch (status) {
    case RunStatus::running: return "running";
    case RunStatus::finished: return "finished";
    case RunStatus::stopped: return "stopped";
    case RunStatus::failed: return "failed";
  }
  return "unknown";
}

std::optional<RunStatus> parse_run_status(std::string_view text) {
  for (RunStatus status : {RunStatus::running, RunStatus::finished, RunStatus::stopped, RunStatus::failed})
    if (to_string(status) == text) return status;
  return std::nullopt;
}

RunStatus run_status_from_string(const std::string& text) {
  if (std::optional<RunStatus> status = parse_run_status(text)) return *status;
  throw InvalidInput("unknown run status '" + text + "' (expected running, finished, stopped or failed)");
}

RunDir::RunDir(std::filesystem::path path, std::string id)
    : m_path(std::move(path)), m_id(std::move(id)), m_run_json_mutex(std::make_unique<std::mutex>()) {}

RunDir RunDir::create(const std::filesystem::path& runs_dir, const std::string& task_name,
                      const nlohmann::json& run_info, const Filler& fill) {
  if (task_name.empty() || task_name == "." || task_name == "..") {
    throw InvalidInput("a run needs a task name, got '" + task_name + "'");
  }
  if (!run_info.is_null() && !run_info.is_object()) {
    throw InvalidInput("run info for run.json must be a JSON object, got " + std::string(run_info.type_name()));
  }
  evoteam::create_directories(runs_dir);
  // The run's path is absolute from here on: agents, sandboxes and the MCP binding run from other directories, so a
  // relative runs dir ("runs", the default) would name nothing for them.
  auto [path, id] =
      claim_run_directory(std::filesystem::absolute(runs_dir), utc_compact_timestamp() + "-" + id_safe(task_name));

  try {
    RunDir dir(path, id);
    dir.m_lock = std::make_unique<RunLock>(path);
    for (const char* name : k_subfolders) evoteam::create_directories(path / name);
    dir.m_journal = std::make_unique<Journal>(path / k_journal_name);
    if (fill) fill(path);

    nlohmann::json info = run_info.is_object() ? run_info : nlohmann::json::object();
    const std::string now = utc_iso_timestamp();
    info["id"] = id;
    info["task"] = task_name;
    info["status"] = to_string(RunStatus::running);
    info["stop_reason"] = nullptr;
    info["pid"] = static_cast<int>(::getpid());
    info["started"] = now;
    info["updated"] = now;
    // run.json comes last: until it exists the directory is not listed as a run.
    write_json_atomic(path / k_run_json_name, info);
    fsync_directory(path);
    fsync_directory(runs_dir);
    return dir;
  } catch (...) {
    // A half-made run directory (full disk, say) is removed so it does not litter the runs list.
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
    throw;
  }
}

RunDir RunDir::open(const std::filesystem::path& run_dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(run_dir, ec)) {
    throw InvalidInput("run directory " + run_dir.string() + " does not exist");
  }
  if (!std::filesystem::exists(run_dir / k_run_json_name, ec)) {
    throw InvalidInput(run_dir.string() + " is not a run directory (no " + k_run_json_name + ")");
  }
  if (!std::filesystem::exists(run_dir / k_journal_name, ec)) {
    throw InvalidInput("run " + run_dir.string() + " has no " + k_journal_name + "; it cannot be resumed");
  }

  auto lock = std::make_unique<RunLock>(run_dir);
  const nlohmann::json info = evoteam::read_run_json(run_dir);
  const auto id_field = info.find("id");
  const std::filesystem::path normal = run_dir.lexically_normal();
  std::string id = id_field != info.end() && id_field->is_string()
                       ? id_field->get<std::string>()
                       : (normal.has_filename() ? normal : normal.parent_path()).filename().string();
  RunDir dir(std::filesystem::absolute(run_dir), std::move(id));  // as in create: children run elsewhere
  dir.m_lock = std::move(lock);
  dir.m_journal = std::make_unique<Journal>(run_dir / k_journal_name);
  dir.update_run_json({{"pid", static_cast<int>(::getpid())}});
  return dir;
}

nlohmann::json RunDir::read_run_json() const { return evoteam::read_run_json(m_path); }

void RunDir::update_run_json(const nlohmann::json& patch) {
  EVOTEAM_CHECK(patch.is_object(), "a run.json patch must be a JSON object");
  if (const auto status = patch.find("status"); status != patch.end()) {
    EVOTEAM_CHECK(status->is_string(), "run.json status must be a string");
    run_status_from_string(status->get<std::string>());
  }
  std::lock_guard<std::mutex> guard(*m_run_json_mutex);
  nlohmann::json info = evoteam::read_run_json(m_path);
  info.merge_patch(patch);
  // merge_patch deletes keys patched to null; stop_reason is part of the contract even while null.
  if (!info.contains("stop_reason")) info["stop_reason"] = nullptr;
  info["updated"] = utc_iso_timestamp();
  write_json_atomic(m_path / k_run_json_name, info);
}

std::filesystem::path RunDir::task_dir() const { return m_path / "task"; }

std::filesystem::path RunDir::candidate_dir(const std::string& candidate_id) const {
  EVOTEAM_CHECK(!candidate_id.empty() && candidate_id != "." && candidate_id != ".." &&
                    candidate_id.find('/') == std::string::npos,
                "candidate id '" + candidate_id + "' is not a plain name");
  return m_path / "candidates" / candidate_id;
}

std::filesystem::path RunDir::cycle_dir(int cycle) const {
  EVOTEAM_CHECK(cycle >= 0, "cycle numbers are not negative");
  char name[16];
  std::snprintf(name, sizeof name, "%04d", cycle);
  return m_path / "cycles" / name;
}

std::filesystem::path RunDir::knowledge_dir() const { return m_path / "knowledge"; }

std::filesystem::path RunDir::best_dir() const { return m_path / "best"; }

std::filesystem::path RunDir::start_dir() const { return m_path / "start"; }

nlohmann::json read_run_json(const std::filesystem::path& run_dir) {
  const std::filesystem::path path = run_dir / k_run_json_name;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw InvalidInput(run_dir.string() + " is not a run directory (no " + k_run_json_name + ")");
  }
  nlohmann::json info = read_json_file(path);
  if (!info.is_object()) throw InvalidInput(path.string() + " is not a JSON object");
  return info;
}

std::vector<std::filesystem::path> list_runs(const std::filesystem::path& runs_dir) {
  namespace fs = std::filesystem;
  std::vector<fs::path> runs;
  std::error_code ec;
  if (!fs::exists(runs_dir, ec)) return runs;
  fs::directory_iterator it(runs_dir, ec);
  if (ec) throw IoError("cannot read runs directory " + runs_dir.string() + ": " + ec.message());
  for (const fs::directory_iterator end; it != end; it.increment(ec)) {
    if (ec) throw IoError("cannot read runs directory " + runs_dir.string() + ": " + ec.message());
    const std::string name = it->path().filename().string();
    if (name.empty() || name.front() == '.') continue;
    struct stat st {};
    if (::stat((it->path() / k_run_json_name).c_str(), &st) == 0 && S_ISREG(st.st_mode)) runs.push_back(it->path());
  }
  if (ec) throw IoError("cannot read runs directory " + runs_dir.string() + ": " + ec.message());
  // Ids start with a UTC timestamp, so the name order is the time order.
  std::sort(runs.begin(), runs.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename().string() > b.filename().string(); });
  return runs;
}

}  // namespace evoteam
