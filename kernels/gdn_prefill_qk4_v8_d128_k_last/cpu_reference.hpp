#pragma once
// Double-precision CPU model of gdn_prefill_qk4_v8_d128_k_last: Gated Delta Net prefill over variable-length
// sequences with the recurrent state in k-last layout [num_seqs][num_v_heads][V][K]. Two independent
// formulations of the same math: the token-by-token recurrence (the definition) and the chunked WY / UT-transform
// form that fast kernels use. Inputs arrive as float (bf16 already widened); everything is computed in double.
#include <cstdint>
#include <vector>

namespace evoteam_kernels::gdn_prefill_qk4_v8_d128_k_last {

// Head counts and head size. The task fixes them at 4 q/k heads, 8 v heads, 128; tests may shrink them.
// num_v_heads must be a multiple of num_qk_heads: v head h reads q/k head h / (num_v_heads / num_qk_heads).
struct Dims {
  std::int64_t num_qk_heads = 4;
  std::int64_t num_v_heads = 8;
  std::int64_t head_size = 128;
};

// torch.nn.functional.softplus (beta 1, threshold 20: above 20 the input passes through) and the logistic sigmoid.
double softplus(double x);
double sigmoid(double x);

// Per token and v head, both [total_seq_len][num_v_heads]: log_decay = -exp(A_log) * softplus(a + dt_bias) (the
// state is multiplied by exp(log_decay), the definition's g) and beta = sigmoid(b).
struct Gates {
  std::vector<double> log_decay;
  std::vector<double> beta;
};

Gates compute_gates(const float* A_log, const float* a, const float* dt_bias, const float* b,
                    std::int64_t total_seq_len, const Dims& dims);

// The tensors of one call. q, k: [total_seq_len][num_qk_heads][head_size]; v: [total_seq_len][num_v_heads][head_size];
// state: [num_seqs][num_v_heads][head_size (V)][head_size (K)]; cu_seqlens: num_seqs + 1 nondecreasing offsets
// from 0 to total_seq_len (empty sequences allowed).
struct Inputs {
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  const float* state = nullptr;
  const std::int64_t* cu_seqlens = nullptr;
  std::int64_t total_seq_len = 0;
  std::int64_t num_seqs = 0;
  double scale = 0;
};

struct Result {
  std::vector<double> output;     // [total_seq_len][num_v_heads][head_size]
  std::vector<double> new_state;  // [num_seqs][num_v_heads][head_size (V)][head_size (K)]
};

// Token by token, per sequence and v head (S is V x K, starting from the sequence's state):
//   S = exp(log_decay_t) * S;  S += beta_t * (v_t - S k_t) k_t^T;  o_t = scale * S q_t.
// An empty sequence's final state is its initial state. Throws std::invalid_argument on malformed cu_seqlens or dims.
Result recurrent(const Inputs& inputs, const Gates& gates, const Dims& dims);

// The same result from the chunked formulation (chunks of chunk_size tokens, the last one partial): per chunk,
// the UT transform T = (I + A)^-1 with A_ij = beta_i exp(G_i - G_j) k_i.k_j (j < i, G the cumulative log decay)
// turns the recurrence into matrix products. Agrees with recurrent() to rounding.
Result chunked(const Inputs& inputs, const Gates& gates, const Dims& dims, std::int64_t chunk_size);

// The task's operator: gates from the raw inputs, then the recurrence.
Result gdn_prefill(const Inputs& inputs, const float* A_log, const float* a, const float* dt_bias, const float* b,
                   const Dims& dims = {});

}  // namespace evoteam_kernels::gdn_prefill_qk4_v8_d128_k_last
