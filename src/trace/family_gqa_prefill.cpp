// Causal GQA prefill over a ragged KV (k, v with kv_indptr in tokens) or a paged KV cache (kv_indptr in pages,
// kv_indices, kv_last_page_len): one block per (query token, query head), one thread per head-dim element, an
// online softmax over the keys the causal mask leaves visible, in fp32 (double in the references). Query token i
// of a sequence with q_len queries and kv_len keys sees keys [0, i + 1 + kv_len - q_len); a row that sees none is
// zero with lse -inf, as reference.py leaves rows it never writes.
#include <utility>
#include <vector>

#include <evoteam/core/error.hpp>

#include "trace/trace_families.hpp"

namespace evoteam::trace_detail {
namespace {

const char* const k_prefill_common = R"(constexpr int k_qo_heads = @QO@;
constexpr int k_kv_heads = @KV@;
constexpr int k_head_dim = @D@;
constexpr int k_group = k_qo_heads / k_kv_heads;
constexpr int k_page_size = @PS@;  // 0: a ragged (unpaged) KV
constexpr int k_page_divisor = k_page_size > 0 ? k_page_size : 1;  // the paged branch's, never 0

static_assert(k_head_dim % 32 == 0 && k_head_dim <= 1024, "one thread per head-dim element, whole warps");

struct Kv {
  const std::int32_t* kv_indptr;
  const std::int32_t* kv_indices;     // paged only
  const std::int32_t* last_page_len;  // paged with kv_last_page_len only; else every page is full
};

// The sequence holding query token `token` (qo_indptr is non-decreasing from 0).
__host__ __device__ inline int sequence_of(const std::int32_t* qo_indptr, int batch, std::int64_t token) {
  int low = 0, high = batch - 1;
  while (low < high) {
    const int mid = (low + high + 1) / 2;
    if (qo_indptr[mid] <= token) low = mid; else high = mid - 1;
  }
  return low;
}
__host__ __device__ inline std::int64_t kv_tokens(const Kv& kv, int b) {
  const std::int64_t span = kv.kv_indptr[b + 1] - kv.kv_indptr[b];
  if (k_page_size == 0 || span <= 0) return span > 0 ? span : 0;
  return (span - 1) * k_page_size + (kv.last_page_len != nullptr ? kv.last_page_len[b] : k_page_size);
}
// Element offset of key/value token t of sequence b, at KV head 0.
__host__ __device__ inline std::int64_t kv_row(const Kv& kv, int b, std::int64_t t) {
  if (k_page_size == 0) return (kv.kv_indptr[b] + t) * k_kv_heads * k_head_dim;
  const std::int64_t page = kv.kv_indices[kv.kv_indptr[b] + t / k_page_divisor];
  return ((page * k_page_divisor + t % k_page_divisor) * k_kv_heads) * k_head_dim;
}
)";

const char* const k_prefill_kernel =
    R"(// Starting kernel for @NAME@ (imported): causal GQA prefill, one block per (query token, query head), one
// thread per head-dim element; for each visible key the block reduces q.k (warp shuffles, then shared memory) and
// updates an online softmax in fp32: the straightforward translation of reference.py. Left to the team: tiles of
// queries and keys in shared memory, query heads of a group sharing K/V, tensor cores, a work list over sequences.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace {

@COMMON@
constexpr int k_warps = k_head_dim / 32;

__global__ void __launch_bounds__(k_head_dim)
    prefill_naive(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                  const __nv_bfloat16* __restrict__ v, const std::int32_t* __restrict__ qo_indptr, int batch, Kv kv,
                  float sm_scale, __nv_bfloat16* __restrict__ output, float* __restrict__ lse) {
  __shared__ float warp_sums[k_warps];
  const std::int64_t token = blockIdx.x;
  const int h = static_cast<int>(blockIdx.y);
  const int d = static_cast<int>(threadIdx.x);
  const int b = sequence_of(qo_indptr, batch, token);
  const std::int64_t q_len = qo_indptr[b + 1] - qo_indptr[b];
  const std::int64_t kv_len = kv_tokens(kv, b);
  std::int64_t visible = token - qo_indptr[b] + 1 + kv_len - q_len;
  visible = visible < 0 ? 0 : visible > kv_len ? kv_len : visible;
  const std::int64_t head = static_cast<std::int64_t>(h / k_group) * k_head_dim + d;
  const float q_d = __bfloat162float(q[(token * k_qo_heads + h) * k_head_dim + d]);
  float running_max = -INFINITY, running_sum = 0.0f, acc = 0.0f;
  for (std::int64_t t = 0; t < visible; ++t) {
    const std::int64_t row = kv_row(kv, b, t) + head;
    float part = q_d * __bfloat162float(k[row]);
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
    acc = acc * rescale + weight * __bfloat162float(v[row]);
    running_max = new_max;
  }
  output[(token * k_qo_heads + h) * k_head_dim + d] = __float2bfloat16_rn(visible > 0 ? acc / running_sum : 0.0f);
  if (d == 0)
    lse[token * k_qo_heads + h] = visible > 0 ? (running_max + logf(running_sum)) * 1.4426950408889634f : -INFINITY;
}

}  // namespace

extern "C" cudaError_t @NAME@(@SIGNATURE@, cudaStream_t stream) {
  @UNUSED@
  if (total_q <= 0 || len_indptr < 2) return cudaSuccess;
  if (total_q > 0x7fffffff) return cudaErrorInvalidValue;
  const Kv kv{kv_indptr, @KV_INDICES@, @LAST_PAGE_LEN@};
  prefill_naive<<<dim3(static_cast<unsigned>(total_q), k_qo_heads), k_head_dim, 0, stream>>>(
      q, @K@, @V@, qo_indptr, static_cast<int>(len_indptr - 1), kv, sm_scale, output, lse);
  return cudaGetLastError();
}
)";

const char* const k_prefill_reference =
    R"(// Trusted reference for @NAME@ (imported): one thread per (query token, query head), two passes over the
// visible keys in double (the maximum logit, then the exponentials and the weighted value rows), one rounding of
// each output element to bf16, the lse in base 2; rows that see no key are zero with lse -inf.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace {

@COMMON@

__global__ void prefill_reference(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                                  const __nv_bfloat16* __restrict__ v, const std::int32_t* __restrict__ qo_indptr,
                                  int batch, Kv kv, float sm_scale, __nv_bfloat16* __restrict__ output,
                                  float* __restrict__ lse, std::int64_t total_q) {
  const std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= total_q * k_qo_heads) return;
  const std::int64_t token = item / k_qo_heads;
  const int h = static_cast<int>(item % k_qo_heads);
  const int b = sequence_of(qo_indptr, batch, token);
  const std::int64_t q_len = qo_indptr[b + 1] - qo_indptr[b];
  const std::int64_t kv_len = kv_tokens(kv, b);
  std::int64_t visible = token - qo_indptr[b] + 1 + kv_len - q_len;
  visible = visible < 0 ? 0 : visible > kv_len ? kv_len : visible;
  const __nv_bfloat16* q_row = q + item * k_head_dim;
  const std::int64_t head = static_cast<std::int64_t>(h / k_group) * k_head_dim;
  __nv_bfloat16* out = output + item * k_head_dim;
  if (visible == 0) {
    for (int d = 0; d < k_head_dim; ++d) out[d] = __float2bfloat16(0.0f);
    lse[item] = -INFINITY;
    return;
  }
  auto logit = [&](std::int64_t t) {
    const std::int64_t row = kv_row(kv, b, t) + head;
    double dot = 0.0;
    for (int d = 0; d < k_head_dim; ++d)
      dot += static_cast<double>(__bfloat162float(q_row[d])) * static_cast<double>(__bfloat162float(k[row + d]));
    return dot * static_cast<double>(sm_scale);
  };
  double max_logit = -INFINITY;
  for (std::int64_t t = 0; t < visible; ++t) max_logit = fmax(max_logit, logit(t));
  double acc[k_head_dim];
  for (int d = 0; d < k_head_dim; ++d) acc[d] = 0.0;
  double sum = 0.0;
  for (std::int64_t t = 0; t < visible; ++t) {
    const double weight = exp(logit(t) - max_logit);
    sum += weight;
    const std::int64_t row = kv_row(kv, b, t) + head;
    for (int d = 0; d < k_head_dim; ++d) acc[d] += weight * static_cast<double>(__bfloat162float(v[row + d]));
  }
  for (int d = 0; d < k_head_dim; ++d) out[d] = __double2bfloat16(acc[d] / sum);
  lse[item] = static_cast<float>((max_logit + log(sum)) / log(2.0));
}

}  // namespace

extern "C" cudaError_t @NAME@(@SIGNATURE@, cudaStream_t stream) {
  @UNUSED@
  if (total_q <= 0 || len_indptr < 2) return cudaSuccess;
  const Kv kv{kv_indptr, @KV_INDICES@, @LAST_PAGE_LEN@};
  const std::int64_t items = total_q * k_qo_heads;
  prefill_reference<<<static_cast<unsigned>((items + 63) / 64), 64, 0, stream>>>(
      q, @K@, @V@, qo_indptr, static_cast<int>(len_indptr - 1), kv, sm_scale, output, lse, total_q);
  return cudaGetLastError();
}
)";

const char* const k_prefill_hooks =
    R"(// Input hooks of @NAME@ (imported): the offsets of a ragged causal prefill batch.
//   ragged_qo_indptr: qo_indptr [len_indptr], from 0 to total_q, sequence lengths varying up to 8x.
//   ragged_kv_indptr: kv_indptr [len_indptr], from 0 to @KV_TOTAL@, split with the same weights, so each
//                     sequence has about as many keys as queries or more when the totals allow (causal prefill
//                     over a cache: every query sees at least itself).
//   page_indices:     kv_indices, distinct pages from [0, num_pages) in random order when there are enough.
// The weights come from the workload's axes, not the seed: the two offset arrays must agree with each other.
#include <cstdint>
#include <utility>
#include <vector>

#include "harness_abi.h"

namespace {

class SplitRng {
 public:
  explicit SplitRng(std::uint64_t seed) : m_state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform01() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }

 private:
  std::uint64_t m_state;
};

// `total` split over `batch` parts in proportion to weights drawn from `key`, each part at least `floor` when
// the total allows; written as offsets [batch + 1] from 0.
void split_offsets(std::int32_t* offsets, std::int64_t batch, std::int64_t total, std::int64_t floor,
                   std::uint64_t key) {
  SplitRng rng(key);
  std::vector<double> weights(static_cast<std::size_t>(batch));
  double sum = 0;
  for (double& w : weights) sum += (w = 0.25 + 1.75 * rng.uniform01());
  const std::int64_t base = total >= floor * batch ? floor : 0;
  const std::int64_t rest = total - base * batch;
  std::int64_t assigned = 0;
  offsets[0] = 0;
  for (std::int64_t b = 0; b < batch; ++b) {
    std::int64_t share = base + static_cast<std::int64_t>(static_cast<double>(rest) * weights[static_cast<std::size_t>(b)] / sum);
    if (b == batch - 1 || assigned + share > total) share = total - assigned;
    assigned += share;
    offsets[b + 1] = static_cast<std::int32_t>(assigned);
  }
}

}  // namespace

extern "C" void evoteam_hook_ragged_qo_indptr(void* data, int64_t count, const char* const* axis_names,
                                              const int64_t* axis_values, int axis_count, uint64_t seed) {
  (void)seed;
  if (count < 2) return;
  const std::int64_t total = evoteam_axis_value(axis_names, axis_values, axis_count, "total_q");
  split_offsets(static_cast<std::int32_t*>(data), count - 1, total < 0 ? 0 : total, 1,
                0x716F5F696E647074ull ^ static_cast<std::uint64_t>(count));
}

extern "C" void evoteam_hook_ragged_kv_indptr(void* data, int64_t count, const char* const* axis_names,
                                              const int64_t* axis_values, int axis_count, uint64_t seed) {
  (void)seed;
  if (count < 2) return;
  const std::int64_t total = evoteam_axis_value(axis_names, axis_values, axis_count, "@KV_TOTAL@");
  split_offsets(static_cast<std::int32_t*>(data), count - 1, total < 0 ? 0 : total, 1,
                0x716F5F696E647074ull ^ static_cast<std::uint64_t>(count));
}

extern "C" void evoteam_hook_page_indices(void* data, int64_t count, const char* const* axis_names,
                                         const int64_t* axis_values, int axis_count, uint64_t seed) {
  auto* indices = static_cast<std::int32_t*>(data);
  if (count <= 0) return;
  std::int64_t pages = evoteam_axis_value(axis_names, axis_values, axis_count, "num_pages");
  if (pages < 1) pages = 1;
  SplitRng rng(seed ^ 0x7061676573736574ull);
  if (pages < count) {
    for (int64_t i = 0; i < count; ++i) indices[i] = static_cast<std::int32_t>(rng.next() % static_cast<std::uint64_t>(pages));
    return;
  }
  std::vector<std::int32_t> pool(static_cast<std::size_t>(pages));
  for (std::int64_t p = 0; p < pages; ++p) pool[static_cast<std::size_t>(p)] = static_cast<std::int32_t>(p);
  for (int64_t i = 0; i < count; ++i) {
    const std::int64_t j = i + static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(pages - i));
    std::swap(pool[static_cast<std::size_t>(i)], pool[static_cast<std::size_t>(j)]);
    indices[i] = pool[static_cast<std::size_t>(i)];
  }
}
)";

}  // namespace

FamilySources generate_gqa_prefill(const nlohmann::ordered_json& definition, const nlohmann::ordered_json& task) {
  static_cast<void>(definition);
  FamilySources out;
  out.family = task["inputs"].contains("k_cache") ? "gqa_paged_prefill" : "gqa_ragged_prefill";
  const nlohmann::ordered_json& inputs = task["inputs"];
  const bool paged = inputs.contains("k_cache");
  const std::vector<std::string> needed =
      paged ? std::vector<std::string>{"q", "k_cache", "v_cache", "qo_indptr", "kv_indptr", "kv_indices"}
            : std::vector<std::string>{"q", "k", "v", "qo_indptr", "kv_indptr"};
  for (const std::string& name : needed)
    if (!inputs.contains(name)) {
      out.notes.push_back("no input " + name + ": no starting kernel generated");
      return out;
    }
  if (!task.contains("scalars") || !task["scalars"].contains("sm_scale") || !task["axes"].contains("len_indptr") ||
      !task["axes"].contains("total_q")) {
    out.notes.push_back("no sm_scale scalar or no len_indptr / total_q axis: no starting kernel generated");
    return out;
  }
  std::string unused;
  for (const auto& arg : task["entry"]["args"]) {
    const std::string name = arg.get<std::string>();
    if (name == "total_q" || name == "len_indptr" || inputs.contains(name) || task["outputs"].contains(name) ||
        name == "sm_scale")
      continue;
    unused += (unused.empty() ? "" : "\n  ") + std::string("static_cast<void>(") + name + ");";
  }
  std::map<std::string, std::string> values = {
      {"@NAME@", task["name"].get<std::string>()},
      {"@QO@", std::to_string(const_axis(task, "num_qo_heads"))},
      {"@GROUP@", std::to_string(const_axis(task, "num_qo_heads") / const_axis(task, "num_kv_heads"))},
      {"@KV@", std::to_string(const_axis(task, "num_kv_heads"))},
      {"@D@", std::to_string(const_axis(task, "head_dim"))},
      {"@PS@", paged ? std::to_string(const_axis(task, "page_size")) : "0"},
      {"@K@", paged ? "k_cache" : "k"},
      {"@V@", paged ? "v_cache" : "v"},
      {"@KV_INDICES@", paged ? "kv_indices" : "nullptr"},
      {"@LAST_PAGE_LEN@", inputs.contains("kv_last_page_len") ? "kv_last_page_len" : "nullptr"},
      {"@KV_TOTAL@", paged ? "num_kv_indices" : "total_kv"},
      {"@UNUSED@", unused},
      {"@SIGNATURE@", entry_parameters(task)}};
  values["@COMMON@"] = fill(k_prefill_common, values);
  out.files["kernel.cu"] = fill(k_prefill_kernel, values);
  out.files["reference.cu"] = fill(k_prefill_reference, values);
  out.files["hooks.cpp"] = fill(k_prefill_hooks, values);
  out.files["cpu_reference.hpp"] = fill(gqa_prefill_cpu_reference_hpp(), values);
  out.files["cpu_reference.cpp"] = fill(gqa_prefill_cpu_reference_cpp(), values);
  out.generated = true;
  out.cpu_reference = "yes";
  out.task_fields["hooks"] = "hooks.cpp";
  out.input_generators["qo_indptr"] = "hook:ragged_qo_indptr";
  out.input_generators["kv_indptr"] = "hook:ragged_kv_indptr";
  if (paged) out.input_generators["kv_indices"] = "hook:page_indices";
  if (inputs.contains("kv_last_page_len")) {
    out.input_generators["kv_last_page_len"] = {{"kind", "uniform_int"}, {"low", "1"}, {"high", "page_size + 1"}};
  }
  out.task_fields["tolerances"] = {{"output", {{"rtol", 2e-2}, {"atol", 0}, {"atol_rms", 2e-2}, {"normwise", 8e-3}}},
                                   {"lse", {{"rtol", 1e-3}, {"atol", 1e-3}, {"atol_rms", 0}, {"normwise", 1e-3}}}};
  // Causal, sequences of even length: each query sees about half of its sequence's keys beyond the cached ones;
  // estimated as every query seeing its sequence's mean key count (4 * head_dim flops per visible key).
  const std::string keys = paged ? "num_kv_indices * page_size" : "total_kv";
  out.task_fields["flops"] = "4 * num_qo_heads * head_dim * total_q * " + keys + " / max(len_indptr - 1, 1)";
  out.task_fields["bytes"] = "2 * 2 * " + keys +
                             " * num_kv_heads * head_dim + 2 * 2 * total_q * num_qo_heads * "
                             "head_dim + 4 * total_q * num_qo_heads + 8 * len_indptr";
  out.cpu_limit = out.task_fields["flops"].get<std::string>();
  out.vendor =
      "not written yet: FlashInfer's batch prefill (attention/prefill.cuh) has a C++ entry point, but its "
      "planner-driven baseline is not generated for this family yet";
  out.task_fields["vendor_baseline"] = {{"kind", "flashinfer"}, {"unavailable", out.vendor}};
  out.task_fields["deterministic"] = true;
  out.scalar_defaults["sm_scale"] = "1 / sqrt(head_dim)";
  out.notes.push_back("no params: the starting kernel has one thread per head-dim element and no other knob");
  out.notes.push_back(
      "rows whose causal window holds no key are zero with lse -inf (reference.py leaves such rows "
      "as it initialised them only for empty sequences; its softmax would give NaN)");
  // Ours, for definitions published without workloads.
  for (const auto& [sequences, queries] : std::vector<std::pair<int, int>>{{1, 1024}, {8, 4096}}) {
    nlohmann::ordered_json axes = {{"len_indptr", sequences + 1}, {"total_q", queries}};
    if (paged) {
      const std::int64_t page_size = const_axis(task, "page_size");
      const std::int64_t pages = (2 * queries + page_size - 1) / page_size + sequences;
      axes["num_kv_indices"] = pages;
      axes["num_pages"] = pages + 64;
      axes["batch_size"] = sequences;
    } else {
      axes["total_kv"] = 2 * queries;
    }
    nlohmann::ordered_json workload = {{"name", "s" + std::to_string(sequences) + "_q" + std::to_string(queries)},
                                       {"origin", "ours"},
                                       {"axes", nlohmann::ordered_json::object()}};
    for (const auto& [axis, value] : axes.items())
      if (task["axes"].contains(axis) && task["axes"][axis]["type"] == "var") workload["axes"][axis] = value;
    out.our_workloads.push_back(workload);
  }
  return out;
}

}  // namespace evoteam::trace_detail
