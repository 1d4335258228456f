// Not written yet: the task's reference, reference.py in CUDA.
// Imported from the FlashInfer-Trace definition trtllm_fp8_per_tensor_scale_moe_topk8_e128_h2048_i768; reference.py holds its PyTorch reference. Until this file is
// written, every evaluation of the task fails with cudaErrorNotSupported.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

extern "C" cudaError_t trtllm_fp8_per_tensor_scale_moe_topk8_e128_h2048_i768(const __nv_bfloat16* /*routing_logits*/, const __nv_fp8_e4m3* /*hidden_states*/, const __nv_fp8_e4m3* /*gemm1_weights*/, const float* /*output1_scales_scalar*/, const float* /*output1_scales_gate_scalar*/, const __nv_fp8_e4m3* /*gemm2_weights*/, const float* /*output2_scales_scalar*/, __nv_bfloat16* /*output*/, std::int64_t /*seq_len*/, cudaStream_t /*stream*/) {
  return cudaErrorNotSupported;
}
