#include "support/cuda_runtime_loader.hpp"

#include <dlfcn.h>

#include <evoteam/core/error.hpp>

#include <memory>
#include <mutex>

namespace evoteam::testing {
namespace {

// cudaMemcpyKind values (driver_types.h); passed as int, which is how the enum travels.
constexpr int k_host_to_device = 1;
constexpr int k_device_to_host = 2;
// cudaDeviceAttr values (driver_types.h).
constexpr int k_attribute_major = 75;
constexpr int k_attribute_minor = 76;

std::string loader_error() {
  const char* message = dlerror();
  return message == nullptr ? "unknown error" : message;
}

template <typename Function>
bool resolve(void* handle, const char* name, Function* function, std::string* missing) {
  *function = reinterpret_cast<Function>(dlsym(handle, name));
  if (*function == nullptr) *missing += std::string(missing->empty() ? "" : ", ") + name;
  return *function != nullptr;
}

}  // namespace

CudaRuntime* CudaRuntime::load(const std::vector<std::filesystem::path>& preferred, std::string* why) {
  // Loaded once: a runtime cannot be unloaded safely once it holds a context, and every test wants the same one.
  static std::once_flag once;
  static std::unique_ptr<CudaRuntime> runtime;
  static std::string failure;
  std::call_once(once, [&] {
    std::vector<std::string> candidates;
    for (const std::filesystem::path& path : preferred)
      if (std::filesystem::exists(path)) candidates.push_back(path.string());
    for (const char* name :
         {"libcudart.so.13", "libcudart.so.12", "libcudart.so", "/usr/local/cuda/lib64/libcudart.so"})
      candidates.emplace_back(name);
    std::string tried;
    for (const std::string& candidate : candidates) {
      // RTLD_GLOBAL: the libraries loaded later resolve their runtime dependency to this very copy.
      void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_GLOBAL);
      if (handle == nullptr) {
        tried += "\n  " + candidate + ": " + loader_error();
        continue;
      }
      auto loaded = std::unique_ptr<CudaRuntime>(new CudaRuntime());
      loaded->m_library = candidate;
      std::string missing;
      resolve(handle, "cudaMalloc", &loaded->m_malloc, &missing);
      resolve(handle, "cudaFree", &loaded->m_free, &missing);
      resolve(handle, "cudaMemcpy", &loaded->m_memcpy, &missing);
      resolve(handle, "cudaDeviceSynchronize", &loaded->m_synchronize, &missing);
      resolve(handle, "cudaGetDeviceCount", &loaded->m_device_count, &missing);
      resolve(handle, "cudaGetErrorString", &loaded->m_error_string, &missing);
      // Optional: without it the arch check is left to the launch.
      loaded->m_device_attribute = reinterpret_cast<DeviceAttribute>(dlsym(handle, "cudaDeviceGetAttribute"));
      if (!missing.empty()) {
        tried += "\n  " + candidate + ": lacks " + missing;
        continue;  // left loaded: unloading a half-used runtime gains nothing
      }
      runtime = std::move(loaded);
      return;
    }
    failure = "the CUDA runtime (libcudart) cannot be loaded:" + tried;
  });
  if (runtime == nullptr && why != nullptr) *why = failure;
  return runtime.get();
}

int CudaRuntime::device_count(std::string* why) const {
  int count = 0;
  const int code = m_device_count(&count);
  if (code != 0) {
    if (why != nullptr)
      *why = "cudaGetDeviceCount failed: " + std::string(m_error_string(code)) + " (" + std::to_string(code) + ")";
    return 0;
  }
  if (count <= 0 && why != nullptr) *why = "cudaGetDeviceCount reports no CUDA device";
  return count;
}

int CudaRuntime::compute_capability(std::string* why) const {
  if (m_device_attribute == nullptr) {
    if (why != nullptr) *why = m_library + " has no cudaDeviceGetAttribute";
    return 0;
  }
  int major = 0;
  int minor = 0;
  const int code_major = m_device_attribute(&major, k_attribute_major, 0);
  const int code = code_major != 0 ? code_major : m_device_attribute(&minor, k_attribute_minor, 0);
  if (code != 0) {
    if (why != nullptr) *why = "cudaDeviceGetAttribute failed: " + std::string(m_error_string(code));
    return 0;
  }
  return major * 10 + minor;
}

void CudaRuntime::check(int code, const std::string& what) const {
  if (code != 0) throw Error(what + " failed: " + m_error_string(code) + " (" + std::to_string(code) + ")");
}

void* CudaRuntime::allocate(std::size_t bytes) const {
  void* device = nullptr;
  // A zero-byte request still gets a real allocation, so every tensor has a distinct valid pointer.
  check(m_malloc(&device, bytes == 0 ? 1 : bytes), "cudaMalloc(" + std::to_string(bytes) + " bytes)");
  return device;
}

void CudaRuntime::release(void* device) const noexcept {
  if (device != nullptr) m_free(device);
}

void CudaRuntime::upload(void* device, const void* host, std::size_t bytes) const {
  if (bytes > 0) check(m_memcpy(device, host, bytes, k_host_to_device), "cudaMemcpy to the device");
}

void CudaRuntime::download(void* host, const void* device, std::size_t bytes) const {
  if (bytes > 0) check(m_memcpy(host, device, bytes, k_device_to_host), "cudaMemcpy to the host");
}

void CudaRuntime::synchronize() const { check(m_synchronize(), "cudaDeviceSynchronize"); }

DeviceBuffer::DeviceBuffer(const CudaRuntime& runtime, std::size_t bytes)
    : m_runtime(&runtime), m_device(runtime.allocate(bytes)), m_bytes(bytes) {}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : m_runtime(other.m_runtime), m_device(other.m_device), m_bytes(other.m_bytes) {
  other.m_device = nullptr;
  other.m_bytes = 0;
}

DeviceBuffer::~DeviceBuffer() { m_runtime->release(m_device); }

DeviceBuffer DeviceBuffer::poisoned(const CudaRuntime& runtime, std::size_t bytes) {
  DeviceBuffer buffer(runtime, bytes);
  const std::vector<unsigned char> poison(bytes, 0xFF);
  buffer.upload(poison.data());
  return buffer;
}

void DeviceBuffer::upload(const void* host) { m_runtime->upload(m_device, host, m_bytes); }

void DeviceBuffer::download_bytes(void* host, std::size_t bytes) const {
  if (bytes > m_bytes)
    throw Error("download of " + std::to_string(bytes) + " bytes from a device buffer of " + std::to_string(m_bytes));
  m_runtime->download(host, m_device, bytes);
}

void* load_symbol(const std::filesystem::path& library, const std::string& symbol) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw Error("cannot load " + library.string() + ": " + loader_error());
  dlerror();
  void* address = dlsym(handle, symbol.c_str());
  if (address == nullptr) throw Error(library.string() + " has no symbol " + symbol + ": " + loader_error());
  return address;
}

}  // namespace evoteam::testing
