// FlashInfer's batch decode as the vendor baseline of the imported GQA paged decode tasks, and their input hooks.
// Both follow the hand-written task gqa_paged_decode_h32_kv8_d128_ps1, with the definition's constants.
#include <evoteam/core/error.hpp>

#include "trace/trace_families.hpp"

namespace evoteam::trace_detail {
namespace {

const char* const k_gqa_baseline =
    R"CU(// Vendor comparison for @NAME@ (imported): FlashInfer's batch decode over a paged KV cache
// (attention/decode.cuh, the CUDA-core kernel that BatchDecodeWithPagedKVCacheWrapper runs for group size @GROUP@),
// built from the headers of the pinned flashinfer-python wheel and called through the same harness as candidates.
//
// Trusted code, not a candidate. FlashInfer splits each batch into work items on the host once per batch shape
// (DecodePlan reads kv_indptr on the host and writes the schedule into device workspaces). That planning is not
// part of a decode step, so it happens in @NAME@_plan, which the harness calls for every input set before any
// timed call; @NAME@ then only launches. A call whose inputs were never planned fails rather than planning inside
// the timed region.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <vector>

#include <flashinfer/attention/decode.cuh>
#include <flashinfer/attention/default_decode_params.cuh>
#include <flashinfer/attention/scheduler.cuh>
#include <flashinfer/attention/variants.cuh>

// A named namespace: kernels instantiated with these types need a name nvcc's host stubs can refer to.
namespace @NAME@_flashinfer {

using namespace flashinfer;

constexpr std::uint32_t k_qo_heads = @QO@;
constexpr std::uint32_t k_kv_heads = @KV@;
constexpr std::uint32_t k_head_dim = @D@;
constexpr std::uint32_t k_page_size = @PS@;
constexpr std::uint32_t k_group_size = k_qo_heads / k_kv_heads;

using DType = __nv_bfloat16;
using Params = BatchDecodeParams<DType, DType, DType, std::int32_t>;
using Variant = DefaultAttention</*custom_mask=*/false, /*sliding_window=*/false, /*soft_cap=*/false, /*alibi=*/false>;

// One planned batch: the schedule FlashInfer wrote and the workspaces it points into (owned here).
struct PlannedBatch {
  DecodePlanInfo info;
  std::int64_t batch_size = 0;
  void* float_workspace = nullptr;
  void* int_workspace = nullptr;
  void* pinned_workspace = nullptr;
  std::int32_t* last_page_len = nullptr;  // full last pages, for a task without kv_last_page_len
  ~PlannedBatch() {
    cudaFree(float_workspace);
    cudaFree(int_workspace);
    cudaFreeHost(pinned_workspace);
    cudaFree(last_page_len);
  }
};

// Plans by the address of their kv_indptr: every input set the harness uploads has its own.
std::map<const std::int32_t*, PlannedBatch>& plans() {
  static std::map<const std::int32_t*, PlannedBatch> by_indptr;
  return by_indptr;
}

auto work_estimation() {
  return BatchDecodeWithPagedKVCacheWorkEstimationDispatched<k_group_size, k_head_dim, PosEncodingMode::kNone, Variant,
                                                             Params>;
}

cudaError_t plan_batch(const std::int32_t* kv_indptr, std::int64_t batch_size, cudaStream_t stream, PlannedBatch& batch) {
  std::vector<std::int32_t> indptr_h(static_cast<std::size_t>(batch_size) + 1);
  cudaError_t status = cudaMemcpyAsync(indptr_h.data(), kv_indptr, indptr_h.size() * sizeof(std::int32_t),
                                       cudaMemcpyDeviceToHost, stream);
  if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
  if (status != cudaSuccess) return status;
  const auto n = static_cast<std::uint32_t>(batch_size);
  std::size_t float_bytes = 0, int_bytes = 0;
  status = DecodePlanWorkspaceSize<k_head_dim, PosEncodingMode::kNone, Variant, Params>(
      float_bytes, int_bytes, indptr_h.data(), n, k_qo_heads, k_page_size, /*enable_cuda_graph=*/false, stream,
      work_estimation());
  if (status != cudaSuccess) return status;
  float_bytes = std::max<std::size_t>(float_bytes, 256);
  int_bytes = std::max<std::size_t>(int_bytes, 256);
  batch.batch_size = batch_size;
  if ((status = cudaMalloc(&batch.float_workspace, float_bytes)) != cudaSuccess) return status;
  if ((status = cudaMalloc(&batch.int_workspace, int_bytes)) != cudaSuccess) return status;
  if ((status = cudaMallocHost(&batch.pinned_workspace, int_bytes)) != cudaSuccess) return status;
  if ((status = cudaMalloc(&batch.last_page_len, std::max<std::size_t>(n, 1) * sizeof(std::int32_t))) != cudaSuccess)
    return status;
  const std::vector<std::int32_t> ones(std::max<std::uint32_t>(n, 1), static_cast<std::int32_t>(k_page_size));
  status = cudaMemcpy(batch.last_page_len, ones.data(), ones.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice);
  if (status != cudaSuccess) return status;
  status = DecodePlan<k_head_dim, PosEncodingMode::kNone, Variant, Params>(
      batch.float_workspace, float_bytes, batch.int_workspace, batch.pinned_workspace, int_bytes, batch.info,
      indptr_h.data(), n, k_qo_heads, k_page_size, /*enable_cuda_graph=*/false, stream, work_estimation());
  if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
  return status;
}

}  // namespace @NAME@_flashinfer

using namespace @NAME@_flashinfer;

extern "C" cudaError_t @NAME@_plan(@SIGNATURE@, cudaStream_t stream) {
  @UNUSED_PLAN@
  plans().erase(kv_indptr);
  if (batch_size <= 0) return cudaSuccess;
  PlannedBatch& batch = plans()[kv_indptr];
  const cudaError_t status = plan_batch(kv_indptr, batch_size, stream, batch);
  if (status != cudaSuccess) plans().erase(kv_indptr);
  return status;
}

extern "C" cudaError_t @NAME@(@SIGNATURE@, cudaStream_t stream) {
  static_cast<void>(num_pages);
  static_cast<void>(num_kv_indices);
  if (batch_size <= 0) return cudaSuccess;
  const auto found = plans().find(kv_indptr);
  if (found == plans().end() || found->second.batch_size != batch_size) return cudaErrorNotReady;  // never planned
  const PlannedBatch& batch = found->second;

  // Layout NHD: a page is [page_size][num_kv_heads][head_dim], so the strides of one page, one token, one head.
  const std::int64_t strides[3] = {static_cast<std::int64_t>(k_page_size * k_kv_heads * k_head_dim),
                                   static_cast<std::int64_t>(k_kv_heads * k_head_dim), k_head_dim};
  auto* indptr = const_cast<std::int32_t*>(kv_indptr);
  auto* indices = const_cast<std::int32_t*>(kv_indices);
  Params params;
  params.paged_kv = paged_kv_t<DType, std::int32_t>(k_kv_heads, k_page_size, k_head_dim, static_cast<std::uint32_t>(batch_size),
                                                    QKVLayout::kNHD, const_cast<DType*>(k_cache),
                                                    const_cast<DType*>(v_cache), strides, indices, indptr,
                                                    @LAST_PAGE_LEN@);
  params.q = const_cast<DType*>(q);
  params.o = output;
  params.lse = lse;
  params.num_qo_heads = k_qo_heads;
  params.q_stride_n = k_qo_heads * k_head_dim;
  params.q_stride_h = k_head_dim;
  params.window_left = -1;
  params.logits_soft_cap = 0.0f;
  params.sm_scale = sm_scale;
  params.rope_rcp_scale = 1.0f;
  params.rope_rcp_theta = 1.0f / 1e4f;
  const DecodePlanInfo& info = batch.info;
  params.request_indices = GetPtrFromBaseOffset<std::int32_t>(batch.int_workspace, info.request_indices_offset);
  params.kv_tile_indices = GetPtrFromBaseOffset<std::int32_t>(batch.int_workspace, info.kv_tile_indices_offset);
  params.o_indptr = GetPtrFromBaseOffset<std::int32_t>(batch.int_workspace, info.o_indptr_offset);
  params.kv_chunk_size_ptr = GetPtrFromBaseOffset<std::int32_t>(batch.int_workspace, info.kv_chunk_size_ptr_offset);
  params.padded_batch_size = info.padded_batch_size;
  DType* tmp_v = nullptr;
  float* tmp_s = nullptr;
  if (info.split_kv) {
    tmp_v = GetPtrFromBaseOffset<DType>(batch.float_workspace, info.v_offset);
    tmp_s = GetPtrFromBaseOffset<float>(batch.float_workspace, info.s_offset);
  }
  return BatchDecodeWithPagedKVCacheDispatched<k_head_dim, PosEncodingMode::kNone, Variant>(params, tmp_v, tmp_s,
                                                                                          /*enable_pdl=*/false, stream);
}
)CU";

const char* const k_gqa_hooks = R"CU(// Input hooks of @NAME@ (imported): the page table of a ragged decode batch.
//   ragged_kv_indptr: kv_indptr [batch_size + 1], starting at 0 and ending at num_kv_indices; sequence lengths (in
//                     pages) vary by up to 8x within a batch (seed-dependent); every sequence gets at least one
//                     page when num_kv_indices >= batch_size, otherwise some sequences are empty.
//   page_indices:     kv_indices [num_kv_indices], distinct pages drawn from [0, num_pages) in random order when
//                     there are enough pages (else drawn with repetition), so no sequence sits contiguously.
#include <cstdint>
#include <utility>
#include <vector>

#include "harness_abi.h"

namespace {

// splitmix64: a small, well-mixed generator; enough for index arrays.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : m_state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform01() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
  std::int64_t below(std::int64_t n) {
    return n <= 1 ? 0 : static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(n));
  }

 private:
  std::uint64_t m_state;
};

}  // namespace

extern "C" void evoteam_hook_ragged_kv_indptr(void* data, int64_t count, const char* const* axis_names,
                                              const int64_t* axis_values, int axis_count, uint64_t seed) {
  auto* indptr = static_cast<std::int32_t*>(data);
  if (count <= 0) return;
  const std::int64_t batch = count - 1;
  std::int64_t tokens = evoteam_axis_value(axis_names, axis_values, axis_count, "num_kv_indices");
  if (tokens < 0) tokens = 0;
  Rng rng(seed ^ 0x6B76696E64707472ull);
  std::vector<double> weights(static_cast<std::size_t>(batch));
  double total = 0;
  for (double& w : weights) {
    w = 0.25 + 1.75 * rng.uniform01();
    total += w;
  }
  // One token each first (when there are enough), the rest in proportion to the weights, the rounding
  // remainder (fewer than batch tokens) one at a time to random sequences.
  const std::int64_t base = tokens >= batch ? 1 : 0;
  const std::int64_t rest = tokens - base * batch;
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(batch));
  std::int64_t assigned = 0;
  for (std::int64_t b = 0; b < batch; ++b) {
    const auto share =
        static_cast<std::int64_t>(static_cast<double>(rest) * weights[static_cast<std::size_t>(b)] / total);
    lengths[static_cast<std::size_t>(b)] = base + share;
    assigned += base + share;
  }
  for (; assigned < tokens && batch > 0; ++assigned) ++lengths[static_cast<std::size_t>(rng.below(batch))];
  // Floating-point shares can in principle overshoot by a token; take it back from the longest sequences.
  for (std::int64_t b = 0; assigned > tokens && b < batch; ++b)
    while (assigned > tokens && lengths[static_cast<std::size_t>(b)] > base) {
      --lengths[static_cast<std::size_t>(b)];
      --assigned;
    }
  indptr[0] = 0;
  std::int64_t running = 0;
  for (std::int64_t b = 0; b < batch; ++b) {
    running += lengths[static_cast<std::size_t>(b)];
    indptr[b + 1] = static_cast<std::int32_t>(running);
  }
}

extern "C" void evoteam_hook_page_indices(void* data, int64_t count, const char* const* axis_names,
                                            const int64_t* axis_values, int axis_count, uint64_t seed) {
  auto* indices = static_cast<std::int32_t*>(data);
  if (count <= 0) return;
  std::int64_t pages = evoteam_axis_value(axis_names, axis_values, axis_count, "num_pages");
  if (pages < 1) pages = 1;
  Rng rng(seed ^ 0x7061676573736574ull);
  if (pages < count) {
    // The definition does not promise num_pages >= num_kv_indices: pages repeat, in bounds.
    for (int64_t i = 0; i < count; ++i) indices[i] = static_cast<std::int32_t>(rng.below(pages));
    return;
  }
  // The first `count` steps of a Fisher-Yates shuffle of all pages.
  std::vector<std::int32_t> pool(static_cast<std::size_t>(pages));
  for (std::int64_t p = 0; p < pages; ++p) pool[static_cast<std::size_t>(p)] = static_cast<std::int32_t>(p);
  for (int64_t i = 0; i < count; ++i) {
    const std::int64_t j = i + rng.below(pages - i);
    std::swap(pool[static_cast<std::size_t>(i)], pool[static_cast<std::size_t>(j)]);
    indices[i] = pool[static_cast<std::size_t>(i)];
  }
}
)CU";

}  // namespace

std::string gqa_decode_hooks() { return k_gqa_hooks; }

std::string gqa_decode_flashinfer_baseline(const nlohmann::ordered_json& task) {
  const std::int64_t qo = const_axis(task, "num_qo_heads");
  const std::int64_t kv = const_axis(task, "num_kv_heads");
  const bool last_page = task["inputs"].contains("kv_last_page_len");
  // The plan reads only kv_indptr and batch_size; every other argument is named once so that none is unused.
  std::string unused;
  for (const auto& arg : task["entry"]["args"]) {
    const std::string name = arg.get<std::string>();
    if (name == "kv_indptr" || name == "batch_size") continue;
    unused += std::string(unused.empty() ? "" : "\n  ") + "static_cast<void>(" + name + ");";
  }
  return fill(k_gqa_baseline,
              {{"@NAME@", task["name"].get<std::string>()},
               {"@QO@", std::to_string(qo)},
               {"@KV@", std::to_string(kv)},
               {"@GROUP@", std::to_string(qo / kv)},
               {"@D@", std::to_string(const_axis(task, "head_dim"))},
               {"@PS@", std::to_string(const_axis(task, "page_size"))},
               {"@SIGNATURE@", entry_parameters(task)},
               {"@UNUSED_PLAN@", unused},
               {"@LAST_PAGE_LEN@", last_page ? "const_cast<std::int32_t*>(kv_last_page_len)" : "batch.last_page_len"}});
}

}  // namespace evoteam::trace_detail
