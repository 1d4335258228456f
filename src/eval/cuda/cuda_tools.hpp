#pragma once
// Where the CUDA tools are: nvcc, cuobjdump, ncu, compute-sanitizer. Optional tools (cuobjdump, ncu) may be
// missing; callers fall back (PTX scan instead of SASS, static profile instead of ncu) and say so.
#include <filesystem>
#include <optional>
#include <string>

namespace evoteam::eval::cuda {

// Looks in $EVOTEAM_<NAME> (upper case, '-' as '_': EVOTEAM_CUOBJDUMP), then $PATH, then $CUDA_HOME/bin and
// /usr/local/cuda/bin. Returns an executable path or nothing.
std::optional<std::filesystem::path> find_cuda_tool(const std::string& name);

}  // namespace evoteam::eval::cuda
