#include "supervisor/start_from.hpp"

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>

namespace evoteam {

namespace {

std::string describe_start(const std::string& run_id, const std::string& candidate, std::optional<double> speedup) {
  return "the best of run " + run_id + " (" + candidate + (speedup ? ", " + fixed(*speedup, 2) + "x" : "") +
         ") at its params";
}

}  // namespace

EarlierBest read_earlier_best(const std::filesystem::path& run_dir, const Task& task) {
  const nlohmann::json run_json = read_run_json(run_dir);
  const std::string id = run_json.value("id", run_dir.filename().string());
  const std::string earlier_task = run_json.value("task", "");
  // Param names and kernel files mean something only within their task: another task's kernel is no start.
  if (earlier_task != task.name)
    throw InvalidInput("--from " + run_dir.string() + ": run " + id + " optimised task '" + earlier_task + "', not '" +
                       task.name + "'; --from takes an earlier run of the same task");
  const nlohmann::json summary = run_json.value("summary", nlohmann::json::object());
  const std::string candidate = summary.is_object() ? summary.value("best_candidate", "") : "";
  if (candidate.empty())
    throw InvalidInput("--from " + run_dir.string() + ": run " + id + " has no best candidate to start from");
  const std::filesystem::path dir = run_dir / "candidates" / candidate;
  for (const std::string& file : task.kernel_files)
    if (!std::filesystem::is_regular_file(dir / "src" / file))
      throw InvalidInput("--from " + run_dir.string() + ": the best candidate " + candidate + " has no " +
                         (dir / "src" / file).string());
  EarlierBest best{run_dir, id, candidate, std::nullopt, {}};
  const nlohmann::json params = read_json_file(dir / "params.json");
  if (!params.is_object()) throw InvalidInput((dir / "params.json").string() + ": must be a JSON object");
  for (const auto& [name, value] : params.items())
    best.params[name] = value.is_string() ? value.get<std::string>() : value.dump();
  if (std::optional<std::string> why = param_error(task, best.params))
    throw InvalidInput("--from " + run_dir.string() + ": the params of " + candidate + " do not fit the task: " + *why);
  if (summary.contains("best_speedup") && summary["best_speedup"].is_number())
    best.speedup = summary["best_speedup"].get<double>();
  return best;
}

void import_start(const std::filesystem::path& start, const EarlierBest& best) {
  copy_tree(best.run_dir / "candidates" / best.candidate / "src", start / "src");
  write_json_atomic(start / "params.json", best.params);
  nlohmann::json from = {{"run", best.run_id},
                         {"run_dir", std::filesystem::absolute(best.run_dir).string()},
                         {"candidate", best.candidate},
                         {"speedup", nullptr}};
  if (best.speedup) from["speedup"] = *best.speedup;
  // Written last: a start/ without from.json was never finished and a resume would notice (imported_start).
  write_json_atomic(start / "from.json", from);
}

std::optional<StartingPoint> imported_start(const RunDir& run) {
  const std::filesystem::path start = run.start_dir();
  if (!std::filesystem::exists(start)) return std::nullopt;
  if (!std::filesystem::is_regular_file(start / "from.json"))
    throw InvalidInput(start.string() + " holds no from.json: the copy of the earlier run's best was cut short");
  const nlohmann::json from = read_json_file(start / "from.json");
  StartingPoint point;
  point.sources_dir = start / "src";
  const nlohmann::json params = read_json_file(start / "params.json");  // items() must not outlive it
  for (const auto& [name, value] : params.items())
    point.params[name] = value.is_string() ? value.get<std::string>() : value.dump();
  const std::optional<double> speedup = from.contains("speedup") && from["speedup"].is_number()
                                            ? std::optional<double>(from["speedup"].get<double>())
                                            : std::nullopt;
  point.hypothesis = describe_start(from.value("run", "?"), from.value("candidate", "?"), speedup);
  return point;
}

}  // namespace evoteam
