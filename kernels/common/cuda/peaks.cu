// The GPU's measured peaks, for roofline fractions: memory bandwidth from a streaming copy over a buffer far larger
// than L2, and dense compute from a cuBLAS bf16 GEMM with fp32 accumulation (the tensor-core rate kernels of the
// task library compete with). Each is the best of several CUDA-event-timed runs; clocks are left alone.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "../record.hpp"
#include "cuda_check.hpp"
#include "peaks.hpp"

namespace evoteam_harness::cuda {
namespace {

__global__ void copy_kernel(const uint4* __restrict__ in, uint4* __restrict__ out, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) out[i] = in[i];
}

template <typename Launch>
float best_ms(cudaStream_t stream, int runs, Launch launch) {
  cudaEvent_t start = nullptr, stop = nullptr;
  EVOTEAM_CUDA_CHECK(cudaEventCreate(&start));
  EVOTEAM_CUDA_CHECK(cudaEventCreate(&stop));
  launch();  // warm-up
  EVOTEAM_CUDA_CHECK(cudaStreamSynchronize(stream));
  float best = 1e30f;
  for (int r = 0; r < runs; ++r) {
    EVOTEAM_CUDA_CHECK(cudaEventRecord(start, stream));
    launch();
    EVOTEAM_CUDA_CHECK(cudaEventRecord(stop, stream));
    EVOTEAM_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    EVOTEAM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    best = std::min(best, ms);
  }
  EVOTEAM_CUDA_CHECK(cudaEventDestroy(start));
  EVOTEAM_CUDA_CHECK(cudaEventDestroy(stop));
  return best;
}

double bandwidth_gbytes_per_s(cudaStream_t stream) {
  constexpr std::size_t k_bytes = std::size_t{1} << 30;  // 1 GiB each way: far beyond any L2
  void* in = nullptr;
  void* out = nullptr;
  EVOTEAM_CUDA_CHECK(cudaMalloc(&in, k_bytes));
  EVOTEAM_CUDA_CHECK(cudaMalloc(&out, k_bytes));
  EVOTEAM_CUDA_CHECK(cudaMemset(in, 1, k_bytes));
  int sms = 0;
  EVOTEAM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const std::size_t count = k_bytes / sizeof(uint4);
  const float ms = best_ms(stream, 10, [&] {
    copy_kernel<<<sms * 8, 512, 0, stream>>>(static_cast<const uint4*>(in), static_cast<uint4*>(out), count);
  });
  EVOTEAM_CUDA_CHECK(cudaGetLastError());
  EVOTEAM_CUDA_CHECK(cudaFree(in));
  EVOTEAM_CUDA_CHECK(cudaFree(out));
  return 2.0 * static_cast<double>(k_bytes) / (static_cast<double>(ms) * 1e-3) / 1e9;
}

double gemm_gflops(cudaStream_t stream, std::string* error) {
  constexpr int k_n = 8192;
  const std::size_t elements = static_cast<std::size_t>(k_n) * k_n;
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  EVOTEAM_CUDA_CHECK(cudaMalloc(&a, elements * sizeof(__nv_bfloat16)));
  EVOTEAM_CUDA_CHECK(cudaMalloc(&b, elements * sizeof(__nv_bfloat16)));
  EVOTEAM_CUDA_CHECK(cudaMalloc(&c, elements * sizeof(__nv_bfloat16)));
  EVOTEAM_CUDA_CHECK(cudaMemset(a, 0, elements * sizeof(__nv_bfloat16)));
  EVOTEAM_CUDA_CHECK(cudaMemset(b, 0, elements * sizeof(__nv_bfloat16)));
  cublasHandle_t handle = nullptr;
  double gflops = 0;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    *error = "cublasCreate failed";
  } else {
    cublasSetStream(handle, stream);
    const float alpha = 1.0f, beta = 0.0f;
    cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
    const float ms = best_ms(stream, 5, [&] {
      status = cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, k_n, k_n, k_n, &alpha, a, CUDA_R_16BF, k_n, b, CUDA_R_16BF, k_n,
                            &beta, c, CUDA_R_16BF, k_n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    });
    if (status != CUBLAS_STATUS_SUCCESS) *error = "cublasGemmEx failed";
    else gflops = 2.0 * k_n * static_cast<double>(k_n) * k_n / (static_cast<double>(ms) * 1e-3) / 1e9;
    cublasDestroy(handle);
  }
  EVOTEAM_CUDA_CHECK(cudaFree(a));
  EVOTEAM_CUDA_CHECK(cudaFree(b));
  EVOTEAM_CUDA_CHECK(cudaFree(c));
  return gflops;
}

}  // namespace

int measure_peaks() {
  set_phase("peaks");
  cudaStream_t stream = nullptr;
  EVOTEAM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const double bandwidth = bandwidth_gbytes_per_s(stream);
  std::string error;
  const double gflops = gemm_gflops(stream, &error);
  EVOTEAM_CUDA_CHECK(cudaStreamDestroy(stream));
  JsonLine line;
  line.field("ev", "peaks").field("peak_gbytes_per_s", bandwidth).field("peak_gflops", gflops)
      .field("compute_from", "cublas bf16 gemm 8192^3, fp32 accumulation").field("bandwidth_from", "device copy, 1 GiB");
  if (!error.empty()) line.field("error", error);
  emit(line);
  return gflops > 0 && bandwidth > 0 ? 0 : 1;
}

}  // namespace evoteam_harness::cuda
