// GEMM C = A @ B.T (fp16 in and out, N and K const): one thread per output element, the dot product over K in
// fp32 (double in the references). Every published gemm definition shares this generator.
#include <evoteam/core/error.hpp>

#include "trace/trace_families.hpp"

namespace evoteam::trace_detail {
namespace {

const char* const k_gemm_kernel =
    R"(// Starting kernel for @NAME@ (imported): C = A @ B.T with A [M, @K@], B [@N@, @K@], C [M, @N@], fp16 in and out.
// One thread per element of C, a BLOCK_N x BLOCK_M block of threads per tile, the dot product over K in fp32 and
// one rounding to fp16: the straightforward translation of reference.py. Left to the team: shared-memory tiles,
// register blocking, vectorised loads, tensor cores (mma, wgmma on sm_90a, tcgen05 on sm_100a), split-K for small M.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#ifndef BLOCK_N
#define BLOCK_N 32
#endif
#ifndef BLOCK_M
#define BLOCK_M 8
#endif

namespace {

constexpr std::int64_t k_n = @N@;
constexpr std::int64_t k_k = @K@;

static_assert(BLOCK_N * BLOCK_M >= 1 && BLOCK_N * BLOCK_M <= 1024, "a block holds at most 1024 threads");

__global__ void __launch_bounds__(BLOCK_N * BLOCK_M)
    gemm_naive(const __half* __restrict__ a, const __half* __restrict__ b, __half* __restrict__ c, std::int64_t m) {
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * BLOCK_N + threadIdx.x;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.y) * BLOCK_M + threadIdx.y;
  if (row >= m || col >= k_n) return;
  const __half* a_row = a + row * k_k;
  const __half* b_row = b + col * k_k;
  float sum = 0.0f;
  for (std::int64_t k = 0; k < k_k; ++k) sum = fmaf(__half2float(a_row[k]), __half2float(b_row[k]), sum);
  c[row * k_n + col] = __float2half_rn(sum);
}

}  // namespace

extern "C" cudaError_t @NAME@(@SIGNATURE@, cudaStream_t stream) {
  if (M <= 0) return cudaSuccess;
  const std::int64_t row_blocks = (M + BLOCK_M - 1) / BLOCK_M;
  if (row_blocks > 65535) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>((k_n + BLOCK_N - 1) / BLOCK_N), static_cast<unsigned>(row_blocks));
  gemm_naive<<<grid, dim3(BLOCK_N, BLOCK_M), 0, stream>>>(A, B, C, M);
  return cudaGetLastError();
}
)";

const char* const k_gemm_reference =
    R"(// Trusted reference for @NAME@ (imported): C = A @ B.T, one thread per element of C, the dot product over K
// accumulated in double and rounded to fp16 once. M rows go over a grid-stride loop, so any M is covered.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr std::int64_t k_n = @N@;
constexpr std::int64_t k_k = @K@;

__global__ void gemm_reference(const __half* __restrict__ a, const __half* __restrict__ b, __half* __restrict__ c,
                               std::int64_t m) {
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (col >= k_n) return;
  for (std::int64_t row = blockIdx.y; row < m; row += gridDim.y) {
    double sum = 0.0;
    for (std::int64_t k = 0; k < k_k; ++k)
      sum += static_cast<double>(__half2float(a[row * k_k + k])) * static_cast<double>(__half2float(b[col * k_k + k]));
    c[row * k_n + col] = __double2half(sum);
  }
}

}  // namespace

extern "C" cudaError_t @NAME@(@SIGNATURE@, cudaStream_t stream) {
  if (M <= 0) return cudaSuccess;
  const unsigned rows = static_cast<unsigned>(M < 65535 ? M : 65535);
  gemm_reference<<<dim3(static_cast<unsigned>((k_n + 127) / 128), rows), 128, 0, stream>>>(A, B, C, M);
  return cudaGetLastError();
}
)";

const char* const k_gemm_cpu_hpp = R"(#pragma once
// Double-precision CPU reference of @NAME@ (imported): C[m][n] = sum_k A[m][k] * B[n][k], A [M, @K@] and
// B [@N@, @K@] as the fp16 values widened to float. 2 * M * @N@ * @K@ flops: workloads past a few hundred GFLOP
// are too slow for it (README.md lists them).
#include <cstdint>
#include <vector>

namespace evoteam_kernels::@NAME@ {

inline constexpr std::int64_t k_n = @N@;
inline constexpr std::int64_t k_k = @K@;

std::vector<double> run(const float* a, const float* b, std::int64_t m);

}  // namespace evoteam_kernels::@NAME@
)";

const char* const k_gemm_cpu_cpp = R"(// Straight from reference.py: one dot product per element, in double.
#include "cpu_reference.hpp"

#include <cstddef>
#include <stdexcept>

namespace evoteam_kernels::@NAME@ {

std::vector<double> run(const float* a, const float* b, std::int64_t m) {
  if (m < 0) throw std::invalid_argument("@NAME@: negative M");
  std::vector<double> c(static_cast<std::size_t>(m * k_n));
  for (std::int64_t row = 0; row < m; ++row)
    for (std::int64_t col = 0; col < k_n; ++col) {
      double sum = 0.0;
      for (std::int64_t k = 0; k < k_k; ++k)
        sum += static_cast<double>(a[row * k_k + k]) * static_cast<double>(b[col * k_k + k]);
      c[static_cast<std::size_t>(row * k_n + col)] = sum;
    }
  return c;
}

}  // namespace evoteam_kernels::@NAME@
)";

}  // namespace

FamilySources generate_gemm(const nlohmann::ordered_json& definition, const nlohmann::ordered_json& task) {
  static_cast<void>(definition);
  FamilySources out;
  out.family = "gemm";
  if (task["inputs"]["A"]["dtype"] != "float16" || task["outputs"]["C"]["dtype"] != "float16") {
    out.notes.push_back("the gemm generator writes fp16 GEMMs; this one is not: no starting kernel generated");
    return out;
  }
  const std::map<std::string, std::string> values = {{"@NAME@", task["name"].get<std::string>()},
                                                     {"@N@", std::to_string(const_axis(task, "N"))},
                                                     {"@K@", std::to_string(const_axis(task, "K"))},
                                                     {"@SIGNATURE@", entry_parameters(task)}};
  out.files["kernel.cu"] = fill(k_gemm_kernel, values);
  out.files["reference.cu"] = fill(k_gemm_reference, values);
  out.files["cpu_reference.hpp"] = fill(k_gemm_cpu_hpp, values);
  out.files["cpu_reference.cpp"] = fill(k_gemm_cpu_cpp, values);
  out.generated = true;
  out.cpu_reference = "yes";
  out.vendor =
      "the flashinfer-python wheel has no C++/CUDA entry point for a dense fp16 GEMM: flashinfer.gemm reaches cuBLAS "
      "and CUTLASS through its JIT-built torch extensions, which the harness cannot call";
  // fp16 output rounded once from a wider sum: one fp16 ulp (< 0.1 %) plus the accumulation order of fp32.
  out.task_fields["tolerances"] = {{"C", {{"rtol", 1e-2}, {"atol", 0}, {"atol_rms", 1e-2}, {"normwise", 4e-3}}}};
  out.task_fields["flops"] = "2 * M * N * K";
  out.task_fields["bytes"] = "2 * (M * K + N * K + M * N)";
  out.task_fields["params"] =
      nlohmann::ordered_json::array({{{"name", "BLOCK_N"},
                                      {"values", {8, 16, 32, 64}},
                                      {"default", 32},
                                      {"description", "threads per block along N"}},
                                     {{"name", "BLOCK_M"},
                                      {"values", {1, 2, 4, 8, 16}},
                                      {"default", 8},
                                      {"description", "threads per block along M (one output element each)"}}});
  out.task_fields["vendor_baseline"] = {{"kind", "flashinfer"}, {"unavailable", out.vendor}};
  out.task_fields["deterministic"] = true;
  out.cpu_limit = "2 * M * N * K";
  // Ours, for definitions published without workloads: decode-sized to prefill-sized M.
  for (int m : {1, 16, 128, 1024, 4096})
    out.our_workloads.push_back({{"name", "m" + std::to_string(m)}, {"origin", "ours"}, {"axes", {{"M", m}}}});
  return out;
}

}  // namespace evoteam::trace_detail
