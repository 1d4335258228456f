// Workloads: inline in task.json or one JSON object per line in a workloads file (FlashInfer-Trace style).
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/task/task.hpp>

#include <optional>
#include <set>
#include <sstream>

#include "task/task_reader.hpp"

namespace evoteam::task_detail {
namespace {

Workload parse_workload(const FieldReader& reader, const nlohmann::json& value, const std::string& field,
                        const Task& task, std::size_t index) {
  reader.object_of(value, field);
  reader.only_keys(value, {"name", "axes", "description", "origin", "source"}, field);
  Workload workload;
  workload.name =
      value.contains("name") ? reader.string_of(value["name"], field + ".name") : "w" + std::to_string(index);
  if (value.contains("origin")) {
    const std::string origin = reader.string_of(value["origin"], field + ".origin");
    std::optional<WorkloadOrigin> parsed = parse_workload_origin(origin);
    if (!parsed) reader.fail(field + ".origin", "\"" + origin + "\" is not one of \"published\", \"ours\"");
    workload.origin = *parsed;
  }
  if (value.contains("source")) {
    workload.source = reader.string_of(value["source"], field + ".source");
    if (workload.source.empty()) reader.fail(field + ".source", "must not be empty");
  }
  if (workload.origin == WorkloadOrigin::published && workload.source.empty())
    reader.fail(field + ".source",
                "a published workload names where it was published (e.g. the trace's workload uuid)");
  const nlohmann::json& axes = reader.object_of(reader.require(value, "axes", field), field + ".axes");
  for (const auto& [name, extent] : axes.items()) {
    const Axis* axis = task.find_axis(name);
    if (axis == nullptr) reader.fail(field + ".axes." + name, "unknown axis");
    if (axis->is_const) reader.fail(field + ".axes." + name, "const axis; its value comes from the task");
    std::int64_t number = reader.integer_of(extent, field + ".axes." + name);
    if (number < 1) reader.fail(field + ".axes." + name, "must be >= 1");
    workload.axes[name] = number;
  }
  for (const Axis& axis : task.axes)
    if (!axis.is_const && !workload.axes.count(axis.name))
      reader.fail(field + ".axes", "missing var axis \"" + axis.name + "\"");
  std::map<std::string, std::int64_t> all = workload_axes(task, workload);
  try {
    if (std::optional<std::string> violated = violated_constraint(task, all))
      reader.fail(field, "violates constraint \"" + *violated + "\"");
    for (const TensorSpec* tensor : task.tensors()) tensor_elements(*tensor, all);
    if (workload_flops(task, all) < 0 || workload_bytes(task, all) < 0) reader.fail(field, "negative flops or bytes");
  } catch (const InvalidInput& error) {
    if (std::string(error.what()).rfind(reader.file(), 0) == 0) throw;
    reader.fail(field, error.what());
  }
  return workload;
}

}  // namespace

std::vector<Workload> parse_workloads(const FieldReader& reader, const nlohmann::json& workloads, const Task& task,
                                      std::string* workloads_file_text) {
  std::vector<Workload> result;
  if (workloads.is_string()) {
    const std::string name = workloads.get<std::string>();
    if (!is_safe_relative_path(name))
      reader.fail("workloads", "\"" + name + "\" must be a relative path inside the task directory");
    const std::filesystem::path path = task.dir / name;
    if (!std::filesystem::is_regular_file(path)) reader.fail("workloads", "no such file: " + path.string());
    *workloads_file_text = read_file(path);
    FieldReader lines_reader(path.string());
    std::istringstream lines(*workloads_file_text);
    std::string line;
    std::size_t line_number = 0;
    while (std::getline(lines, line)) {
      ++line_number;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      nlohmann::json value = nlohmann::json::parse(line, nullptr, false);
      const std::string field = "line " + std::to_string(line_number);
      if (value.is_discarded()) lines_reader.fail(field, "not valid JSON");
      result.push_back(parse_workload(lines_reader, value, field, task, result.size()));
    }
  } else {
    const nlohmann::json& items = reader.array_of(workloads, "workloads");
    for (std::size_t i = 0; i < items.size(); ++i)
      result.push_back(parse_workload(reader, items[i], "workloads[" + std::to_string(i) + "]", task, i));
  }
  if (result.empty()) reader.fail("workloads", "at least one workload is required");
  std::set<std::string> names;
  for (const Workload& workload : result)
    if (!names.insert(workload.name).second)
      reader.fail("workloads", "two workloads are named \"" + workload.name + "\"");
  return result;
}

}  // namespace evoteam::task_detail

namespace evoteam {

void select_workloads(Task& task, WorkloadSelection selection) {
  if (selection == WorkloadSelection::all) return;
  const WorkloadOrigin wanted =
      selection == WorkloadSelection::published ? WorkloadOrigin::published : WorkloadOrigin::ours;
  std::vector<Workload> kept;
  for (const Workload& workload : task.workloads)
    if (workload.origin == wanted) kept.push_back(workload);
  if (kept.empty())
    throw InvalidInput("task " + task.name + " (" + task.dir.string() + "): --workloads " + to_string(selection) +
                       ": the task has no workload with origin \"" + to_string(wanted) + "\"");
  if (kept.size() == task.workloads.size()) return;
  task.workloads = std::move(kept);
  task.content_hash = sha256_hex(task.content_hash + "\nworkloads " + to_string(selection));
}

}  // namespace evoteam
