// RMSNorm and fused add-RMSNorm (bf16 rows, eps fixed in the reference): one block per row, fp32 sums in the
// starting kernel, double in the references; FlashInfer's norm.cuh is the vendor baseline.
#include <regex>

#include <evoteam/core/error.hpp>

#include "trace/trace_families.hpp"

namespace evoteam::trace_detail {
namespace {

// The row's value x (hidden_states, plus residual when fused) as each source spells it.
const char* const k_rmsnorm_kernel =
    R"(// Starting kernel for @NAME@ (imported): one block of BLOCK_THREADS threads per row. Pass 1 strides over the
// row accumulating squares in fp32, reduced by warp shuffles and shared memory; pass 2 reads the row again and
// writes x * rsqrt(mean + eps) * weight, rounded to bf16 once. The straightforward translation of reference.py.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#ifndef BLOCK_THREADS
#define BLOCK_THREADS 256
#endif

namespace {

constexpr int k_threads = BLOCK_THREADS;
constexpr int k_warps = k_threads / 32;
constexpr std::int64_t k_hidden = @HIDDEN@;
constexpr float k_eps = @EPS@f;

static_assert(k_threads % 32 == 0 && k_threads >= 32 && k_threads <= 1024, "BLOCK_THREADS must be whole warps");

__device__ float row_value(const __nv_bfloat16* x, const __nv_bfloat16* r, std::int64_t i) {
  @UNUSED_R@return @VALUE_F@;
}

__device__ float warp_sum(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

__global__ void __launch_bounds__(k_threads)
    rmsnorm_rows(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ r,
                 const __nv_bfloat16* __restrict__ weight, __nv_bfloat16* __restrict__ y) {
  __shared__ float warp_sums[k_warps];
  __shared__ float row_sum;
  const std::int64_t offset = static_cast<std::int64_t>(blockIdx.x) * k_hidden;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  float sum = 0.0f;
  for (std::int64_t i = threadIdx.x; i < k_hidden; i += k_threads) {
    const float value = row_value(x, r, offset + i);
    sum = fmaf(value, value, sum);
  }
  sum = warp_sum(sum);
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    float total = lane < k_warps ? warp_sums[lane] : 0.0f;
    total = warp_sum(total);
    if (lane == 0) row_sum = total;
  }
  __syncthreads();
  const float inv_rms = rsqrtf(row_sum / static_cast<float>(k_hidden) + k_eps);
  for (std::int64_t i = threadIdx.x; i < k_hidden; i += k_threads)
    y[offset + i] = __float2bfloat16_rn(row_value(x, r, offset + i) * inv_rms * __bfloat162float(weight[i]));
}

}  // namespace

extern "C" cudaError_t @NAME@(@PARAMS@, cudaStream_t stream) {
  if (batch_size <= 0) return cudaSuccess;
  if (batch_size > 0x7fffffff) return cudaErrorInvalidValue;
  rmsnorm_rows<<<static_cast<unsigned>(batch_size), k_threads, 0, stream>>>(hidden_states, @RESIDUAL@, weight,
                                                                           output);
  return cudaGetLastError();
}
)";

const char* const k_rmsnorm_reference =
    R"(// Trusted reference for @NAME@ (imported): one block per row, the sum of squares in double (strided slices, then
// a tree in shared memory), the reciprocal RMS in double, each output rounded from double to bf16 once.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr int k_threads = 256;
constexpr std::int64_t k_hidden = @HIDDEN@;
constexpr double k_eps = @EPS@;

__device__ double row_value(const __nv_bfloat16* x, const __nv_bfloat16* r, std::int64_t i) {
  @UNUSED_R@return @VALUE_D@;
}

__global__ void rmsnorm_reference(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ r,
                                  const __nv_bfloat16* __restrict__ weight, __nv_bfloat16* __restrict__ y) {
  __shared__ double partial[k_threads];
  const std::int64_t offset = static_cast<std::int64_t>(blockIdx.x) * k_hidden;
  const int tid = static_cast<int>(threadIdx.x);
  double sum = 0.0;
  for (std::int64_t i = tid; i < k_hidden; i += k_threads) {
    const double value = row_value(x, r, offset + i);
    sum += value * value;
  }
  partial[tid] = sum;
  __syncthreads();
  for (int stride = k_threads / 2; stride > 0; stride /= 2) {
    if (tid < stride) partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  const double inv_rms = 1.0 / sqrt(partial[0] / static_cast<double>(k_hidden) + k_eps);
  for (std::int64_t i = tid; i < k_hidden; i += k_threads)
    y[offset + i] = __double2bfloat16(row_value(x, r, offset + i) * inv_rms *
                                      static_cast<double>(__bfloat162float(weight[i])));
}

}  // namespace

extern "C" cudaError_t @NAME@(@PARAMS@, cudaStream_t stream) {
  if (batch_size <= 0) return cudaSuccess;
  if (batch_size > 0x7fffffff) return cudaErrorInvalidValue;
  rmsnorm_reference<<<static_cast<unsigned>(batch_size), k_threads, 0, stream>>>(hidden_states, @RESIDUAL@,
                                                                                weight, output);
  return cudaGetLastError();
}
)";

const char* const k_rmsnorm_cpu_hpp = R"(#pragma once
// Double-precision CPU reference of @NAME@ (imported): for each row x of @ROW@ [batch_size, @HIDDEN@],
// output = x * (1 / sqrt(mean(x^2) + @EPS@)) * weight. Inputs are the bf16 values widened to float.
#include <cstdint>
#include <vector>

namespace evoteam_kernels::@NAME@ {

inline constexpr std::int64_t k_hidden_size = @HIDDEN@;
inline constexpr double k_eps = @EPS@;

// Returns batch_size * k_hidden_size values; `residual` is ignored (may be null) when the task has none.
std::vector<double> run(const float* hidden_states, const float* residual, const float* weight,
                        std::int64_t batch_size);

}  // namespace evoteam_kernels::@NAME@
)";

const char* const k_rmsnorm_cpu_cpp = R"(// Straight from reference.py, one row at a time, in double.
#include "cpu_reference.hpp"

#include <cmath>
#include <cstddef>
#include <stdexcept>

namespace evoteam_kernels::@NAME@ {

std::vector<double> run(const float* hidden_states, const float* residual, const float* weight,
                        std::int64_t batch_size) {
  if (batch_size < 0) throw std::invalid_argument("@NAME@: negative batch_size");
  std::vector<double> output(static_cast<std::size_t>(batch_size * k_hidden_size));
  std::vector<double> row(static_cast<std::size_t>(k_hidden_size));
  for (std::int64_t b = 0; b < batch_size; ++b) {
    double sum_squares = 0.0;
    for (std::int64_t i = 0; i < k_hidden_size; ++i) {
      const std::int64_t at = b * k_hidden_size + i;
      double value = hidden_states[at];
      if (@FUSED@) value += residual[at];
      row[static_cast<std::size_t>(i)] = value;
      sum_squares += value * value;
    }
    const double inv_rms = 1.0 / std::sqrt(sum_squares / static_cast<double>(k_hidden_size) + k_eps);
    for (std::int64_t i = 0; i < k_hidden_size; ++i)
      output[static_cast<std::size_t>(b * k_hidden_size + i)] =
          (row[static_cast<std::size_t>(i)] * inv_rms) * static_cast<double>(weight[i]);
  }
  return output;
}

}  // namespace evoteam_kernels::@NAME@
)";

const char* const k_rmsnorm_baseline =
    R"(// Vendor comparison for @NAME@ (imported): FlashInfer's @CALL@ from flashinfer/norm.cuh of the pinned
// flashinfer-python wheel, called through the same harness as candidates. Trusted code, not a candidate.
@CAVEAT@
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include <flashinfer/norm.cuh>

extern "C" cudaError_t @NAME@(@PARAMS@, cudaStream_t stream) {
  if (batch_size <= 0) return cudaSuccess;
  constexpr std::uint32_t k_hidden = @HIDDEN@;
  const auto rows = static_cast<std::uint32_t>(batch_size);
@BODY@
}
)";

const char* const k_fused_baseline_body =
    R"(  // In place: output receives hidden_states and becomes the normalised row; the residual sum goes to a buffer of
  // this file's own, grown as needed (inputs stay untouched).
  static __nv_bfloat16* residual_copy = nullptr;
  static std::int64_t residual_rows = 0;
  cudaError_t status = cudaSuccess;
  if (batch_size > residual_rows) {
    cudaFree(residual_copy);
    residual_copy = nullptr;
    residual_rows = 0;
    status = cudaMalloc(&residual_copy, static_cast<std::size_t>(batch_size) * k_hidden * sizeof(__nv_bfloat16));
    if (status != cudaSuccess) return status;
    residual_rows = batch_size;
  }
  const std::size_t bytes = static_cast<std::size_t>(batch_size) * k_hidden * sizeof(__nv_bfloat16);
  status = cudaMemcpyAsync(output, hidden_states, bytes, cudaMemcpyDeviceToDevice, stream);
  if (status == cudaSuccess)
    status = cudaMemcpyAsync(residual_copy, residual, bytes, cudaMemcpyDeviceToDevice, stream);
  if (status != cudaSuccess) return status;
  return flashinfer::norm::FusedAddRMSNorm<__nv_bfloat16>(output, residual_copy,
                                                          const_cast<__nv_bfloat16*>(weight), rows, k_hidden,
                                                          k_hidden, k_hidden, @EPS@f, false, stream);)";

const char* const k_plain_baseline_body =
    R"(  return flashinfer::norm::RMSNorm<__nv_bfloat16>(const_cast<__nv_bfloat16*>(hidden_states),
                                                  const_cast<__nv_bfloat16*>(weight), output, rows, k_hidden,
                                                  k_hidden, k_hidden, @EPS@f, false, stream);)";

}  // namespace

FamilySources generate_rmsnorm(const nlohmann::ordered_json& definition, const nlohmann::ordered_json& task,
                               bool fused_add) {
  FamilySources out;
  out.family = fused_add ? "fused_add_rmsnorm" : "rmsnorm";
  // A reference that is no string was reported by the translation; here it is only no EPS.
  const std::string reference = definition.contains("reference") && definition["reference"].is_string()
                                    ? definition["reference"].get<std::string>()
                                    : std::string();
  std::smatch match;
  // The definitions fix eps in the reference's body ("EPS = 1e-6"); without it the generator cannot be sure.
  if (!std::regex_search(reference, match, std::regex(R"(EPS\s*=\s*([0-9.eE+-]+))"))) {
    out.notes.push_back("no `EPS = ...` in reference.py: no starting kernel generated");
    return out;
  }
  const std::string eps = match[1];
  const std::int64_t hidden = const_axis(task, "hidden_size");
  const std::string name = task["name"].get<std::string>();
  const std::map<std::string, std::string> values = {
      {"@NAME@", name},
      {"@HIDDEN@", std::to_string(hidden)},
      {"@EPS@", eps},
      {"@PARAMS@", entry_parameters(task)},
      {"@RESIDUAL@", fused_add ? "residual" : "nullptr"},
      {"@ROW@", fused_add ? "hidden_states + residual" : "hidden_states"},
      {"@FUSED@", fused_add ? "true" : "false"},
      {"@VALUE_F@", fused_add ? "__bfloat162float(x[i]) + __bfloat162float(r[i])" : "__bfloat162float(x[i])"},
      {"@VALUE_D@", fused_add ? "static_cast<double>(__bfloat162float(x[i])) + __bfloat162float(r[i])"
                              : "static_cast<double>(__bfloat162float(x[i]))"},
      {"@UNUSED_R@", fused_add ? "" : "static_cast<void>(r);\n  "},
      {"@CALL@", fused_add ? "FusedAddRMSNorm" : "RMSNorm"},
      {"@CAVEAT@", fused_add
                       ? "// FusedAddRMSNorm works in place, so each call first copies hidden_states and residual "
                         "(two extra\n// passes over the rows, inside the timed call): its time is an upper bound "
                         "of FlashInfer's."
                       : "// Called as flashinfer.norm.rmsnorm calls it: contiguous rows, PDL off."}};
  out.files["kernel.cu"] = fill(k_rmsnorm_kernel, values);
  out.files["reference.cu"] = fill(k_rmsnorm_reference, values);
  out.files["cpu_reference.hpp"] = fill(k_rmsnorm_cpu_hpp, values);
  out.files["cpu_reference.cpp"] = fill(k_rmsnorm_cpu_cpp, values);
  std::map<std::string, std::string> with_body = values;
  with_body["@BODY@"] = fill(fused_add ? k_fused_baseline_body : k_plain_baseline_body, values);
  out.files["baseline_flashinfer.cu"] = fill(k_rmsnorm_baseline, with_body);
  out.generated = true;
  out.cpu_reference = "yes";
  out.vendor = "flashinfer";
  // A row of hidden_size elements: 4 flops per element (square-accumulate, scale, weight), 5 with the add.
  out.task_fields["tolerances"] = {{"output", {{"rtol", 1e-2}, {"atol", 0}, {"atol_rms", 1e-3}, {"normwise", 4e-3}}}};
  out.task_fields["flops"] = (fused_add ? "5" : "4") + std::string(" * batch_size * hidden_size");
  out.task_fields["bytes"] = fused_add ? "2 * (3 * batch_size * hidden_size + hidden_size)"
                                       : "2 * (2 * batch_size * hidden_size + hidden_size)";
  out.task_fields["params"] =
      nlohmann::ordered_json::array({{{"name", "BLOCK_THREADS"},
                                      {"values", {32, 64, 128, 256, 512, 1024}},
                                      {"default", hidden >= 1024 ? 256 : 128},
                                      {"description", "threads per block; one block normalises one row"}}});
  out.task_fields["vendor_baseline"] = {{"kind", "flashinfer"}, {"file", "baseline_flashinfer.cu"}};
  out.task_fields["deterministic"] = true;
  out.cpu_limit = out.task_fields["flops"].get<std::string>();
  // Ours, for definitions published without workloads: one token to a large prefill.
  for (int rows : {1, 16, 128, 1024, 8192})
    out.our_workloads.push_back(
        {{"name", "b" + std::to_string(rows)}, {"origin", "ours"}, {"axes", {{"batch_size", rows}}}});
  out.notes.push_back("eps = " + eps + " as reference.py fixes it (no scalar: the entry point has none)");
  return out;
}

}  // namespace evoteam::trace_detail
