#pragma once
// The C type an implementation sees for a tensor element of each dtype ("float", "std::int64_t", "__half",
// ...): what generated code — the harness glue, an imported task's stubs — writes in an entry signature.
#include <string>

#include <evoteam/task/task.hpp>

namespace evoteam {

std::string c_type(DType dtype);

}  // namespace evoteam
