// `ranks_axis`: which var axis of a multi-GPU task is the group size (one harness process per rank).
#include <evoteam/task/task.hpp>

#include "task/task_reader.hpp"

namespace evoteam::task_detail {

std::string parse_ranks_axis(const FieldReader& reader, const nlohmann::json* value, const Task& task) {
  if (value == nullptr) {
    if (task.min_devices > 1)
      reader.fail("ranks_axis", "a task with min_devices > 1 must name the var axis that gives its group size");
    return "";
  }
  const std::string name = reader.string_of(*value, "ranks_axis");
  if (task.min_devices < 2) reader.fail("ranks_axis", "only tasks with min_devices > 1 run as a group of ranks");
  const Axis* axis = task.find_axis(name);
  if (axis == nullptr) reader.fail("ranks_axis", "\"" + name + "\" is not an axis");
  if (axis->is_const)
    reader.fail("ranks_axis", "\"" + name + "\" must be a var axis (workloads choose the group size)");
  for (const Workload& workload : task.workloads) {
    const std::int64_t ranks = workload.axes.at(name);
    if (ranks < task.min_devices || ranks > 64)
      reader.fail("ranks_axis", "workload \"" + workload.name + "\" has " + name + " = " + std::to_string(ranks) +
                                    "; a group needs between min_devices (" + std::to_string(task.min_devices) +
                                    ") and 64 ranks");
  }
  return name;
}

}  // namespace evoteam::task_detail
