// The contract between the trusted harness and the per-task glue that the evaluator generates
// (<cache>/glue/<task-hash>/glue.cpp). The glue is the only code that knows the task's entry signature: the
// harness hands it the tensor pointers in task order (inputs, then outputs) and the axis values, and the glue
// calls the implementation through its exact C signature. Shared by the host and the CUDA harness.
#ifndef EVOTEAM_HARNESS_ABI_H
#define EVOTEAM_HARNESS_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Calls `entry` (the address of the task's entry point in a loaded implementation). `axes` follow the
// order of evoteam_glue_axis_names(). `stream` is the harness's stream on CUDA and null on the host.
// Returns 0, or the implementation's error code (cudaError_t on CUDA).
int evoteam_glue_call(void* entry, void* const* tensors, const int64_t* axes, void* stream);

// The entry point's symbol name, the number of tensors and axes the glue expects, and the axis names.
const char* evoteam_glue_entry_name(void);
int evoteam_glue_tensor_count(void);
int evoteam_glue_axis_count(void);
const char* const* evoteam_glue_axis_names(void);

// Fills `data` (count elements) with a task hook's structured input. Returns 0, or -1 for an unknown hook.
int evoteam_glue_hook(const char* name, void* data, int64_t count, const int64_t* axes, uint64_t seed);

// Signature of a task hook: extern "C" void evoteam_hook_<name>(void* data, int64_t count,
//     const char* const* axis_names, const int64_t* axis_values, int axis_count, uint64_t seed);
// evoteam_axis_value() looks an axis up by name (returns -1 when there is none).
static inline int64_t evoteam_axis_value(const char* const* names, const int64_t* values, int count, const char* name) {
  for (int i = 0; i < count; ++i) {
    const char* a = names[i];
    const char* b = name;
    while (*a != 0 && *a == *b) {
      ++a;
      ++b;
    }
    if (*a == 0 && *b == 0) return values[i];
  }
  return -1;
}

#ifdef __cplusplus
}
#endif

#endif
