// evoteam's stand-in for the part of the libtorch extension API that published FlashInfer-Trace Solutions bind
// their CUDA launchers with (torch::Tensor, torch::empty, the current stream, TORCH_CHECK, PYBIND11_MODULE). It
// is written at the top of an imported Solution's kernel file so that the Solution's own binding code compiles
// unchanged against the harness's buffers: no libtorch exists in the harness, and every host symbol the stand-in
// itself needs is one the static stage allows (no allocator, no host copy, no exceptions), so a rejection names
// the Solution's code, never the stand-in's.
#include "trace/torch_shim.hpp"

namespace evoteam {

const std::string& torch_shim_text() {
  static const std::string text = R"SHIM(
// ---- evoteam's stand-in for the libtorch extension API a published Solution's binding uses ----
// Tensors are views of the harness's buffers; allocations are served from the task's outputs (by dtype and size,
// in order) and its scratch tensors, never from the CUDA allocator; a failed check or an unsupported call traps
// (the evaluator then reports the crash), since host symbols such as std::exception are not allowed in a candidate.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace published_shim {

// Not [[noreturn]] and behind a volatile flag: the optimiser must keep the Solution's code after an unsupported
// call, or the static stage would judge less host code than the Solution has.
inline volatile int fail_traps = 1;
inline void fail() {
  if (fail_traps != 0) __builtin_trap();
}

enum class ScalarType { Byte, Char, Short, Int, Long, Half, Float, Double, ComplexHalf, ComplexFloat, ComplexDouble, Bool, BFloat16, Undefined };
inline std::size_t item_size(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: case ScalarType::Char: case ScalarType::Bool: return 1;
    case ScalarType::Short: case ScalarType::Half: case ScalarType::BFloat16: return 2;
    case ScalarType::Int: case ScalarType::Float: return 4;
    case ScalarType::Long: case ScalarType::Double: case ScalarType::ComplexFloat: return 8;
    default: return 16;
  }
}
inline const char* type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return "Byte"; case ScalarType::Char: return "Char"; case ScalarType::Short: return "Short";
    case ScalarType::Int: return "Int"; case ScalarType::Long: return "Long"; case ScalarType::Half: return "Half";
    case ScalarType::Float: return "Float"; case ScalarType::Double: return "Double"; case ScalarType::Bool: return "Bool";
    case ScalarType::BFloat16: return "BFloat16"; default: return "Undefined";
  }
}

enum class DeviceType { CPU, CUDA };
struct Device {
  DeviceType kind = DeviceType::CUDA;
  int idx = 0;
  Device() = default;
  Device(DeviceType t, int i = 0) : kind(t), idx(i) {}
  bool is_cuda() const { return kind == DeviceType::CUDA; }
  bool is_cpu() const { return kind == DeviceType::CPU; }
  DeviceType type() const { return kind; }
  int index() const { return idx; }
  bool operator==(const Device& o) const { return kind == o.kind; }
  bool operator!=(const Device& o) const { return kind != o.kind; }
};

struct Half { std::uint16_t x; };
struct BFloat16 { std::uint16_t x; };

template <class T> constexpr ScalarType type_of() {
  if constexpr (std::is_same_v<T, float>) return ScalarType::Float;
  else if constexpr (std::is_same_v<T, double>) return ScalarType::Double;
  else if constexpr (std::is_same_v<T, std::int32_t>) return ScalarType::Int;
  else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, long long>) return ScalarType::Long;
  else if constexpr (std::is_same_v<T, std::int16_t>) return ScalarType::Short;
  else if constexpr (std::is_same_v<T, std::int8_t>) return ScalarType::Char;
  else if constexpr (std::is_same_v<T, std::uint8_t>) return ScalarType::Byte;
  else if constexpr (std::is_same_v<T, bool>) return ScalarType::Bool;
  else if constexpr (std::is_same_v<T, Half>) return ScalarType::Half;
  else if constexpr (std::is_same_v<T, BFloat16>) return ScalarType::BFloat16;
  else return ScalarType::Undefined;
}

struct IntArrayRef {
  std::vector<std::int64_t> v;
  IntArrayRef() = default;
  IntArrayRef(std::vector<std::int64_t> d) : v(std::move(d)) {}
  IntArrayRef(std::initializer_list<std::int64_t> d) : v(d) {}
  std::size_t size() const { return v.size(); }
  std::int64_t operator[](std::size_t i) const { return v[i]; }
  const std::int64_t* begin() const { return v.data(); }
  const std::int64_t* end() const { return v.data() + v.size(); }
  std::vector<std::int64_t> vec() const { return v; }
  bool operator==(const IntArrayRef& o) const { return v == o.v; }
  bool operator!=(const IntArrayRef& o) const { return v != o.v; }
};

struct TensorOptions {
  ScalarType dtype_ = ScalarType::Float;
  Device device_;
  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t) {}
  TensorOptions(DeviceType d) : device_(d) {}
  TensorOptions(Device d) : device_(d) {}
  TensorOptions dtype(ScalarType t) const { TensorOptions o = *this; o.dtype_ = t; return o; }
  TensorOptions device(Device d) const { TensorOptions o = *this; o.device_ = d; return o; }
  TensorOptions device(DeviceType d, int i = 0) const { return device(Device(d, i)); }
  TensorOptions layout(int) const { return *this; }
  TensorOptions requires_grad(bool) const { return *this; }
  ScalarType scalar_type() const { return dtype_; }
};

class Tensor {
 public:
  Tensor() = default;
  Tensor(void* data, ScalarType type, std::vector<std::int64_t> sizes, Device device = Device())
      : m_data(data), m_type(type), m_sizes(std::move(sizes)), m_device(device) {}
  bool defined() const { return m_type != ScalarType::Undefined; }
  std::int64_t dim() const { return static_cast<std::int64_t>(m_sizes.size()); }
  std::int64_t ndimension() const { return dim(); }
  std::int64_t size(std::int64_t i) const { return m_sizes[static_cast<std::size_t>(i < 0 ? i + dim() : i)]; }
  IntArrayRef sizes() const { return IntArrayRef(m_sizes); }
  IntArrayRef strides() const {
    std::vector<std::int64_t> s(m_sizes.size(), 1);
    for (std::int64_t i = dim() - 2; i >= 0; --i) s[static_cast<std::size_t>(i)] = s[static_cast<std::size_t>(i + 1)] * m_sizes[static_cast<std::size_t>(i + 1)];
    return IntArrayRef(s);
  }
  std::int64_t stride(std::int64_t i) const { return strides()[static_cast<std::size_t>(i < 0 ? i + dim() : i)]; }
  std::int64_t numel() const { std::int64_t n = 1; for (std::int64_t s : m_sizes) n *= s; return n; }
  std::int64_t element_size() const { return static_cast<std::int64_t>(item_size(m_type)); }
  std::int64_t nbytes() const { return numel() * element_size(); }
  ScalarType dtype() const { return m_type; }
  ScalarType scalar_type() const { return m_type; }
  Device device() const { return m_device; }
  int get_device() const { return m_device.is_cuda() ? 0 : -1; }
  bool is_cuda() const { return m_device.is_cuda(); }
  bool is_contiguous() const { return true; }
  Tensor contiguous() const { return *this; }
  TensorOptions options() const { return TensorOptions().dtype(m_type).device(m_device); }
  void* data_ptr() const { return m_data; }
  template <class T> T* data_ptr() const { return static_cast<T*>(m_data); }
  template <class T> T* mutable_data_ptr() const { return static_cast<T*>(m_data); }
  template <class T> const T* const_data_ptr() const { return static_cast<const T*>(m_data); }
  // Reshapes keep the buffer; -1 takes what is left.
  Tensor view(IntArrayRef shape) const {
    std::vector<std::int64_t> s = shape.vec();
    std::int64_t known = 1;
    for (std::int64_t d : s) if (d != -1) known *= d;
    for (std::int64_t& d : s) if (d == -1) d = known == 0 ? 0 : numel() / known;
    return Tensor(m_data, m_type, s, m_device);
  }
  Tensor reshape(IntArrayRef shape) const { return view(shape); }
  Tensor flatten() const { return view({-1}); }
  // A value on the host only: the scalars the harness passes. Reading a device tensor needs a host copy, which
  // a candidate may not make.
  template <class T> T item() const {
    if (!m_device.is_cpu() || m_data == nullptr) fail();
    switch (m_type) {
      case ScalarType::Float: return static_cast<T>(*static_cast<const float*>(m_data));
      case ScalarType::Double: return static_cast<T>(*static_cast<const double*>(m_data));
      case ScalarType::Int: return static_cast<T>(*static_cast<const std::int32_t*>(m_data));
      case ScalarType::Long: return static_cast<T>(*static_cast<const std::int64_t*>(m_data));
      default: fail();
    }
    return T();
  }
  Tensor to(ScalarType t, bool = false, bool = false) const { if (t != m_type) fail(); return *this; }
  Tensor to(Device d, bool = false, bool = false) const { if (d.kind != m_device.kind) fail(); return *this; }
  Tensor to(DeviceType d, bool = false, bool = false) const { return to(Device(d)); }
  Tensor to(const TensorOptions& o, bool = false, bool = false) const { return to(o.dtype_).to(o.device_); }
  Tensor cuda() const { return to(DeviceType::CUDA); }
  Tensor cpu() const { return to(DeviceType::CPU); }
  template <class... A> Tensor index(A&&...) const { fail(); return Tensor(); }
  template <class... A> Tensor copy_(A&&...) { fail(); return *this; }
  Tensor operator[](std::int64_t) const { fail(); return Tensor(); }

 private:
  void* m_data = nullptr;
  ScalarType m_type = ScalarType::Undefined;
  std::vector<std::int64_t> m_sizes;
  Device m_device;
};

// The buffers of one call: the task's outputs handed out to the first allocations of their dtype and size, then
// the scratch tensors as an arena.
struct Frame {
  cudaStream_t stream = nullptr;
  struct Slot { void* data; ScalarType type; std::int64_t bytes; bool taken; };
  std::vector<Slot> outputs;
  std::vector<Slot> scratch;
  static Frame*& current();
  void* take(ScalarType type, std::int64_t bytes) {
    for (Slot& slot : outputs)
      if (!slot.taken && slot.type == type && slot.bytes == bytes) { slot.taken = true; return slot.data; }
    for (Slot& slot : scratch) {
      const std::int64_t aligned = (bytes + 255) / 256 * 256;
      if (slot.bytes >= aligned) {
        void* data = slot.data;
        slot.data = static_cast<char*>(slot.data) + aligned;
        slot.bytes -= aligned;
        return data;
      }
    }
    fail();
    return nullptr;
  }
};

// One call at a time per harness process: a plain global (thread_local and function statics would add host
// symbols the static stage does not allow).
inline Frame* current_frame = nullptr;
inline Frame*& Frame::current() { return current_frame; }

inline cudaStream_t current_stream() { return Frame::current() != nullptr ? Frame::current()->stream : nullptr; }

__global__ void published_shim_fill(unsigned char* data, std::int64_t count, std::int64_t width, unsigned long long bits) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count; i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    for (std::int64_t b = 0; b < width; ++b) data[i * width + b] = static_cast<unsigned char>(bits >> (8 * b));
}
__global__ void published_shim_copy(unsigned char* to, const unsigned char* from, std::int64_t bytes) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < bytes; i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    to[i] = from[i];
}

inline Tensor allocate(IntArrayRef shape, const TensorOptions& options) {
  if (!options.device_.is_cuda() || Frame::current() == nullptr) fail();
  Tensor shaped(nullptr, options.dtype_, shape.vec());
  void* data = Frame::current()->take(options.dtype_, shaped.nbytes());
  return Tensor(data, options.dtype_, shape.vec());
}

inline void fill(const Tensor& t, double value) {
  if (t.numel() == 0) return;
  if (value == 0.0) { cudaMemsetAsync(t.data_ptr(), 0, static_cast<std::size_t>(t.nbytes()), current_stream()); return; }
  unsigned long long bits = 0;
  if (t.dtype() == ScalarType::Float) { float f = static_cast<float>(value); __builtin_memcpy(&bits, &f, 4); }
  else if (t.dtype() == ScalarType::Double) { __builtin_memcpy(&bits, &value, 8); }
  else if (t.dtype() == ScalarType::Int) { std::int32_t v = static_cast<std::int32_t>(value); __builtin_memcpy(&bits, &v, 4); }
  else if (t.dtype() == ScalarType::Long) { std::int64_t v = static_cast<std::int64_t>(value); __builtin_memcpy(&bits, &v, 8); }
  else if (t.dtype() == ScalarType::BFloat16) { float f = static_cast<float>(value); std::uint32_t u; __builtin_memcpy(&u, &f, 4); bits = u >> 16; }
  else fail();
  published_shim_fill<<<256, 256, 0, current_stream()>>>(static_cast<unsigned char*>(t.data_ptr()), t.numel(), t.element_size(), bits);
}

inline void copy_into(const Tensor& to, const Tensor& from) {
  if (!from.defined() || to.data_ptr() == from.data_ptr()) return;
  if (from.nbytes() != to.nbytes() || from.dtype() != to.dtype() || !from.is_cuda()) fail();
  published_shim_copy<<<256, 256, 0, current_stream()>>>(static_cast<unsigned char*>(to.data_ptr()), static_cast<const unsigned char*>(from.data_ptr()), from.nbytes());
}

// A scalar of the definition, passed as whatever the published entry point declares.
struct ScalarArg {
  double value;
  ScalarType type;
  mutable float as_float;
  mutable double as_double;
  operator double() const { return value; }
  operator float() const { return static_cast<float>(value); }
  operator Tensor() const {
    if (type == ScalarType::Float) { as_float = static_cast<float>(value); return Tensor(&as_float, type, {}, Device(DeviceType::CPU)); }
    as_double = value;
    return Tensor(&as_double, ScalarType::Double, {}, Device(DeviceType::CPU));
  }
};

struct CUDAStream {
  cudaStream_t s;
  operator cudaStream_t() const { return s; }
  cudaStream_t stream() const { return s; }
};

struct Arg {
  template <class T> Arg& operator=(T&&) { return *this; }
};
struct Module {
  template <class... A> Module& def(A&&...) { return *this; }
  Arg doc_text;
  template <class... A> Arg& doc(A&&...) { return doc_text; }
  void* ptr() const { return nullptr; }
};

template <class... A> inline const char* str(A&&...) { return ""; }
template <class... A> inline bool check_ignored(A&&...) { return true; }

}  // namespace published_shim

namespace c10 {
using published_shim::ScalarType;
using published_shim::Device;
using published_shim::DeviceType;
using published_shim::Half;
using published_shim::BFloat16;
using published_shim::IntArrayRef;
template <class T> using optional = std::optional<T>;
inline constexpr std::nullopt_t nullopt = std::nullopt;
inline const char* toString(ScalarType t) { return published_shim::type_name(t); }
struct Error { const char* what() const { return ""; } const char* msg() const { return ""; } };
namespace cuda {
struct CUDAGuard { template <class... A> explicit CUDAGuard(A&&...) {} };
struct OptionalCUDAGuard { template <class... A> explicit OptionalCUDAGuard(A&&...) {} };
using published_shim::CUDAStream;
template <class... A> inline CUDAStream getCurrentCUDAStream(A&&...) { return {published_shim::current_stream()}; }
template <class... A> inline CUDAStream getDefaultCUDAStream(A&&...) { return {published_shim::current_stream()}; }
template <class... A> inline CUDAStream getStreamFromPool(A&&...) { return {published_shim::current_stream()}; }
}  // namespace cuda
}  // namespace c10

namespace at {
using namespace c10;
using published_shim::Tensor;
using published_shim::TensorOptions;
using Dtype = ScalarType;
constexpr ScalarType kByte = ScalarType::Byte, kUInt8 = ScalarType::Byte, kChar = ScalarType::Char,
                     kInt8 = ScalarType::Char, kShort = ScalarType::Short, kInt16 = ScalarType::Short,
                     kInt = ScalarType::Int, kInt32 = ScalarType::Int, kLong = ScalarType::Long,
                     kInt64 = ScalarType::Long, kHalf = ScalarType::Half, kFloat16 = ScalarType::Half,
                     kFloat = ScalarType::Float, kFloat32 = ScalarType::Float, kDouble = ScalarType::Double,
                     kFloat64 = ScalarType::Double, kBool = ScalarType::Bool, kBFloat16 = ScalarType::BFloat16;
constexpr DeviceType kCUDA = DeviceType::CUDA, kCPU = DeviceType::CPU;
inline Tensor empty(IntArrayRef shape, const TensorOptions& options = TensorOptions()) { return published_shim::allocate(shape, options); }
inline Tensor zeros(IntArrayRef shape, const TensorOptions& options = TensorOptions()) { Tensor t = empty(shape, options); published_shim::fill(t, 0.0); return t; }
inline Tensor full(IntArrayRef shape, double value, const TensorOptions& options = TensorOptions()) { Tensor t = empty(shape, options); published_shim::fill(t, value); return t; }
inline Tensor empty_like(const Tensor& t) { return empty(t.sizes(), t.options()); }
inline Tensor empty_like(const Tensor& t, const TensorOptions& options) { return empty(t.sizes(), options); }
inline Tensor zeros_like(const Tensor& t) { return zeros(t.sizes(), t.options()); }
inline Tensor zeros_like(const Tensor& t, const TensorOptions& options) { return zeros(t.sizes(), options); }
template <class... A> inline Tensor stack(A&&...) { published_shim::fail(); return Tensor(); }
template <class... A> inline Tensor cat(A&&...) { published_shim::fail(); return Tensor(); }
namespace cuda {
using namespace c10::cuda;
}  // namespace cuda
}  // namespace at

namespace torch {
using namespace at;
using published_shim::str;
using DType = ScalarType;
}  // namespace torch

namespace pybind11 {
using published_shim::Arg;
using published_shim::Module;
inline Arg arg(const char*) { return Arg(); }
struct none {};
using module_ = Module;
}  // namespace pybind11
namespace py = pybind11;

#define TORCH_EXTENSION_NAME published_extension
#define PYBIND11_MODULE(name, m) [[maybe_unused]] static void published_shim_module_##name(published_shim::Module& m)
#define TORCH_LIBRARY(name, m) [[maybe_unused]] static void published_shim_library_##name(published_shim::Module& m)
#define TORCH_CHECK(cond, ...) do { if (!(cond)) published_shim::fail(); } while (0)
#define TORCH_INTERNAL_ASSERT(cond, ...) TORCH_CHECK(cond)
#define AT_ASSERTM(cond, ...) TORCH_CHECK(cond)
#define C10_CUDA_CHECK(expr) TORCH_CHECK((expr) == cudaSuccess)
#define C10_CUDA_KERNEL_LAUNCH_CHECK() TORCH_CHECK(cudaGetLastError() == cudaSuccess)

namespace published_shim {
// The published entry point's results into the task's outputs (a no-op for an output it allocated from them).
inline void store(const Tensor& result, const std::vector<Tensor>& outs, std::size_t& next) {
  if (next >= outs.size()) fail();
  copy_into(outs[next++], result);
}
template <class T> void store(const std::vector<T>& results, const std::vector<Tensor>& outs, std::size_t& next) {
  for (const T& result : results) store(result, outs, next);
}
template <class... T> void store(const std::tuple<T...>& results, const std::vector<Tensor>& outs, std::size_t& next) {
  std::apply([&](const auto&... each) { (store(each, outs, next), ...); }, results);
}
template <class F, class Tuple> struct invocable_with;
template <class F, class... T> struct invocable_with<F, std::tuple<T...>> : std::is_invocable<F&, T&...> {};
// Called with the definition's inputs; when it does not take them alone, with its inputs then its outputs
// (destination passing).
template <class F, class In, class Out>
void call_published(F&& entry, In inputs, Out outputs, const std::vector<Tensor>& outs) {
  if constexpr (invocable_with<F, In>::value) {
    using Result = decltype(std::apply(entry, inputs));
    if constexpr (std::is_void_v<Result>) {
      std::apply(entry, inputs);
    } else {
      std::size_t next = 0;
      store(std::apply(entry, inputs), outs, next);
    }
  } else {
    auto both = std::tuple_cat(inputs, outputs);
    std::apply(entry, both);
  }
}
}  // namespace published_shim
// ---- end of the stand-in ----
)SHIM";
  return text;
}

}  // namespace evoteam
