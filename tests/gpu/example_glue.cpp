// Task glue for the CUDA harness's built-in example (y = 2x through the `scale` contract), so the GPU suite can
// link a standalone harness without a task; the evaluator generates the real glue per task.
#include <cuda_runtime.h>

#include <cstdint>

#include "harness_abi.h"

extern "C" {

int evoteam_glue_call(void* entry, void* const* tensors, const int64_t* axes, void* stream) {
  using Scale = cudaError_t (*)(const float*, float*, std::int64_t, cudaStream_t);
  return static_cast<int>(reinterpret_cast<Scale>(entry)(static_cast<const float*>(tensors[0]),
                                                         static_cast<float*>(tensors[1]), axes[0],
                                                         static_cast<cudaStream_t>(stream)));
}
const char* evoteam_glue_entry_name(void) { return "scale"; }
int evoteam_glue_tensor_count(void) { return 2; }
int evoteam_glue_axis_count(void) { return 1; }
const char* const* evoteam_glue_axis_names(void) {
  static const char* const names[] = {"n"};
  return names;
}
int evoteam_glue_hook(const char*, void*, int64_t, const int64_t*, uint64_t) { return -1; }
// No ranks axis: the rank-group functions the harness links against, as the evaluator's glue writes them for a
// single-GPU task.
int evoteam_glue_ranks_axis(void) { return -1; }
void evoteam_glue_set_comm(void*, int32_t) {}
int evoteam_glue_comm_unique_id(void*, int) { return -1; }
int evoteam_glue_comm_init(void**, int, const void*, int) { return -1; }
int evoteam_glue_comm_destroy(void*) { return -1; }
int evoteam_glue_max_over_ranks(void*, double*, int64_t, void*) { return -1; }
const char* evoteam_glue_comm_error(int) { return "the example has no ranks axis"; }
}
