#pragma once
// The CUDA runtime for GPU tests, loaded at run time with dlopen: the test binary does not link it, so it builds
// everywhere and its GPU tests skip cleanly on machines without CUDA. Only the calls the tests need, through
// plain C function pointers; device pointers are void*.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace evoteam::testing {

class CudaRuntime {
 public:
  // The process-wide runtime, loaded on first use: each of `preferred` (e.g. the toolkit's own libcudart.so, so
  // the runtime is the one the built libraries need), then libcudart.so.13, .so.12, .so and
  // /usr/local/cuda/lib64/libcudart.so. nullptr with `why` set when none loads or one lacks a needed function.
  // Later calls return the first result.
  static CudaRuntime* load(const std::vector<std::filesystem::path>& preferred, std::string* why);

  // Visible devices; 0 with `why` set when the runtime answers with an error (no driver, no device).
  int device_count(std::string* why) const;
  // Device 0's compute capability as major * 10 + minor (90 for sm_90); 0 with `why` set when unknown.
  int compute_capability(std::string* why) const;

  // Each throws evoteam::Error naming the call and the runtime's message when the runtime reports an error.
  void* allocate(std::size_t bytes) const;
  void release(void* device) const noexcept;
  void upload(void* device, const void* host, std::size_t bytes) const;
  void download(void* host, const void* device, std::size_t bytes) const;
  void synchronize() const;
  // Throws Error unless `code` is cudaSuccess (0); `what` names the call.
  void check(int code, const std::string& what) const;

  // The file that was loaded.
  const std::string& library() const { return m_library; }

 private:
  using Malloc = int (*)(void**, std::size_t);
  using Free = int (*)(void*);
  using Memcpy = int (*)(void*, const void*, std::size_t, int);
  using Synchronize = int (*)();
  using DeviceCount = int (*)(int*);
  using ErrorString = const char* (*)(int);
  using DeviceAttribute = int (*)(int*, int, int);

  CudaRuntime() = default;

  std::string m_library;
  Malloc m_malloc = nullptr;
  Free m_free = nullptr;
  Memcpy m_memcpy = nullptr;
  Synchronize m_synchronize = nullptr;
  DeviceCount m_device_count = nullptr;
  ErrorString m_error_string = nullptr;
  DeviceAttribute m_device_attribute = nullptr;
};

// One device allocation, freed when it goes out of scope. Zero bytes still allocate (a valid, unused pointer).
class DeviceBuffer {
 public:
  DeviceBuffer(const CudaRuntime& runtime, std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;

  // A buffer holding a copy of `host`.
  template <typename T>
  static DeviceBuffer from(const CudaRuntime& runtime, const std::vector<T>& host) {
    DeviceBuffer buffer(runtime, host.size() * sizeof(T));
    buffer.upload(host.data());
    return buffer;
  }
  // A buffer with every byte 0xFF (NaN in every float type, -1 in integers), so an unwritten output shows.
  static DeviceBuffer poisoned(const CudaRuntime& runtime, std::size_t bytes);

  void upload(const void* host);
  // The first `count` elements, copied to the host (throws Error when count exceeds the buffer).
  template <typename T>
  std::vector<T> download(std::size_t count) const {
    std::vector<T> host(count);
    download_bytes(host.data(), count * sizeof(T));
    return host;
  }

  void* get() const { return m_device; }
  std::size_t bytes() const { return m_bytes; }

 private:
  void download_bytes(void* host, std::size_t bytes) const;

  const CudaRuntime* m_runtime;
  void* m_device = nullptr;
  std::size_t m_bytes = 0;
};

// Opens a shared object (RTLD_NOW | RTLD_LOCAL) and returns the address of `symbol`; throws Error with the
// loader's message. The library stays loaded for the life of the process, as in the harness: its kernels stay
// registered with the runtime.
void* load_symbol(const std::filesystem::path& library, const std::string& symbol);

}  // namespace evoteam::testing
