#pragma once
// The task's own static constraints over one CUDA build: the candidate's sources, its host objects' undefined
// symbols, and per arch its PTX and SASS. A constraint scoped to archs judges only those archs' code. A required
// construct marked once_adopted is never a rejection here: the verdict lists the ones the build meets, and the
// team's lab holds a team to them once its best has adopted them. Pure functions over text: tests feed them real
// nvcc output without a GPU.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <evoteam/task/task.hpp>

#include "eval/host/static_check.hpp"

namespace evoteam::eval::cuda {

// What one build produced, as text.
struct CudaBuildTexts {
  std::map<std::string, std::string> sources;  // file name -> text
  std::vector<std::string> undefined;          // undefined symbols of the host objects
  std::map<std::string, std::string> ptx;      // arch -> the PTX of every object
  std::map<std::string, std::string> sass;     // arch -> cuobjdump -sass text; empty when cuobjdump is missing
};

struct ConstraintVerdict {
  std::optional<StaticFinding> violation;  // the first hard constraint the build breaks
  std::vector<std::string> adopted;        // names of the once-adopted constraints the build meets, in task order
  std::vector<std::string> warnings;       // constraints that could not be judged (no SASS without cuobjdump)
};

ConstraintVerdict judge_task_constraints(const Task& task, const CudaBuildTexts& build);

}  // namespace evoteam::eval::cuda
