// GQA decode over a paged KV cache (bf16 q and cache, bf16 output and base-2 lse; page size 1, or larger with
// kv_last_page_len): one block per (sequence, query head), one thread per head-dim element, an online softmax over
// the sequence's tokens in fp32 (double in the references).
#include <utility>
#include <vector>

#include <evoteam/core/error.hpp>

#include "trace/trace_families.hpp"

namespace evoteam::trace_detail {
namespace {

// The sequence's tokens: pages [ps, pe) of kv_indices, all full but the last, which holds last_len tokens.
const char* const k_gqa_common = R"(constexpr int k_qo_heads = @QO@;
constexpr int k_kv_heads = @KV@;
constexpr int k_head_dim = @D@;
constexpr int k_page_size = @PS@;
constexpr int k_group = k_qo_heads / k_kv_heads;

static_assert(k_head_dim % 32 == 0 && k_head_dim <= 1024, "one thread per head-dim element, whole warps");

// Sequence b's token count and where token t of it sits in the cache (element offset of its [head_dim] row at
// KV head 0).
__device__ std::int64_t sequence_tokens(const std::int32_t* kv_indptr, const std::int32_t* last_page_len, int b) {
  const std::int64_t pages = kv_indptr[b + 1] - kv_indptr[b];
  if (pages <= 0) return 0;
  const std::int64_t last = last_page_len != nullptr ? last_page_len[b] : k_page_size;
  return (pages - 1) * k_page_size + last;
}
__device__ std::int64_t token_row(const std::int32_t* kv_indptr, const std::int32_t* kv_indices, int b,
                                  std::int64_t t) {
  const std::int64_t page = kv_indices[kv_indptr[b] + t / k_page_size];
  return ((page * k_page_size + t % k_page_size) * k_kv_heads) * k_head_dim;
}
)";

const char* const k_gqa_kernel =
    R"(// Starting kernel for @NAME@ (imported): one block per (sequence, query head), one thread per
// head-dim element. For each token of the sequence the block reduces q.k (warp shuffles, then shared memory),
// updates a running max and sum (online softmax, fp32) and accumulates the value row: the straightforward
// translation of reference.py. Left to the team: several tokens per step, query heads of a group sharing the
// loaded K/V rows, split-KV across blocks for long sequences, vectorised loads, tensor cores.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace {

@COMMON@
constexpr int k_warps = k_head_dim / 32;

__global__ void __launch_bounds__(k_head_dim)
    gqa_decode_naive(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k_cache,
                     const __nv_bfloat16* __restrict__ v_cache, const std::int32_t* __restrict__ kv_indptr,
                     const std::int32_t* __restrict__ kv_indices, const std::int32_t* __restrict__ last_page_len,
                     float sm_scale, __nv_bfloat16* __restrict__ output, float* __restrict__ lse) {
  __shared__ float warp_sums[k_warps];
  const int b = static_cast<int>(blockIdx.x);
  const int h = static_cast<int>(blockIdx.y);
  const int d = static_cast<int>(threadIdx.x);
  const std::int64_t kv_head_offset = static_cast<std::int64_t>(h / k_group) * k_head_dim + d;
  const float q_d = __bfloat162float(q[(static_cast<std::int64_t>(b) * k_qo_heads + h) * k_head_dim + d]);
  const std::int64_t tokens = sequence_tokens(kv_indptr, last_page_len, b);
  float running_max = -INFINITY;
  float running_sum = 0.0f;
  float acc = 0.0f;
  for (std::int64_t t = 0; t < tokens; ++t) {
    const std::int64_t row = token_row(kv_indptr, kv_indices, b, t) + kv_head_offset;
    float part = q_d * __bfloat162float(k_cache[row]);
    for (int offset = 16; offset > 0; offset >>= 1) part += __shfl_xor_sync(0xffffffffu, part, offset);
    if (d % 32 == 0) warp_sums[d / 32] = part;
    __syncthreads();
    float logit = 0.0f;
    for (int w = 0; w < k_warps; ++w) logit += warp_sums[w];
    __syncthreads();
    logit *= sm_scale;
    const float new_max = fmaxf(running_max, logit);
    const float rescale = expf(running_max - new_max);
    const float weight = expf(logit - new_max);
    running_sum = running_sum * rescale + weight;
    acc = acc * rescale + weight * __bfloat162float(v_cache[row]);
    running_max = new_max;
  }
  const std::int64_t out = (static_cast<std::int64_t>(b) * k_qo_heads + h) * k_head_dim + d;
  output[out] = __float2bfloat16_rn(tokens > 0 ? acc / running_sum : 0.0f);
  if (d == 0)
    lse[static_cast<std::int64_t>(b) * k_qo_heads + h] =
        tokens > 0 ? (running_max + logf(running_sum)) * 1.4426950408889634f : -INFINITY;
}

}  // namespace

extern "C" cudaError_t @NAME@(@SIGNATURE@, cudaStream_t stream) {
  static_cast<void>(num_pages);
  static_cast<void>(num_kv_indices);
  if (batch_size <= 0) return cudaSuccess;
  if (batch_size > 0x7fffffff) return cudaErrorInvalidValue;
  gqa_decode_naive<<<dim3(static_cast<unsigned>(batch_size), k_qo_heads), k_head_dim, 0, stream>>>(
      q, k_cache, v_cache, kv_indptr, kv_indices, @LAST_PAGE_LEN@, sm_scale, output, lse);
  return cudaGetLastError();
}
)";

const char* const k_gqa_reference =
    R"(// Trusted reference for @NAME@ (imported): one thread per (sequence, query head). Two passes over the
// sequence's tokens in double (the maximum logit, then the sum of exponentials and the weighted value rows), one
// rounding of each output element to bf16, the lse in base 2 (-inf and zero rows for an empty sequence).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace {

@COMMON@

__global__ void gqa_decode_reference(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k_cache,
                                     const __nv_bfloat16* __restrict__ v_cache,
                                     const std::int32_t* __restrict__ kv_indptr,
                                     const std::int32_t* __restrict__ kv_indices,
                                     const std::int32_t* __restrict__ last_page_len, float sm_scale,
                                     __nv_bfloat16* __restrict__ output, float* __restrict__ lse,
                                     std::int64_t batch_size) {
  const std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= batch_size * k_qo_heads) return;
  const int b = static_cast<int>(item / k_qo_heads);
  const int h = static_cast<int>(item % k_qo_heads);
  const __nv_bfloat16* q_row = q + item * k_head_dim;
  const std::int64_t kv_head_offset = static_cast<std::int64_t>(h / k_group) * k_head_dim;
  const std::int64_t tokens = sequence_tokens(kv_indptr, last_page_len, b);
  __nv_bfloat16* out = output + item * k_head_dim;
  if (tokens == 0) {
    for (int d = 0; d < k_head_dim; ++d) out[d] = __float2bfloat16(0.0f);
    lse[item] = -INFINITY;
    return;
  }
  auto logit = [&](std::int64_t t) {
    const std::int64_t row = token_row(kv_indptr, kv_indices, b, t) + kv_head_offset;
    double dot = 0.0;
    for (int d = 0; d < k_head_dim; ++d)
      dot += static_cast<double>(__bfloat162float(q_row[d])) * static_cast<double>(__bfloat162float(k_cache[row + d]));
    return dot * static_cast<double>(sm_scale);
  };
  double max_logit = -INFINITY;
  for (std::int64_t t = 0; t < tokens; ++t) max_logit = fmax(max_logit, logit(t));
  double acc[k_head_dim];
  for (int d = 0; d < k_head_dim; ++d) acc[d] = 0.0;
  double sum = 0.0;
  for (std::int64_t t = 0; t < tokens; ++t) {
    const double weight = exp(logit(t) - max_logit);
    sum += weight;
    const std::int64_t row = token_row(kv_indptr, kv_indices, b, t) + kv_head_offset;
    for (int d = 0; d < k_head_dim; ++d) acc[d] += weight * static_cast<double>(__bfloat162float(v_cache[row + d]));
  }
  for (int d = 0; d < k_head_dim; ++d) out[d] = __double2bfloat16(acc[d] / sum);
  lse[item] = static_cast<float>((max_logit + log(sum)) / log(2.0));
}

}  // namespace

extern "C" cudaError_t @NAME@(@SIGNATURE@, cudaStream_t stream) {
  static_cast<void>(num_pages);
  static_cast<void>(num_kv_indices);
  if (batch_size <= 0) return cudaSuccess;
  const std::int64_t items = batch_size * k_qo_heads;
  gqa_decode_reference<<<static_cast<unsigned>((items + 63) / 64), 64, 0, stream>>>(
      q, k_cache, v_cache, kv_indptr, kv_indices, @LAST_PAGE_LEN@, sm_scale, output, lse, batch_size);
  return cudaGetLastError();
}
)";

const char* const k_gqa_cpu_hpp = R"(#pragma once
// Double-precision CPU reference of @NAME@ (imported): for each sequence b and query head h, softmax over the
// sequence's tokens of sm_scale * q.k (KV head h / @GROUP@), the weighted sum of value rows, and the base-2
// log-sum-exp (-inf, zero row for an empty sequence). bf16 inputs are widened to float by the caller.
#include <cstdint>
#include <vector>

namespace evoteam_kernels::@NAME@ {

inline constexpr int k_qo_heads = @QO@;
inline constexpr int k_kv_heads = @KV@;
inline constexpr int k_head_dim = @D@;
inline constexpr int k_page_size = @PS@;

struct Result {
  std::vector<double> output;  // [batch_size][k_qo_heads][k_head_dim]
  std::vector<double> lse;     // [batch_size][k_qo_heads]
};

// last_page_len: tokens in each sequence's last page; null means every page is full.
Result run(const float* q, const float* k_cache, const float* v_cache, const std::int32_t* kv_indptr,
           const std::int32_t* kv_indices, const std::int32_t* last_page_len, double sm_scale,
           std::int64_t batch_size);

}  // namespace evoteam_kernels::@NAME@
)";

const char* const k_gqa_cpu_cpp =
    R"(// Straight from reference.py, in double: gather the sequence's tokens, then softmax and weighted sum per head.
#include "cpu_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>

namespace evoteam_kernels::@NAME@ {

Result run(const float* q, const float* k_cache, const float* v_cache, const std::int32_t* kv_indptr,
           const std::int32_t* kv_indices, const std::int32_t* last_page_len, double sm_scale,
           std::int64_t batch_size) {
  if (batch_size < 0) throw std::invalid_argument("@NAME@: negative batch_size");
  Result result;
  result.output.assign(static_cast<std::size_t>(batch_size * k_qo_heads * k_head_dim), 0.0);
  result.lse.assign(static_cast<std::size_t>(batch_size * k_qo_heads), -std::numeric_limits<double>::infinity());
  for (std::int64_t b = 0; b < batch_size; ++b) {
    const std::int64_t pages = kv_indptr[b + 1] - kv_indptr[b];
    if (pages <= 0) continue;
    const std::int64_t tokens = (pages - 1) * k_page_size + (last_page_len ? last_page_len[b] : k_page_size);
    std::vector<std::int64_t> rows(static_cast<std::size_t>(tokens));
    for (std::int64_t t = 0; t < tokens; ++t) {
      const std::int64_t page = kv_indices[kv_indptr[b] + t / k_page_size];
      rows[static_cast<std::size_t>(t)] = (page * k_page_size + t % k_page_size) * k_kv_heads * k_head_dim;
    }
    for (int h = 0; h < k_qo_heads; ++h) {
      const float* q_row = q + (b * k_qo_heads + h) * k_head_dim;
      const std::int64_t head = static_cast<std::int64_t>(h / (k_qo_heads / k_kv_heads)) * k_head_dim;
      std::vector<double> logits(static_cast<std::size_t>(tokens));
      double max_logit = -std::numeric_limits<double>::infinity();
      for (std::int64_t t = 0; t < tokens; ++t) {
        double dot = 0.0;
        for (int d = 0; d < k_head_dim; ++d)
          dot += static_cast<double>(q_row[d]) * static_cast<double>(k_cache[rows[static_cast<std::size_t>(t)] + head + d]);
        logits[static_cast<std::size_t>(t)] = dot * sm_scale;
        max_logit = std::max(max_logit, dot * sm_scale);
      }
      double sum = 0.0;
      double* out = result.output.data() + (b * k_qo_heads + h) * k_head_dim;
      for (std::int64_t t = 0; t < tokens; ++t) {
        const double weight = std::exp(logits[static_cast<std::size_t>(t)] - max_logit);
        sum += weight;
        for (int d = 0; d < k_head_dim; ++d)
          out[d] += weight * static_cast<double>(v_cache[rows[static_cast<std::size_t>(t)] + head + d]);
      }
      for (int d = 0; d < k_head_dim; ++d) out[d] /= sum;
      result.lse[static_cast<std::size_t>(b * k_qo_heads + h)] = (max_logit + std::log(sum)) / std::log(2.0);
    }
  }
  return result;
}

}  // namespace evoteam_kernels::@NAME@
)";

}  // namespace

FamilySources generate_gqa_decode(const nlohmann::ordered_json& definition, const nlohmann::ordered_json& task) {
  static_cast<void>(definition);
  FamilySources out;
  out.family = "gqa_paged_decode";
  const nlohmann::ordered_json& inputs = task["inputs"];
  for (const char* name : {"q", "k_cache", "v_cache", "kv_indptr", "kv_indices"})
    if (!inputs.contains(name)) {
      out.notes.push_back(std::string("no input ") + name + ": no starting kernel generated");
      return out;
    }
  if (!task.contains("scalars") || !task["scalars"].contains("sm_scale")) {
    out.notes.push_back("no sm_scale scalar: no starting kernel generated");
    return out;
  }
  const bool last_page = inputs.contains("kv_last_page_len");
  const std::int64_t qo = const_axis(task, "num_qo_heads");
  const std::int64_t kv = const_axis(task, "num_kv_heads");
  const std::int64_t page_size = const_axis(task, "page_size");
  std::map<std::string, std::string> values = {{"@NAME@", task["name"].get<std::string>()},
                                               {"@QO@", std::to_string(qo)},
                                               {"@KV@", std::to_string(kv)},
                                               {"@GROUP@", std::to_string(qo / kv)},
                                               {"@D@", std::to_string(const_axis(task, "head_dim"))},
                                               {"@PS@", std::to_string(page_size)},
                                               {"@LAST_PAGE_LEN@", last_page ? "kv_last_page_len" : "nullptr"}};
  values["@SIGNATURE@"] = entry_parameters(task);
  values["@COMMON@"] = fill(k_gqa_common, values);
  out.files["kernel.cu"] = fill(k_gqa_kernel, values);
  out.files["reference.cu"] = fill(k_gqa_reference, values);
  out.files["cpu_reference.hpp"] = fill(k_gqa_cpu_hpp, values);
  out.files["cpu_reference.cpp"] = fill(k_gqa_cpu_cpp, values);
  out.files["hooks.cpp"] = fill(gqa_decode_hooks(), values);
  out.generated = true;
  out.cpu_reference = "yes";
  out.task_fields["hooks"] = "hooks.cpp";
  out.input_generators["kv_indptr"] = "hook:ragged_kv_indptr";
  out.input_generators["kv_indices"] = "hook:page_indices";
  if (last_page)
    out.input_generators["kv_last_page_len"] = {{"kind", "uniform_int"}, {"low", "1"}, {"high", "page_size + 1"}};
  // bf16 output from an fp32 softmax; the lse from fp32 logits of bf16 inputs is good to about 1e-5 relative.
  out.task_fields["tolerances"] = {{"output", {{"rtol", 2e-2}, {"atol", 0}, {"atol_rms", 2e-2}, {"normwise", 8e-3}}},
                                   {"lse", {{"rtol", 1e-3}, {"atol", 1e-3}, {"atol_rms", 0}, {"normwise", 1e-3}}}};
  // Per token and query head: 2 * head_dim for the logit, 2 * head_dim for the value row (full pages counted).
  out.task_fields["flops"] = "4 * num_qo_heads * num_kv_indices * page_size * head_dim";
  out.task_fields["bytes"] =
      "4 * num_kv_indices * page_size * num_kv_heads * head_dim + 4 * num_kv_indices + 4 * (batch_size + 1) + "
      "4 * batch_size * num_qo_heads * head_dim + 4 * batch_size * num_qo_heads";
  out.cpu_limit = out.task_fields["flops"].get<std::string>();
  // FlashInfer's CUDA-core decode is instantiated for these group sizes (DISPATCH_GQA_GROUP_SIZE); others go
  // through its tensor-core prefill path, which this baseline does not call.
  const std::int64_t group = qo / kv;
  if (group == 1 || group == 2 || group == 3 || group == 4 || group == 6 || group == 8 || group == 16) {
    out.vendor = "flashinfer";
    out.files["baseline_flashinfer.cu"] = gqa_decode_flashinfer_baseline(task);
    out.task_fields["vendor_baseline"] = {{"kind", "flashinfer"}, {"file", "baseline_flashinfer.cu"}};
  } else {
    out.vendor = "group size " + std::to_string(group) +
                 ": FlashInfer's CUDA-core decode dispatches group sizes 1, 2, 3, 4, 6, 8 and 16 only, and its "
                 "tensor-core (prefill-kernel) decode path is not written as a baseline yet";
    out.task_fields["vendor_baseline"] = {{"kind", "flashinfer"}, {"unavailable", out.vendor}};
  }
  // Ours, for definitions published without workloads: decode batches of 1 to 64 sequences, ragged lengths.
  const std::int64_t tokens_per_page = page_size;
  for (const auto& [batch, tokens] : std::vector<std::pair<int, std::int64_t>>{{1, 4096}, {16, 32768}, {64, 65536}}) {
    const std::int64_t pages = tokens / tokens_per_page;
    out.our_workloads.push_back(
        {{"name", "b" + std::to_string(batch) + "_kv" + std::to_string(tokens)},
         {"origin", "ours"},
         {"axes", {{"batch_size", batch}, {"num_pages", pages + 64}, {"num_kv_indices", pages}}}});
  }
  out.task_fields["deterministic"] = true;
  out.scalar_defaults["sm_scale"] = "1 / sqrt(head_dim)";
  out.notes.push_back("no params: the starting kernel has one thread per head-dim element and no other knob");
  return out;
}

}  // namespace evoteam::trace_detail
