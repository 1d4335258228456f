// The libtorch stand-in an imported Solution's kernel file starts with (torch_shim.cpp).
#ifndef EVOTEAM_TRACE_TORCH_SHIM_HPP
#define EVOTEAM_TRACE_TORCH_SHIM_HPP

#include <string>

namespace evoteam {

const std::string& torch_shim_text();

}  // namespace evoteam

#endif
