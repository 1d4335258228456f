#pragma once
// The per-task glue compiled into the harness: the only code that knows the task's entry signature and its
// hooks (contract: kernels/common/harness_abi.h). Tensors are passed in task order (inputs, then outputs),
// axes in task.axes order.
#include <string>

#include <evoteam/task/c_type.hpp>
#include <evoteam/task/task.hpp>

namespace evoteam::eval {

std::string glue_source(const Task& task);
// The entry point's C declaration, for READMEs and error messages.
std::string entry_declaration(const Task& task);

}  // namespace evoteam::eval
