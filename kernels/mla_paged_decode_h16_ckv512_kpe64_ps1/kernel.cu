// Starting kernel of mla_paged_decode_h16_ckv512_kpe64_ps1: CUDA cores, fp32, one block per (sequence, split).
// All 16 heads share the sequence's latent cache, so a block stages each chunk of 32 tokens (latent + rope rows)
// in shared memory once and lets every head use it: each warp owns two heads for the logits and the online
// (running-max) softmax, each thread owns two latent dimensions of all 16 output rows for the weighted sum.
// KV_SPLITS (a param, default 1) splits each sequence's tokens evenly over that many blocks, which write partial
// (output row, max, sum) to the workspace for a second kernel to merge.
// Left to improve: tensor cores (the logits are a [16 x 576] x [576 x 32] product, the output a [16 x 32] x
// [32 x 512] one), splits sized from the lengths and the SM count, asynchronous / TMA staging that overlaps the
// next chunk's loads with this chunk's math. See README.md.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

// Tunable through the task's params (passed as -D): see task.json.
#ifndef KV_SPLITS
#define KV_SPLITS 1
#endif

namespace {

constexpr int k_splits = KV_SPLITS;
static_assert(k_splits >= 1, "KV_SPLITS must be at least 1");
constexpr int k_heads = 16;
constexpr int k_ckv = 512;
constexpr int k_kpe = 64;
constexpr int k_dim = k_ckv + k_kpe;
constexpr int k_threads = 256;
constexpr int k_warps = k_threads / 32;
constexpr int k_chunk = 32;  // tokens per step: one per lane in the logit phase
// A staged token row is 288 words (576 bf16) plus one: with an odd stride the 32 lanes, each reading its own
// token at the same offset, hit 32 different banks.
constexpr int k_row_words = k_dim / 2 + 1;
constexpr int k_pieces_per_token = k_dim / 8;  // 16-byte global loads per token: 64 latent + 8 rope
constexpr float k_log2e = 1.44269504088896340736f;

// The workspace is [slots][16 heads][512 + 2] floats (task.json): per (sequence, split) slot and head, the
// split's normalised output row, then its running max (base 2) and sum.
constexpr int k_workspace_slots = 1024;
constexpr int k_slot_floats = k_ckv + 2;

static_assert(k_heads == 2 * k_warps, "each warp owns two heads");
static_assert(k_ckv == 2 * k_threads, "each thread owns two latent dimensions");

struct SharedStorage {
  float q[k_heads][k_dim];                 // queries, pre-scaled by sm_scale * log2(e)
  std::uint32_t kv[k_chunk][k_row_words];  // the chunk's tokens: bf16 pairs, latent then rope
  float p[k_heads][k_chunk];               // this chunk's softmax numerators
  float alpha[k_heads];                    // rescale of the running sums for this chunk
  float l[k_heads];                        // final softmax denominators
};

__device__ __forceinline__ float2 bf16_pair(std::uint32_t bits) {
  return make_float2(__uint_as_float(bits << 16), __uint_as_float(bits & 0xFFFF0000u));
}

__device__ __forceinline__ float warp_max(float value) {
  for (int offset = 16; offset > 0; offset >>= 1) value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

__device__ __forceinline__ float warp_sum(float value) {
  for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

// One head's online-softmax step over a chunk, by the warp that owns the head. `logit` is lane's token logit in
// the base-2 domain (-inf past the end of the sequence); running max `m` and sum `l` stay uniform across lanes.
__device__ __forceinline__ void softmax_step(float logit, float& m, float& l, float* p_row, float* alpha_slot, int lane) {
  const float m_new = fmaxf(m, warp_max(logit));  // finite: lane 0 always holds a token
  const float p = exp2f(logit - m_new);
  const float alpha = exp2f(m - m_new);  // 0 on the first chunk, where m = -inf
  l = l * alpha + warp_sum(p);
  m = m_new;
  p_row[lane] = p;
  if (lane == 0) *alpha_slot = alpha;
}

__global__ void __launch_bounds__(k_threads, 1)
    mla_decode_kernel(const __nv_bfloat16* q_nope, const __nv_bfloat16* q_pe, const __nv_bfloat16* ckv_cache,
                      const __nv_bfloat16* kpe_cache, const std::int32_t* kv_indptr, const std::int32_t* kv_indices,
                      float sm_scale, __nv_bfloat16* output, float* lse, float* workspace) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  SharedStorage& s = *reinterpret_cast<SharedStorage*>(smem_raw);
  const std::int64_t b = blockIdx.x;
  const int split = blockIdx.y;
  const int splits = gridDim.y;
  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const std::int32_t begin = kv_indptr[b];
  const std::int32_t length = kv_indptr[b + 1] - begin;
  __nv_bfloat16* out = output + b * k_heads * k_ckv;
  // This split's tokens [t_begin, t_end): an even share of the sequence, empty for short ones.
  const std::int32_t share = length > 0 ? (length + splits - 1) / splits : 0;
  const std::int32_t t_begin = min(length, split * share);
  const std::int32_t t_end = min(length, t_begin + share);
  // Its slot of partial results; used only when the sequence is split.
  float* partial = workspace + (b * splits + split) * static_cast<std::int64_t>(k_heads) * k_slot_floats;

  if (t_end <= t_begin) {  // nothing to attend to here (block-uniform branch)
    if (splits == 1) {  // empty sequence: zero rows, lse = -inf
      for (int i = tid; i < k_heads * k_ckv; i += k_threads) out[i] = __float2bfloat16(0.0f);
      if (tid < k_heads) lse[b * k_heads + tid] = -INFINITY;
    } else if (tid < k_heads) {  // an empty split: weight 0 in the merge
      partial[tid * k_slot_floats + k_ckv] = -INFINITY;
      partial[tid * k_slot_floats + k_ckv + 1] = 0.0f;
    }
    return;
  }

  const float q_scale = sm_scale * k_log2e;
  for (int i = tid; i < k_heads * k_dim; i += k_threads) {
    const int h = i / k_dim;
    const int d = i % k_dim;
    const float x = d < k_ckv ? __bfloat162float(q_nope[(b * k_heads + h) * k_ckv + d])
                              : __bfloat162float(q_pe[(b * k_heads + h) * k_kpe + (d - k_ckv)]);
    s.q[h][d] = q_scale * x;
  }

  const int h0 = warp;
  const int h1 = warp + k_warps;
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;
  float acc[k_heads][2];
#pragma unroll
  for (int h = 0; h < k_heads; ++h) acc[h][0] = acc[h][1] = 0.0f;

  const std::int32_t* pages = kv_indices + begin;
  for (std::int32_t t0 = t_begin; t0 < t_end; t0 += k_chunk) {
    const int valid = min(k_chunk, t_end - t0);
    __syncthreads();  // the previous chunk's readers are done (and the queries are written)
    for (int v = tid; v < valid * k_pieces_per_token; v += k_threads) {
      const int j = v / k_pieces_per_token;
      const int piece = v % k_pieces_per_token;
      const std::int64_t page = pages[t0 + j];
      const uint4 bits = piece < k_ckv / 8
                             ? *reinterpret_cast<const uint4*>(ckv_cache + page * k_ckv + piece * 8)
                             : *reinterpret_cast<const uint4*>(kpe_cache + page * k_kpe + (piece - k_ckv / 8) * 8);
      std::uint32_t* dst = &s.kv[j][piece * 4];
      dst[0] = bits.x;
      dst[1] = bits.y;
      dst[2] = bits.z;
      dst[3] = bits.w;
    }
    __syncthreads();

    float logit0 = -INFINITY, logit1 = -INFINITY;
    if (lane < valid) {
      const std::uint32_t* k_row = s.kv[lane];
      const float2* q0 = reinterpret_cast<const float2*>(s.q[h0]);
      const float2* q1 = reinterpret_cast<const float2*>(s.q[h1]);
      float a0 = 0.0f, a1 = 0.0f;
#pragma unroll 8
      for (int w = 0; w < k_dim / 2; ++w) {
        const float2 k = bf16_pair(k_row[w]);
        const float2 x0 = q0[w];
        const float2 x1 = q1[w];
        a0 = fmaf(x0.x, k.x, fmaf(x0.y, k.y, a0));
        a1 = fmaf(x1.x, k.x, fmaf(x1.y, k.y, a1));
      }
      logit0 = a0;
      logit1 = a1;
    }
    softmax_step(logit0, m0, l0, s.p[h0], &s.alpha[h0], lane);
    softmax_step(logit1, m1, l1, s.p[h1], &s.alpha[h1], lane);
    __syncthreads();

#pragma unroll
    for (int h = 0; h < k_heads; ++h) {
      acc[h][0] *= s.alpha[h];
      acc[h][1] *= s.alpha[h];
    }
    for (int j = 0; j < valid; ++j) {
      const float2 v = bf16_pair(s.kv[j][tid]);  // latent dimensions 2 * tid and 2 * tid + 1
#pragma unroll
      for (int h = 0; h < k_heads; ++h) {
        const float p = s.p[h][j];
        acc[h][0] = fmaf(p, v.x, acc[h][0]);
        acc[h][1] = fmaf(p, v.y, acc[h][1]);
      }
    }
  }

  if (lane == 0) {
    s.l[h0] = l0;
    s.l[h1] = l1;
    if (splits == 1) {
      lse[b * k_heads + h0] = m0 + log2f(l0);
      lse[b * k_heads + h1] = m1 + log2f(l1);
    } else {
      partial[h0 * k_slot_floats + k_ckv] = m0;
      partial[h0 * k_slot_floats + k_ckv + 1] = l0;
      partial[h1 * k_slot_floats + k_ckv] = m1;
      partial[h1 * k_slot_floats + k_ckv + 1] = l1;
    }
  }
  __syncthreads();
#pragma unroll
  for (int h = 0; h < k_heads; ++h) {
    const float inv = 1.0f / s.l[h];
    if (splits == 1) {
      *reinterpret_cast<__nv_bfloat162*>(out + h * k_ckv + 2 * tid) = __floats2bfloat162_rn(acc[h][0] * inv, acc[h][1] * inv);
    } else {
      partial[h * k_slot_floats + 2 * tid] = acc[h][0] * inv;
      partial[h * k_slot_floats + 2 * tid + 1] = acc[h][1] * inv;
    }
  }
}

// Merges a sequence's splits, one block per sequence and thread d for latent dimension d of every head: each
// split's normalised row weighs l * 2^(m - M) under the largest running max M, and lse is M + log2 of the sum.
__global__ void __launch_bounds__(k_ckv)
    mla_merge_kernel(const float* workspace, int splits, __nv_bfloat16* output, float* lse) {
  const std::int64_t b = blockIdx.x;
  const int d = threadIdx.x;
  const std::int64_t slot_stride = static_cast<std::int64_t>(k_heads) * k_slot_floats;
  for (int h = 0; h < k_heads; ++h) {
    const float* slot0 = workspace + b * splits * slot_stride + h * k_slot_floats;
    float m_max = -INFINITY;
    for (int split = 0; split < splits; ++split) m_max = fmaxf(m_max, slot0[split * slot_stride + k_ckv]);
    float weight_sum = 0.0f, value = 0.0f;
    if (m_max != -INFINITY) {
      for (int split = 0; split < splits; ++split) {
        const float* slot = slot0 + split * slot_stride;
        const float l = slot[k_ckv + 1];
        if (l <= 0.0f) continue;  // an empty split; its row was never written
        const float weight = l * exp2f(slot[k_ckv] - m_max);
        weight_sum += weight;
        value = fmaf(weight, slot[d], value);
      }
    }
    const std::int64_t row = b * k_heads + h;
    // An empty sequence has no weight anywhere: zero row, lse = -inf, as without splits.
    output[row * k_ckv + d] = __float2bfloat16(weight_sum > 0.0f ? value / weight_sum : 0.0f);
    if (d == 0) lse[row] = weight_sum > 0.0f ? m_max + log2f(weight_sum) : -INFINITY;
  }
}

}  // namespace

extern "C" cudaError_t mla_paged_decode(const __nv_bfloat16* q_nope, const __nv_bfloat16* q_pe,
                                        const __nv_bfloat16* ckv_cache, const __nv_bfloat16* kpe_cache,
                                        const std::int32_t* kv_indptr, const std::int32_t* kv_indices, float sm_scale,
                                        __nv_bfloat16* output, float* lse, float* workspace, std::int64_t batch_size,
                                        std::int64_t num_pages, std::int64_t num_kv_indices, cudaStream_t stream) {
  (void)num_pages;
  (void)num_kv_indices;
  if (batch_size <= 0) return cudaGetLastError();
  const int smem_bytes = static_cast<int>(sizeof(SharedStorage));
  const cudaError_t status = cudaFuncSetAttribute(mla_decode_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
  if (status != cudaSuccess) return status;
  // As many splits as asked for and the workspace holds slots (one per sequence and split).
  std::int64_t splits = k_splits;
  if (splits * batch_size > k_workspace_slots) splits = k_workspace_slots / batch_size;
  if (splits < 1) splits = 1;
  const dim3 grid(static_cast<unsigned>(batch_size), static_cast<unsigned>(splits));
  mla_decode_kernel<<<grid, k_threads, smem_bytes, stream>>>(q_nope, q_pe, ckv_cache, kpe_cache, kv_indptr,
                                                             kv_indices, sm_scale, output, lse, workspace);
  if (splits > 1)
    mla_merge_kernel<<<static_cast<unsigned>(batch_size), k_ckv, 0, stream>>>(workspace, static_cast<int>(splits),
                                                                            output, lse);
  return cudaGetLastError();
}
