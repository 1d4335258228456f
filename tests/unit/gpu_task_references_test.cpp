// Each CUDA task's trusted reference (reference.cu, built by the real CUDA backend) against the task's
// double-precision CPU reference on small shapes, with the task's tolerances: the GPU suite's check that the two
// references state the same math. The host half runs everywhere (inputs sized from task.json's shapes, the entry
// signature from task.json's args, the CPU reference); without nvcc, the CUDA runtime or a device of a declared
// arch, each test then skips with the reason. gemm_allreduce needs two GPUs and is not covered here.
#include <gtest/gtest.h>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/task/task.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "eval/cuda/cuda_backend.hpp"
#include "eval/cuda/cuda_tools.hpp"
#include "eval_test_support.hpp"
#include "kernels/common/half_float.hpp"
#include "kernels/gdn_prefill_qk4_v8_d128_k_last/cpu_reference.hpp"
#include "kernels/gemm_bf16/cpu_reference.hpp"
#include "kernels/gqa_paged_decode_h32_kv8_d128_ps1/cpu_reference.hpp"
#include "kernels/kmeans_assign/cpu_reference.hpp"
#include "kernels/mla_paged_decode_h16_ckv512_kpe64_ps1/cpu_reference.hpp"
#include "kernels/rmsnorm_h4096/cpu_reference.hpp"
#include "support/cuda_runtime_loader.hpp"

namespace evoteam {
namespace {

namespace fs = std::filesystem;
using evoteam::testing::CudaRuntime;
using evoteam::testing::DeviceBuffer;
using Axes = std::map<std::string, std::int64_t>;

// ---- The shared part: the runtime, the reference's entry, device buffers sized from task.json, comparisons.

// "const bfloat16* q, float32 sm_scale, int64 batch_size, ...": the entry's C signature as task.json states it,
// which each adapter's function pointer type must match (bf16 travels as std::uint16_t, cudaError_t as int).
std::string entry_signature(const Task& task) {
  std::string signature;
  for (const std::string& arg : task.entry.args) {
    if (!signature.empty()) signature += ", ";
    if (const TensorSpec* tensor = task.find_tensor(arg))
      signature += (tensor->role == TensorRole::input ? "const " : "") + to_string(tensor->dtype) + "* " + arg;
    else if (const ScalarSpec* scalar = task.find_scalar(arg))
      signature += to_string(scalar->dtype) + " " + arg;
    else
      signature += "int64 " + arg;
  }
  return signature;
}

// One task's CUDA reference, built and loaded when this machine can run it.
class GpuReference {
 public:
  explicit GpuReference(const std::string& task_name) : m_task(load_task(install_root() / "kernels" / task_name)) {}

  // Finds nvcc, the runtime and a device of a declared arch; then builds the reference (a failure is a test
  // failure) and resolves its entry. Otherwise remembers why not.
  void prepare() {
    m_skip_reason = why_not_runnable();
    if (!m_skip_reason.empty()) return;
    eval::CompileSlots slots(2);
    eval::CudaBuilder builder(evoteam::testing::eval_test_settings(), system_runner(),
                              evoteam::testing::eval_test_cache() / "cuda", slots);
    eval::BuildRequest request;
    request.task = &m_task;
    request.files[m_task.reference_file] = read_file(m_task.dir / m_task.reference_file);
    request.untrusted = false;
    request.role = "reference";
    const eval::BuildOutcome outcome = builder.build(request, SandboxMode::none);
    ASSERT_EQ(outcome.status, eval::BuildStatus::ok) << outcome.reason << "\n" << outcome.log.substr(0, 3000);
    m_entry = evoteam::testing::load_symbol(outcome.library, m_task.entry.name);
  }

  bool runnable() const { return m_entry != nullptr; }
  const std::string& skip_reason() const { return m_skip_reason; }
  const Task& task() const { return m_task; }
  const CudaRuntime& gpu() const { return *m_gpu; }
  template <typename Entry>
  Entry entry() const {
    return reinterpret_cast<Entry>(m_entry);
  }
  // A float32 scalar's value as the entry receives it.
  float scalar(const std::string& name) const {
    const ScalarSpec* scalar = m_task.find_scalar(name);
    if (scalar == nullptr || scalar->dtype != DType::float32)
      throw Error("no float32 scalar " + name + " in " + m_task.name);
    return static_cast<float>(scalar->value);
  }
  std::int64_t axis(const std::string& name) const {
    const Axis* axis = m_task.find_axis(name);
    if (axis == nullptr || !axis->is_const) throw Error("no const axis " + name + " in " + m_task.name);
    return axis->value;
  }

 private:
  std::string why_not_runnable() {
    const std::optional<fs::path> nvcc = eval::cuda::find_cuda_tool("nvcc");
    if (!nvcc) return "nvcc is not installed (set EVOTEAM_NVCC): the CUDA reference cannot be built";
    // The toolkit's own runtime first: the reference is linked against it.
    const fs::path toolkit = fs::weakly_canonical(*nvcc).parent_path().parent_path();
    std::string why;
    m_gpu = CudaRuntime::load(
        {toolkit / "lib64" / "libcudart.so", toolkit / "targets" / "x86_64-linux" / "lib" / "libcudart.so"}, &why);
    if (m_gpu == nullptr) return why;
    if (m_gpu->device_count(&why) <= 0) return "no usable CUDA device: " + why + " (runtime " + m_gpu->library() + ")";
    const int capability = m_gpu->compute_capability(&why);
    const std::string arch = "sm_" + std::to_string(capability) + "a";
    if (capability > 0 && std::find(m_task.archs.begin(), m_task.archs.end(), arch) == m_task.archs.end())
      return "the device is " + arch + "; the task builds only for its declared archs";
    return "";
  }

  Task m_task;
  std::string m_skip_reason;
  const CudaRuntime* m_gpu = nullptr;
  void* m_entry = nullptr;
};

// One call of the entry: tensor sizes come from task.json's shapes for `axes` (var axes, and const axes where a
// shape deliberately departs from the task's), and every host vector is checked against them. Device work
// happens only when the reference is runnable.
class Call {
 public:
  Call(const GpuReference& reference, const Axes& axes) : m_reference(reference) {
    for (const Axis& axis : task().axes)
      if (axis.is_const) m_axes[axis.name] = axis.value;
    for (const auto& [name, value] : axes) {
      if (task().find_axis(name) == nullptr) throw Error("no axis " + name + " in " + task().name);
      m_axes[name] = value;
    }
    for (const Axis& axis : task().axes)
      if (!m_axes.count(axis.name)) throw Error("the call gives no value for axis " + axis.name);
    const std::optional<std::string> violated = violated_constraint(task(), m_axes);
    EXPECT_FALSE(violated.has_value()) << "the shape breaks the task's constraint " << violated.value_or("");
  }

  std::size_t count(const std::string& tensor) const {
    return static_cast<std::size_t>(tensor_elements(spec(tensor), m_axes));
  }

  template <typename T>
  const T* in(const std::string& name, const std::vector<T>& host) {
    if (host.size() * sizeof(T) != count(name) * dtype_size(spec(name).dtype))
      throw Error("input " + name + ": " + std::to_string(host.size()) + " elements of " + std::to_string(sizeof(T)) +
                  " bytes, task.json wants " + std::to_string(count(name)) + " of " + to_string(spec(name).dtype));
    if (!m_reference.runnable()) return nullptr;
    return static_cast<const T*>(
        keep(name, std::make_unique<DeviceBuffer>(DeviceBuffer::from(m_reference.gpu(), host))));
  }

  template <typename T>
  T* out(const std::string& name) {
    if (sizeof(T) != dtype_size(spec(name).dtype)) throw Error("output " + name + ": wrong element type");
    if (!m_reference.runnable()) return nullptr;
    const std::size_t bytes = count(name) * sizeof(T);
    return static_cast<T*>(
        keep(name, std::make_unique<DeviceBuffer>(DeviceBuffer::poisoned(m_reference.gpu(), bytes))));
  }

  // Calls the entry with a null stream and waits for it; a no-op when the reference is not runnable.
  template <typename Entry, typename... Args>
  void invoke(Entry entry, Args... args) {
    ASSERT_EQ(sizeof...(Args), task().entry.args.size()) << "the call passes a different number of arguments";
    if (!m_reference.runnable()) return;
    m_reference.gpu().check(entry(args..., nullptr), task().entry.name);
    m_reference.gpu().synchronize();
  }

  // The output against the CPU reference: integers exactly; floats as the harness judges them
  // (kernels/common/compare.cpp): non-finite values where the reference has them (lse = -inf for an empty
  // sequence), |y - r| <= atol + atol_rms * RMS(r) + rtol * |r| and ||y - r|| / ||r|| <= normwise.
  void expect_matches(const std::string& name, const std::vector<double>& expected) {
    ASSERT_EQ(expected.size(), count(name)) << "the CPU reference's " << name << " has another size than task.json's";
    if (!m_reference.runnable()) return;
    const std::vector<double> actual = download(name);
    const bool integer = !is_floating(spec(name).dtype);
    const auto tolerance = task().tolerances.find(name);
    ASSERT_TRUE(integer || tolerance != task().tolerances.end()) << "no tolerance for " << name;
    double sum_r2 = 0;
    std::size_t finite = 0;
    for (const double r : expected)
      if (std::isfinite(r)) {
        sum_r2 += r * r;
        ++finite;
      }
    const double rms = finite > 0 ? std::sqrt(sum_r2 / static_cast<double>(finite)) : 0.0;
    double sum_d2 = 0;
    std::size_t bad = 0;
    std::size_t first_bad = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const double y = actual[i];
      const double r = expected[i];
      bool ok = false;
      if (integer) {
        ok = y == r;
      } else if (!std::isfinite(r) || !std::isfinite(y)) {
        ok = std::isnan(r) ? std::isnan(y) : y == r;
      } else {
        const Tolerance& t = tolerance->second;
        sum_d2 += (y - r) * (y - r);
        ok = std::fabs(y - r) <= t.atol + t.atol_rms * rms + t.rtol * std::fabs(r);
      }
      if (!ok && bad++ == 0) first_bad = i;
    }
    EXPECT_EQ(bad, 0u) << name << ": " << bad << " of " << expected.size() << " elements disagree; the first at "
                       << first_bad << ": CUDA " << actual[first_bad] << ", CPU " << expected[first_bad];
    if (integer) return;
    const double normwise = sum_r2 > 0 ? std::sqrt(sum_d2 / sum_r2) : std::sqrt(sum_d2);
    EXPECT_LE(normwise, tolerance->second.normwise) << name << ": normwise error";
  }

 private:
  const Task& task() const { return m_reference.task(); }
  const TensorSpec& spec(const std::string& name) const {
    const TensorSpec* tensor = task().find_tensor(name);
    if (tensor == nullptr) throw Error("no tensor " + name + " in " + task().name);
    return *tensor;
  }
  void* keep(const std::string& name, std::unique_ptr<DeviceBuffer> buffer) {
    void* device = buffer->get();
    m_buffers[name] = std::move(buffer);
    return device;
  }
  std::vector<double> download(const std::string& name) const {
    const DeviceBuffer& buffer = *m_buffers.at(name);
    const std::size_t n = count(name);
    std::vector<double> values;
    if (spec(name).dtype == DType::bfloat16)
      for (const std::uint16_t bits : buffer.download<std::uint16_t>(n))
        values.push_back(evoteam_harness::bfloat16_to_float(bits));
    else if (spec(name).dtype == DType::float32)
      for (const float value : buffer.download<float>(n)) values.push_back(value);
    else if (spec(name).dtype == DType::int32)
      for (const std::int32_t value : buffer.download<std::int32_t>(n)) values.push_back(value);
    else
      throw Error("output " + name + ": no comparison for " + to_string(spec(name).dtype));
    return values;
  }

  const GpuReference& m_reference;
  Axes m_axes;
  std::map<std::string, std::unique_ptr<DeviceBuffer>> m_buffers;
};

// A bf16 tensor: the bits the device gets and the same numbers widened (exactly) for the CPU reference.
struct Bf16Tensor {
  std::vector<std::uint16_t> bits;
  std::vector<float> values;

  void push(double value) {
    bits.push_back(evoteam_harness::float_to_bfloat16(static_cast<float>(value)));
    values.push_back(evoteam_harness::bfloat16_to_float(bits.back()));
  }
};

Bf16Tensor normal_bf16(std::mt19937_64& rng, std::size_t count) {
  std::normal_distribution<double> normal(0.0, 1.0);
  Bf16Tensor tensor;
  tensor.bits.reserve(count);
  tensor.values.reserve(count);
  for (std::size_t i = 0; i < count; ++i) tensor.push(normal(rng));
  return tensor;
}

std::string describe(const Axes& axes) {
  std::string text;
  for (const auto& [name, value] : axes) text += (text.empty() ? "" : " ") + name + "=" + std::to_string(value);
  return text;
}

// ---- The adapters: shapes, inputs, the call in entry.args order, the CPU reference.

// Paged decode batches (page size 1): distinct pages in random order, so no sequence is contiguous in the cache.
struct PageTable {
  std::vector<std::int32_t> indptr{0};
  std::vector<std::int32_t> indices;
  std::int64_t num_pages = 0;
  std::int64_t batch() const { return static_cast<std::int64_t>(indptr.size()) - 1; }
  Axes axes() const {
    return {{"batch_size", batch()},
            {"num_pages", num_pages},
            {"num_kv_indices", static_cast<std::int64_t>(indices.size())}};
  }
};

PageTable page_table(const std::vector<int>& lengths, std::int64_t num_pages, std::mt19937_64& rng) {
  std::vector<std::int32_t> pages(static_cast<std::size_t>(num_pages));
  std::iota(pages.begin(), pages.end(), 0);
  std::shuffle(pages.begin(), pages.end(), rng);
  PageTable table;
  table.num_pages = num_pages;
  std::size_t next = 0;
  for (const int length : lengths) {
    for (int t = 0; t < length; ++t) table.indices.push_back(pages.at(next++));
    table.indptr.push_back(static_cast<std::int32_t>(table.indices.size()));
  }
  return table;
}

// A batch of one whose length (37) is no multiple of the references' chunk of tokens; an empty sequence (zero row,
// lse = -inf) beside a one-token one; every page of the cache referenced, with two empty sequences in a row.
const std::vector<std::pair<std::vector<int>, std::int64_t>> k_paged_batches = {
    {{37}, 64}, {{0, 9, 1, 24}, 50}, {{5, 0, 0, 3}, 8}};

using MlaEntry = int (*)(const std::uint16_t*, const std::uint16_t*, const std::uint16_t*, const std::uint16_t*,
                         const std::int32_t*, const std::int32_t*, float, std::uint16_t*, float*, float*, std::int64_t,
                         std::int64_t, std::int64_t, void*);

TEST(GpuTaskReferences, MlaPagedDecodeCudaReferenceMatchesCpuReference) {
  GpuReference reference("mla_paged_decode_h16_ckv512_kpe64_ps1");
  ASSERT_EQ(entry_signature(reference.task()),
            "const bfloat16* q_nope, const bfloat16* q_pe, const bfloat16* ckv_cache, const bfloat16* kpe_cache, "
            "const int32* kv_indptr, const int32* kv_indices, float32 sm_scale, bfloat16* output, float32* lse, "
            "float32* workspace, int64 batch_size, int64 num_pages, int64 num_kv_indices");
  ASSERT_NO_FATAL_FAILURE(reference.prepare());
  const float sm_scale = reference.scalar("sm_scale");
  std::mt19937_64 rng(1);
  for (const auto& [lengths, num_pages] : k_paged_batches) {
    const PageTable table = page_table(lengths, num_pages, rng);
    SCOPED_TRACE(describe(table.axes()));
    Call call(reference, table.axes());
    const Bf16Tensor q_nope = normal_bf16(rng, call.count("q_nope"));
    const Bf16Tensor q_pe = normal_bf16(rng, call.count("q_pe"));
    const Bf16Tensor ckv = normal_bf16(rng, call.count("ckv_cache"));
    const Bf16Tensor kpe = normal_bf16(rng, call.count("kpe_cache"));
    std::vector<double> output(call.count("output"));
    std::vector<double> lse(call.count("lse"));
    evoteam_kernels::mla_paged_decode_h16_ckv512_kpe64_ps1::mla_paged_decode(
        q_nope.values.data(), q_pe.values.data(), ckv.values.data(), kpe.values.data(), table.indptr.data(),
        table.indices.data(), sm_scale, table.batch(), table.num_pages, output.data(), lse.data());
    call.invoke(reference.entry<MlaEntry>(), call.in("q_nope", q_nope.bits), call.in("q_pe", q_pe.bits),
                call.in("ckv_cache", ckv.bits), call.in("kpe_cache", kpe.bits), call.in("kv_indptr", table.indptr),
                call.in("kv_indices", table.indices), sm_scale, call.out<std::uint16_t>("output"),
                call.out<float>("lse"), call.out<float>("workspace"), table.batch(), table.num_pages,
                static_cast<std::int64_t>(table.indices.size()));
    call.expect_matches("output", output);
    call.expect_matches("lse", lse);
  }
  if (!reference.runnable()) GTEST_SKIP() << reference.skip_reason();
}

using GqaEntry = int (*)(const std::uint16_t*, const std::uint16_t*, const std::uint16_t*, const std::int32_t*,
                         const std::int32_t*, float, std::uint16_t*, float*, float*, std::int64_t, std::int64_t,
                         std::int64_t, void*);

TEST(GpuTaskReferences, GqaPagedDecodeCudaReferenceMatchesCpuReference) {
  GpuReference reference("gqa_paged_decode_h32_kv8_d128_ps1");
  ASSERT_EQ(entry_signature(reference.task()),
            "const bfloat16* q, const bfloat16* k_cache, const bfloat16* v_cache, const int32* kv_indptr, "
            "const int32* kv_indices, float32 sm_scale, bfloat16* output, float32* lse, float32* workspace, "
            "int64 batch_size, int64 num_pages, int64 num_kv_indices");
  ASSERT_NO_FATAL_FAILURE(reference.prepare());
  const float sm_scale = reference.scalar("sm_scale");
  std::mt19937_64 rng(2);
  for (const auto& [lengths, num_pages] : k_paged_batches) {
    const PageTable table = page_table(lengths, num_pages, rng);
    SCOPED_TRACE(describe(table.axes()));
    Call call(reference, table.axes());
    const Bf16Tensor q = normal_bf16(rng, call.count("q"));
    const Bf16Tensor k_cache = normal_bf16(rng, call.count("k_cache"));
    const Bf16Tensor v_cache = normal_bf16(rng, call.count("v_cache"));
    std::vector<double> output(call.count("output"));
    std::vector<double> lse(call.count("lse"));
    evoteam_kernels::gqa_paged_decode_h32_kv8_d128_ps1::gqa_paged_decode(
        q.values.data(), k_cache.values.data(), v_cache.values.data(), table.indptr.data(), table.indices.data(),
        sm_scale, table.batch(), table.num_pages, output.data(), lse.data());
    call.invoke(reference.entry<GqaEntry>(), call.in("q", q.bits), call.in("k_cache", k_cache.bits),
                call.in("v_cache", v_cache.bits), call.in("kv_indptr", table.indptr),
                call.in("kv_indices", table.indices), sm_scale, call.out<std::uint16_t>("output"),
                call.out<float>("lse"), call.out<float>("workspace"), table.batch(), table.num_pages,
                static_cast<std::int64_t>(table.indices.size()));
    call.expect_matches("output", output);
    call.expect_matches("lse", lse);
  }
  if (!reference.runnable()) GTEST_SKIP() << reference.skip_reason();
}

using GdnEntry = int (*)(const std::uint16_t*, const std::uint16_t*, const std::uint16_t*, const float*, const float*,
                         const std::uint16_t*, const float*, const std::uint16_t*, const std::int64_t*, float,
                         std::uint16_t*, float*, std::int64_t, std::int64_t, void*);

// Gate inputs as the task's hooks shape them: standard normal, about one in 32 at +-(20..40) (saturated gates).
Bf16Tensor gate_inputs(std::mt19937_64& rng, std::size_t count) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  Bf16Tensor tensor;
  for (std::size_t i = 0; i < count; ++i) {
    const bool saturated = rng() % 32 == 0;
    tensor.push(saturated ? (rng() % 2 == 0 ? -1.0 : 1.0) * (20.0 + 20.0 * uniform(rng)) : normal(rng));
  }
  return tensor;
}

// q and k rows of unit L2 norm (before the rounding to bf16), as the model feeds them.
Bf16Tensor unit_rows(std::mt19937_64& rng, std::size_t count, std::size_t row_length) {
  std::normal_distribution<double> normal(0.0, 1.0);
  Bf16Tensor tensor;
  std::vector<double> row(row_length);
  for (std::size_t begin = 0; begin < count; begin += row_length) {
    double norm2 = 0;
    for (double& x : row) {
      x = normal(rng);
      norm2 += x * x;
    }
    for (const double x : row) tensor.push(x / std::sqrt(norm2));
  }
  return tensor;
}

TEST(GpuTaskReferences, GdnPrefillCudaReferenceMatchesCpuReference) {
  namespace gdn = evoteam_kernels::gdn_prefill_qk4_v8_d128_k_last;
  GpuReference reference("gdn_prefill_qk4_v8_d128_k_last");
  ASSERT_EQ(entry_signature(reference.task()),
            "const bfloat16* q, const bfloat16* k, const bfloat16* v, const float32* state, const float32* A_log, "
            "const bfloat16* a, const float32* dt_bias, const bfloat16* b, const int64* cu_seqlens, float32 scale, "
            "bfloat16* output, float32* new_state, int64 total_seq_len, int64 num_seqs");
  ASSERT_NO_FATAL_FAILURE(reference.prepare());
  const float scale = reference.scalar("scale");
  const auto head_size = static_cast<std::size_t>(reference.axis("head_size"));
  std::mt19937_64 rng(3);
  // One sequence of 37 tokens (no multiple of a chunk); ragged sequences with an empty one and one of 65 tokens
  // (a chunk of 64 and one more); an empty sequence first, then a single token.
  const std::vector<std::vector<std::int64_t>> batches = {{0, 37}, {0, 5, 5, 70, 71}, {0, 0, 1}};
  for (const std::vector<std::int64_t>& cu_seqlens : batches) {
    const std::int64_t total = cu_seqlens.back();
    const auto num_seqs = static_cast<std::int64_t>(cu_seqlens.size()) - 1;
    const Axes axes = {{"total_seq_len", total}, {"num_seqs", num_seqs}};
    SCOPED_TRACE(describe(axes));
    Call call(reference, axes);
    const Bf16Tensor q = unit_rows(rng, call.count("q"), head_size);
    const Bf16Tensor k = unit_rows(rng, call.count("k"), head_size);
    const Bf16Tensor v = normal_bf16(rng, call.count("v"));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    std::vector<float> state(call.count("state"));
    for (float& x : state) x = normal(rng);
    std::vector<float> A_log(call.count("A_log"));
    for (float& x : A_log) x = static_cast<float>(std::log(1.0 + 15.0 * uniform(rng)));
    std::vector<float> dt_bias(call.count("dt_bias"));
    for (float& x : dt_bias) {  // softplus^-1 of a step dt log-uniform in [1e-3, 1e-1]
      const double dt = std::exp(std::log(1e-3) + (std::log(1e-1) - std::log(1e-3)) * uniform(rng));
      x = static_cast<float>(dt + std::log(-std::expm1(-dt)));
    }
    const Bf16Tensor a = gate_inputs(rng, call.count("a"));
    const Bf16Tensor b = gate_inputs(rng, call.count("b"));
    const gdn::Inputs inputs{.q = q.values.data(),
                             .k = k.values.data(),
                             .v = v.values.data(),
                             .state = state.data(),
                             .cu_seqlens = cu_seqlens.data(),
                             .total_seq_len = total,
                             .num_seqs = num_seqs,
                             .scale = scale};
    const gdn::Result expected =
        gdn::gdn_prefill(inputs, A_log.data(), a.values.data(), dt_bias.data(), b.values.data());
    call.invoke(reference.entry<GdnEntry>(), call.in("q", q.bits), call.in("k", k.bits), call.in("v", v.bits),
                call.in("state", state), call.in("A_log", A_log), call.in("a", a.bits), call.in("dt_bias", dt_bias),
                call.in("b", b.bits), call.in("cu_seqlens", cu_seqlens), scale, call.out<std::uint16_t>("output"),
                call.out<float>("new_state"), total, num_seqs);
    call.expect_matches("output", expected.output);
    call.expect_matches("new_state", expected.new_state);
  }
  if (!reference.runnable()) GTEST_SKIP() << reference.skip_reason();
}

using GemmEntry = int (*)(const std::uint16_t*, const std::uint16_t*, std::uint16_t*, std::int64_t, std::int64_t,
                          std::int64_t, void*);

TEST(GpuTaskReferences, GemmBf16CudaReferenceMatchesCpuReference) {
  GpuReference reference("gemm_bf16");
  ASSERT_EQ(entry_signature(reference.task()),
            "const bfloat16* A, const bfloat16* B, bfloat16* C, int64 M, int64 N, int64 K");
  ASSERT_NO_FATAL_FAILURE(reference.prepare());
  const std::int64_t n = reference.axis("N");
  const std::int64_t k = reference.axis("K");
  std::mt19937_64 rng(4);
  // Decode (M = 1) at the task's N = K = 4096; M off the reference's 16-wide tiles at the task's K; then N and K
  // off the tiles too (the reference is written for any N and K; smaller N keeps the CPU side quick).
  const std::vector<Axes> shapes = {
      {{"M", 1}, {"N", n}, {"K", k}}, {{"M", 17}, {"N", 136}, {"K", k}}, {{"M", 33}, {"N", 72}, {"K", 100}}};
  for (const Axes& axes : shapes) {
    SCOPED_TRACE(describe(axes));
    Call call(reference, axes);
    const Bf16Tensor a = normal_bf16(rng, call.count("A"));
    const Bf16Tensor b = normal_bf16(rng, call.count("B"));
    const std::vector<double> expected =
        evoteam_kernels::gemm_bf16::gemm(a.values.data(), b.values.data(), axes.at("M"), axes.at("N"), axes.at("K"));
    call.invoke(reference.entry<GemmEntry>(), call.in("A", a.bits), call.in("B", b.bits), call.out<std::uint16_t>("C"),
                axes.at("M"), axes.at("N"), axes.at("K"));
    call.expect_matches("C", expected);
  }
  if (!reference.runnable()) GTEST_SKIP() << reference.skip_reason();
}

using RmsnormEntry = int (*)(const std::uint16_t*, const std::uint16_t*, std::uint16_t*, std::int64_t, std::int64_t,
                             float, void*);

TEST(GpuTaskReferences, RmsnormCudaReferenceMatchesCpuReference) {
  GpuReference reference("rmsnorm_h4096");
  ASSERT_EQ(entry_signature(reference.task()),
            "const bfloat16* hidden_states, const bfloat16* weight, bfloat16* output, int64 batch_size, int64 "
            "hidden_size, float32 eps");
  ASSERT_NO_FATAL_FAILURE(reference.prepare());
  const float eps = reference.scalar("eps");
  const std::int64_t hidden = reference.axis("hidden_size");
  std::mt19937_64 rng(5);
  // A batch of one (decode); three rows, the middle one all zeros (eps alone keeps it finite); seventeen rows.
  for (const std::int64_t batch : {std::int64_t{1}, std::int64_t{3}, std::int64_t{17}}) {
    const Axes axes = {{"batch_size", batch}};
    SCOPED_TRACE(describe(axes));
    Call call(reference, axes);
    Bf16Tensor x = normal_bf16(rng, call.count("hidden_states"));
    if (batch == 3) {
      std::fill_n(x.bits.begin() + hidden, hidden, std::uint16_t{0});
      std::fill_n(x.values.begin() + hidden, hidden, 0.0f);
    }
    const Bf16Tensor weight = normal_bf16(rng, call.count("weight"));
    const std::vector<double> expected =
        evoteam_kernels::rmsnorm_h4096::rmsnorm(x.values.data(), weight.values.data(), batch, hidden, eps);
    call.invoke(reference.entry<RmsnormEntry>(), call.in("hidden_states", x.bits), call.in("weight", weight.bits),
                call.out<std::uint16_t>("output"), batch, hidden, eps);
    call.expect_matches("output", expected);
  }
  if (!reference.runnable()) GTEST_SKIP() << reference.skip_reason();
}

using KmeansEntry = int (*)(const std::uint16_t*, const std::uint16_t*, std::int32_t*, float*, std::int64_t,
                            std::int64_t, std::int64_t, void*);

// Coordinates m / 16 with |m| <= 63, as the task's hooks draw them: every squared distance is exact in fp32 and
// double, so the nearest index (the lowest among equals) is well defined on both sides.
Bf16Tensor grid_bf16(std::mt19937_64& rng, std::size_t count) {
  std::normal_distribution<double> normal(0.0, 1.0);
  Bf16Tensor tensor;
  for (std::size_t i = 0; i < count; ++i)
    tensor.push(std::clamp(std::nearbyint(normal(rng) * 16.0), -63.0, 63.0) / 16.0);
  return tensor;
}

TEST(GpuTaskReferences, KmeansAssignCudaReferenceMatchesCpuReference) {
  GpuReference reference("kmeans_assign");
  ASSERT_EQ(entry_signature(reference.task()),
            "const bfloat16* points, const bfloat16* centroids, int32* assignment, float32* distance, int64 n, int64 "
            "k, int64 d");
  ASSERT_NO_FATAL_FAILURE(reference.prepare());
  std::mt19937_64 rng(6);
  // One point, one centroid, one dimension; counts off the references' blocks (128 points, 16 centroids); the
  // largest d the task allows. Every fifth centroid repeats an earlier one, so exact ties occur.
  const std::vector<Axes> shapes = {
      {{"n", 1}, {"k", 1}, {"d", 1}}, {{"n", 300}, {"k", 37}, {"d", 128}}, {{"n", 1000}, {"k", 17}, {"d", 256}}};
  for (const Axes& axes : shapes) {
    SCOPED_TRACE(describe(axes));
    Call call(reference, axes);
    const std::int64_t n = axes.at("n");
    const std::int64_t k = axes.at("k");
    const std::int64_t d = axes.at("d");
    const Bf16Tensor points = grid_bf16(rng, call.count("points"));
    Bf16Tensor centroids = grid_bf16(rng, call.count("centroids"));
    for (std::int64_t row = 5; row < k; row += 5) {
      const std::int64_t source = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(row));
      std::copy_n(centroids.bits.begin() + source * d, d, centroids.bits.begin() + row * d);
      std::copy_n(centroids.values.begin() + source * d, d, centroids.values.begin() + row * d);
    }
    const evoteam_kernels::kmeans_assign::Assignment expected =
        evoteam_kernels::kmeans_assign::assign(points.values.data(), centroids.values.data(), n, k, d);
    call.invoke(reference.entry<KmeansEntry>(), call.in("points", points.bits), call.in("centroids", centroids.bits),
                call.out<std::int32_t>("assignment"), call.out<float>("distance"), n, k, d);
    call.expect_matches("assignment", std::vector<double>(expected.index.begin(), expected.index.end()));
    call.expect_matches("distance", expected.distance);
  }
  if (!reference.runnable()) GTEST_SKIP() << reference.skip_reason();
}

}  // namespace
}  // namespace evoteam
