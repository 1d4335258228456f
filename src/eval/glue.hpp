#pragma once
// The per-task glue compiled into the harness: the only code that knows the task's entry signature and its
// hooks (contract: kernels/common/harness_abi.h). Tensors are passed in task order (inputs, then outputs),
// axes in task.axes order.
#include <string>

#include <evoteam/task/task.hpp>

namespace evoteam::eval {

std::string glue_source(const Task& task);
// The C type an implementation sees for a tensor element ("float", "std::int64_t", "__half", ...).
std::string c_type(DType dtype);
// The entry point's C declaration, for READMEs and error messages.
std::string entry_declaration(const Task& task);

}  // namespace evoteam::eval
