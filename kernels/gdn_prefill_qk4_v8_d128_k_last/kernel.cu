// Starting kernel for gdn_prefill_qk4_v8_d128_k_last: the token-by-token gated delta rule in fp32 registers.
//
// Rows of the V x K state are independent (row v reads only k, q, v[v] and its own row), so the state of one
// (sequence, v head) is split over blocks by rows: a block of 4 warps owns 4 * ROWS_PER_WARP rows, each warp
// ROWS_PER_WARP of them, and each lane 4 consecutive K columns of every row (so a row is one warp-wide dot
// product of float4 slices). Per token a lane reads 4 bf16 of k and of q (8-byte loads), computes the gates,
// and for each of its rows: decays, predicts s.k (warp sum), applies the delta update, then s.q (warp sum).
//
// What it leaves on the table (see README.md): it walks the sequence one token at a time, so each step pays
// the latency of its global loads and two warp reductions per row; nothing is prefetched; no tensor cores.
// The chunked (WY / UT transform) formulation turns most of the work into matrix products.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#ifndef ROWS_PER_WARP
#define ROWS_PER_WARP 4
#endif

namespace {

constexpr int k_num_qk_heads = 4;
constexpr int k_num_v_heads = 8;
constexpr int k_head_size = 128;
constexpr int k_warps = 4;
constexpr int k_rows_per_block = k_warps * ROWS_PER_WARP;
static_assert(k_head_size % k_rows_per_block == 0, "ROWS_PER_WARP must divide 32");
static_assert(ROWS_PER_WARP <= 32, "one lane per row collects the outputs");

__device__ __forceinline__ float warp_sum(float x) {
  for (int offset = 16; offset > 0; offset >>= 1) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

__device__ __forceinline__ float4 load_bf16x4(const __nv_bfloat16* p) {
  const uint2 raw = *reinterpret_cast<const uint2*>(p);
  const float2 lo = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.x));
  const float2 hi = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.y));
  return make_float4(lo.x, lo.y, hi.x, hi.y);
}

__global__ void __launch_bounds__(k_warps * 32)
    gdn_prefill_kernel(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                       const __nv_bfloat16* __restrict__ v, const float* __restrict__ state,
                       const float* __restrict__ A_log, const __nv_bfloat16* __restrict__ a,
                       const float* __restrict__ dt_bias, const __nv_bfloat16* __restrict__ b,
                       const std::int64_t* __restrict__ cu_seqlens, float scale, __nv_bfloat16* __restrict__ output,
                       float* __restrict__ new_state) {
  const int seq = blockIdx.x;
  const int head = blockIdx.y;
  const int qk_head = head / (k_num_v_heads / k_num_qk_heads);
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int row0 = blockIdx.z * k_rows_per_block + warp * ROWS_PER_WARP;
  const int col = lane * 4;

  const std::int64_t state_block = (static_cast<std::int64_t>(seq) * k_num_v_heads + head) * k_head_size * k_head_size;
  float4 s[ROWS_PER_WARP];
#pragma unroll
  for (int r = 0; r < ROWS_PER_WARP; ++r)
    s[r] = *reinterpret_cast<const float4*>(state + state_block + (row0 + r) * k_head_size + col);

  const float decay_rate = expf(A_log[head]);
  const float bias = dt_bias[head];
  const std::int64_t begin = cu_seqlens[seq];
  const std::int64_t end = cu_seqlens[seq + 1];
  for (std::int64_t t = begin; t < end; ++t) {
    const std::int64_t qk_offset = (t * k_num_qk_heads + qk_head) * k_head_size + col;
    const float4 kv = load_bf16x4(k + qk_offset);
    const float4 qv = load_bf16x4(q + qk_offset);
    const std::int64_t gate = t * k_num_v_heads + head;
    const float x = __bfloat162float(a[gate]) + bias;
    const float alpha = expf(-decay_rate * (x > 20.0f ? x : log1pf(expf(x))));
    const float beta = 1.0f / (1.0f + expf(-__bfloat162float(b[gate])));
    // Lane r holds v[row0 + r]; the other lanes read it by shuffle.
    const float v_lane = lane < ROWS_PER_WARP ? __bfloat162float(v[gate * k_head_size + row0 + lane]) : 0.0f;
    float out_lane = 0.0f;
#pragma unroll
    for (int r = 0; r < ROWS_PER_WARP; ++r) {
      float4& sr = s[r];
      sr.x *= alpha;
      sr.y *= alpha;
      sr.z *= alpha;
      sr.w *= alpha;
      const float predicted = warp_sum(sr.x * kv.x + sr.y * kv.y + sr.z * kv.z + sr.w * kv.w);
      const float delta = beta * (__shfl_sync(0xffffffffu, v_lane, r) - predicted);
      sr.x += delta * kv.x;
      sr.y += delta * kv.y;
      sr.z += delta * kv.z;
      sr.w += delta * kv.w;
      const float out = warp_sum(sr.x * qv.x + sr.y * qv.y + sr.z * qv.z + sr.w * qv.w);
      if (lane == r) out_lane = out;
    }
    if (lane < ROWS_PER_WARP) output[gate * k_head_size + row0 + lane] = __float2bfloat16_rn(scale * out_lane);
  }
#pragma unroll
  for (int r = 0; r < ROWS_PER_WARP; ++r)
    *reinterpret_cast<float4*>(new_state + state_block + (row0 + r) * k_head_size + col) = s[r];
}

}  // namespace

extern "C" cudaError_t gdn_prefill(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                   const float* state, const float* A_log, const __nv_bfloat16* a, const float* dt_bias,
                                   const __nv_bfloat16* b, const std::int64_t* cu_seqlens, float scale,
                                   __nv_bfloat16* output, float* new_state, std::int64_t total_seq_len,
                                   std::int64_t num_seqs, cudaStream_t stream) {
  (void)total_seq_len;  // implied by cu_seqlens
  if (num_seqs > 0) {
    const dim3 grid(static_cast<unsigned>(num_seqs), k_num_v_heads, k_head_size / k_rows_per_block);
    gdn_prefill_kernel<<<grid, k_warps * 32, 0, stream>>>(q, k, v, state, A_log, a, dt_bias, b, cu_seqlens, scale,
                                                          output, new_state);
  }
  return cudaGetLastError();
}
