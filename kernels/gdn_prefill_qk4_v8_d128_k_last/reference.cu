// Trusted reference for gdn_prefill_qk4_v8_d128_k_last: the token-by-token gated delta rule in double precision.
// One block of 32 threads per (sequence, v head, 32 rows of V); each thread owns one row of the V x K state
// (rows never interact: row v only reads k, q, v[v] and its own state row) and keeps it in shared memory as
// double. Per token, with alpha = exp(-exp(A_log) * softplus(a + dt_bias)) and beta = sigmoid(b):
//   s = alpha * s;  s += beta * (v[row] - s.k) * k;  output[row] = scale * s.q
// Slow (a few microseconds per token of the longest sequence) and obviously correct.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr int k_num_qk_heads = 4;
constexpr int k_num_v_heads = 8;
constexpr int k_head_size = 128;
constexpr int k_rows_per_block = 32;

__device__ double softplus(double x) { return x > 20.0 ? x : log1p(exp(x)); }

__global__ void __launch_bounds__(k_rows_per_block)
    gdn_reference_kernel(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                         const __nv_bfloat16* __restrict__ v, const float* __restrict__ state,
                         const float* __restrict__ A_log, const __nv_bfloat16* __restrict__ a,
                         const float* __restrict__ dt_bias, const __nv_bfloat16* __restrict__ b,
                         const std::int64_t* __restrict__ cu_seqlens, float scale, __nv_bfloat16* __restrict__ output,
                         float* __restrict__ new_state) {
  __shared__ double s[k_rows_per_block][k_head_size + 1];  // +1: rows of different threads in different banks
  __shared__ double k_shared[k_head_size];
  __shared__ double q_shared[k_head_size];
  const int seq = blockIdx.x;
  const int head = blockIdx.y;
  const int qk_head = head / (k_num_v_heads / k_num_qk_heads);
  const int lane = threadIdx.x;
  const int row = blockIdx.z * k_rows_per_block + lane;
  const std::int64_t state_row = ((static_cast<std::int64_t>(seq) * k_num_v_heads + head) * k_head_size + row) * k_head_size;
  for (int c = 0; c < k_head_size; ++c) s[lane][c] = state[state_row + c];
  const double decay_rate = exp(static_cast<double>(A_log[head]));
  const double bias = dt_bias[head];
  const std::int64_t begin = cu_seqlens[seq];
  const std::int64_t end = cu_seqlens[seq + 1];
  for (std::int64_t t = begin; t < end; ++t) {
    __syncthreads();  // the previous token is done with k_shared and q_shared
    const std::int64_t qk_offset = (t * k_num_qk_heads + qk_head) * k_head_size;
    for (int c = lane; c < k_head_size; c += k_rows_per_block) {
      k_shared[c] = __bfloat162float(k[qk_offset + c]);
      q_shared[c] = __bfloat162float(q[qk_offset + c]);
    }
    __syncthreads();
    const std::int64_t gate = t * k_num_v_heads + head;
    const double alpha = exp(-decay_rate * softplus(static_cast<double>(__bfloat162float(a[gate])) + bias));
    const double beta = 1.0 / (1.0 + exp(-static_cast<double>(__bfloat162float(b[gate]))));
    double predicted = 0;
    for (int c = 0; c < k_head_size; ++c) {
      s[lane][c] *= alpha;
      predicted += s[lane][c] * k_shared[c];
    }
    const double delta = beta * (static_cast<double>(__bfloat162float(v[gate * k_head_size + row])) - predicted);
    double out = 0;
    for (int c = 0; c < k_head_size; ++c) {
      s[lane][c] += delta * k_shared[c];
      out += s[lane][c] * q_shared[c];
    }
    output[gate * k_head_size + row] = __float2bfloat16_rn(static_cast<float>(static_cast<double>(scale) * out));
  }
  // An empty sequence writes its initial state back unchanged.
  for (int c = 0; c < k_head_size; ++c) new_state[state_row + c] = static_cast<float>(s[lane][c]);
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
    gdn_reference_kernel<<<grid, k_rows_per_block, 0, stream>>>(q, k, v, state, A_log, a, dt_bias, b, cu_seqlens, scale,
                                                                output, new_state);
  }
  return cudaGetLastError();
}
