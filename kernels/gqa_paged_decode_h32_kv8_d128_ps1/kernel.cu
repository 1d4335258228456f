// Starting kernel of gqa_paged_decode_h32_kv8_d128_ps1: CUDA cores, fp32, one block per (sequence, KV head,
// split). The 4 query heads of a group share their KV head, so a block stages each chunk of 32 tokens (key and
// value rows of its KV head) in shared memory once for all 4: warp w computes head w's logits (one token per
// lane) and its online (running-max) softmax, thread t accumulates value dimension t of all 4 output rows.
// KV_SPLITS (a param, default 1) splits each sequence's tokens evenly over that many blocks, which write partial
// (output row, max, sum) to the workspace for a second kernel to merge; a batch of one has only 8 blocks without.
// Left to improve: splits sized from the sequence lengths and the SM count rather than one fixed count;
// asynchronous staging (cp.async / TMA) that overlaps the next chunk's loads with this chunk's math; wider loads
// and fewer barriers. See README.md.
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
constexpr int k_heads = 32;
constexpr int k_kv_heads = 8;
constexpr int k_group = k_heads / k_kv_heads;  // query heads per KV head
constexpr int k_dim = 128;
constexpr int k_threads = 128;
constexpr int k_chunk = 32;  // tokens per step: one per lane in the logit phase
// A staged key row is 64 words (128 bf16) plus one: with an odd stride the 32 lanes, each reading its own token
// at the same offset, hit 32 different banks.
constexpr int k_key_words = k_dim / 2 + 1;
constexpr int k_pieces_per_row = k_dim / 8;  // 16-byte global loads per key or value row
constexpr float k_log2e = 1.44269504088896340736f;

// The workspace is [slots][32 heads][128 + 2] floats (task.json): per (sequence, split) slot and head, the
// split's normalised output row, then its running max (base 2) and sum.
constexpr int k_workspace_slots = 1024;
constexpr int k_slot_floats = k_dim + 2;

static_assert(k_group * 32 == k_threads, "one warp per query head of the group");
static_assert(k_dim == k_threads, "each thread owns one value dimension");

struct SharedStorage {
  float q[k_group][k_dim];                        // the group's queries, pre-scaled by sm_scale * log2(e)
  std::uint32_t k[k_chunk][k_key_words];          // the chunk's key rows, bf16 pairs
  alignas(16) __nv_bfloat16 v[k_chunk][k_dim];    // the chunk's value rows
  float p[k_group][k_chunk];                      // this chunk's softmax numerators
  float alpha[k_group];                           // rescale of the running sums for this chunk
  float l[k_group];                               // final softmax denominators
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

__global__ void __launch_bounds__(k_threads)
    gqa_decode_kernel(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                      const std::int32_t* kv_indptr, const std::int32_t* kv_indices, float sm_scale,
                      __nv_bfloat16* output, float* lse, float* workspace) {
  __shared__ SharedStorage s;
  const std::int64_t b = blockIdx.x;
  const int kv_head = blockIdx.y;
  const int split = blockIdx.z;
  const int splits = gridDim.z;
  const int tid = threadIdx.x;
  const int warp = tid / 32;  // the group member whose logits this warp computes
  const int lane = tid % 32;
  const std::int64_t first_row = b * k_heads + kv_head * k_group;  // the group's first (batch, head) row
  const std::int32_t begin = kv_indptr[b];
  const std::int32_t length = kv_indptr[b + 1] - begin;
  __nv_bfloat16* out = output + first_row * k_dim;
  // This split's tokens [t_begin, t_end): an even share of the sequence, empty for short ones.
  const std::int32_t share = length > 0 ? (length + splits - 1) / splits : 0;
  const std::int32_t t_begin = min(length, split * share);
  const std::int32_t t_end = min(length, t_begin + share);
  // Its slot of partial results; used only when the sequence is split.
  float* partial = workspace + ((b * splits + split) * k_heads + kv_head * k_group) * static_cast<std::int64_t>(k_slot_floats);

  if (t_end <= t_begin) {  // nothing to attend to here (block-uniform branch)
    if (splits == 1) {  // empty sequence: zero rows, lse = -inf
      for (int h = 0; h < k_group; ++h) out[h * k_dim + tid] = __float2bfloat16(0.0f);
      if (tid < k_group) lse[first_row + tid] = -INFINITY;
    } else if (tid < k_group) {  // an empty split: weight 0 in the merge
      partial[tid * k_slot_floats + k_dim] = -INFINITY;
      partial[tid * k_slot_floats + k_dim + 1] = 0.0f;
    }
    return;
  }

  const float q_scale = sm_scale * k_log2e;
  for (int h = 0; h < k_group; ++h) s.q[h][tid] = q_scale * __bfloat162float(q[(first_row + h) * k_dim + tid]);

  float m = -INFINITY, l = 0.0f;  // head `warp`'s running max and sum, uniform across the warp
  float acc[k_group] = {};

  const std::int32_t* pages = kv_indices + begin;
  for (std::int32_t t0 = t_begin; t0 < t_end; t0 += k_chunk) {
    const int valid = min(k_chunk, t_end - t0);
    __syncthreads();  // the previous chunk's readers are done (and the queries are written)
    for (int i = tid; i < valid * 2 * k_pieces_per_row; i += k_threads) {
      const int j = i / (2 * k_pieces_per_row);
      const int piece = i % (2 * k_pieces_per_row);
      const bool is_value = piece >= k_pieces_per_row;
      const int offset = (piece % k_pieces_per_row) * 8;
      // k_cache and v_cache are [num_pages, 1, 8, 128]: a page holds all KV heads of one token.
      const std::int64_t row = (static_cast<std::int64_t>(pages[t0 + j]) * k_kv_heads + kv_head) * k_dim;
      const uint4 bits = *reinterpret_cast<const uint4*>((is_value ? v_cache : k_cache) + row + offset);
      if (is_value) {
        *reinterpret_cast<uint4*>(&s.v[j][offset]) = bits;
      } else {
        std::uint32_t* dst = &s.k[j][offset / 2];
        dst[0] = bits.x;
        dst[1] = bits.y;
        dst[2] = bits.z;
        dst[3] = bits.w;
      }
    }
    __syncthreads();

    float logit = -INFINITY;
    if (lane < valid) {
      const std::uint32_t* k_row = s.k[lane];
      const float2* qh = reinterpret_cast<const float2*>(s.q[warp]);
      float a = 0.0f;
#pragma unroll 8
      for (int w = 0; w < k_dim / 2; ++w) {
        const float2 kk = bf16_pair(k_row[w]);
        const float2 x = qh[w];
        a = fmaf(x.x, kk.x, fmaf(x.y, kk.y, a));
      }
      logit = a;
    }
    const float m_new = fmaxf(m, warp_max(logit));  // finite: lane 0 always holds a token
    const float p = exp2f(logit - m_new);
    const float alpha = exp2f(m - m_new);  // 0 on the first chunk, where m = -inf
    l = l * alpha + warp_sum(p);
    m = m_new;
    s.p[warp][lane] = p;
    if (lane == 0) s.alpha[warp] = alpha;
    __syncthreads();

#pragma unroll
    for (int h = 0; h < k_group; ++h) acc[h] *= s.alpha[h];
    for (int j = 0; j < valid; ++j) {
      const float v = __bfloat162float(s.v[j][tid]);
#pragma unroll
      for (int h = 0; h < k_group; ++h) acc[h] = fmaf(s.p[h][j], v, acc[h]);
    }
  }

  if (splits == 1) {
    if (lane == 0) {
      s.l[warp] = l;
      lse[first_row + warp] = m + log2f(l);
    }
    __syncthreads();
#pragma unroll
    for (int h = 0; h < k_group; ++h) out[h * k_dim + tid] = __float2bfloat16(acc[h] / s.l[h]);
    return;
  }
  if (lane == 0) {
    s.l[warp] = l;
    partial[warp * k_slot_floats + k_dim] = m;
    partial[warp * k_slot_floats + k_dim + 1] = l;
  }
  __syncthreads();
#pragma unroll
  for (int h = 0; h < k_group; ++h) partial[h * k_slot_floats + tid] = acc[h] / s.l[h];
}

// Merges a sequence's splits, one block per sequence and thread d for dimension d of every head: each split's
// normalised row weighs l * 2^(m - M) under the largest running max M, and lse is M + log2 of the weights' sum.
__global__ void __launch_bounds__(k_dim)
    gqa_merge_kernel(const float* workspace, int splits, __nv_bfloat16* output, float* lse) {
  const std::int64_t b = blockIdx.x;
  const int d = threadIdx.x;
  for (int h = 0; h < k_heads; ++h) {
    const float* slot0 = workspace + (b * splits * k_heads + h) * static_cast<std::int64_t>(k_slot_floats);
    const std::int64_t slot_stride = static_cast<std::int64_t>(k_heads) * k_slot_floats;
    float m_max = -INFINITY;
    for (int split = 0; split < splits; ++split) m_max = fmaxf(m_max, slot0[split * slot_stride + k_dim]);
    float weight_sum = 0.0f, value = 0.0f;
    if (m_max != -INFINITY) {
      for (int split = 0; split < splits; ++split) {
        const float* slot = slot0 + split * slot_stride;
        const float l = slot[k_dim + 1];
        if (l <= 0.0f) continue;  // an empty split; its row was never written
        const float weight = l * exp2f(slot[k_dim] - m_max);
        weight_sum += weight;
        value = fmaf(weight, slot[d], value);
      }
    }
    const std::int64_t row = b * k_heads + h;
    // An empty sequence has no weight anywhere: zero row, lse = -inf, as without splits.
    output[row * k_dim + d] = __float2bfloat16(weight_sum > 0.0f ? value / weight_sum : 0.0f);
    if (d == 0) lse[row] = weight_sum > 0.0f ? m_max + log2f(weight_sum) : -INFINITY;
  }
}

}  // namespace

extern "C" cudaError_t gqa_paged_decode(const __nv_bfloat16* q, const __nv_bfloat16* k_cache,
                                        const __nv_bfloat16* v_cache, const std::int32_t* kv_indptr,
                                        const std::int32_t* kv_indices, float sm_scale, __nv_bfloat16* output,
                                        float* lse, float* workspace, std::int64_t batch_size, std::int64_t num_pages,
                                        std::int64_t num_kv_indices, cudaStream_t stream) {
  (void)num_pages;
  (void)num_kv_indices;
  if (batch_size <= 0) return cudaGetLastError();
  // As many splits as asked for and the workspace holds slots (one per sequence and split).
  std::int64_t splits = k_splits;
  if (splits * batch_size > k_workspace_slots) splits = k_workspace_slots / batch_size;
  if (splits < 1) splits = 1;
  const dim3 grid(static_cast<unsigned>(batch_size), k_kv_heads, static_cast<unsigned>(splits));
  gqa_decode_kernel<<<grid, k_threads, 0, stream>>>(q, k_cache, v_cache, kv_indptr, kv_indices, sm_scale, output, lse,
                                                    workspace);
  if (splits > 1)
    gqa_merge_kernel<<<static_cast<unsigned>(batch_size), k_dim, 0, stream>>>(workspace, static_cast<int>(splits),
                                                                            output, lse);
  return cudaGetLastError();
}
