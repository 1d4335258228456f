// An independent timer for the GPU suite: times one kernel the way a person would check evoteam's harness, with
// none of the harness's code. It loads a shared object that exports the example contract
//   extern "C" cudaError_t <symbol>(const float* x, float* y, int64_t n, cudaStream_t stream)
// (kernels/common/cuda/example_kernel.cu built as a .so exports it as `example_scale`), fills x exactly as the
// harness's `--example` mode does (x[i] = (i % 1024) * 0.25), and for each sample poisons y, flushes the L2 by
// reading a buffer of twice the L2 size with a kernel of its own (reads, not a memset: a flush that leaves dirty
// lines would charge their write-back to the timed kernel), records a CUDA event, launches, records a second event
// and reads cudaEventElapsedTime. It checks y = 2x and prints one line:
//   event_timer n=<n> samples=<s> median_ms=<m> min_ms=<a> max_ms=<b>
//   event_timer SO_PATH [--symbol NAME] [--n N] [--samples S] [--warmup W]
// Exit codes: 0 measured and correct, 1 wrong output, 2 usage or load error, 3 CUDA error.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Scale = cudaError_t (*)(const float*, float*, std::int64_t, cudaStream_t);

#define CHECK(call)                                                                               \
  do {                                                                                            \
    const cudaError_t status_ = (call);                                                           \
    if (status_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "event_timer: %s failed: %s\n", #call, cudaGetErrorString(status_));   \
      std::exit(3);                                                                               \
    }                                                                                             \
  } while (0)

// Reads every 16-byte word of the buffer; the XOR is stored only if it matches a value it cannot take by chance,
// so the compiler keeps the loads.
__global__ void flush_by_reading(const uint4* buffer, std::size_t words, unsigned* sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const uint4 word = buffer[i];
    acc ^= word.x ^ word.y ^ word.z ^ word.w;
  }
  if (acc == 0x2545F491u) *sink = acc;
}

int usage() {
  std::fprintf(stderr, "usage: event_timer SO_PATH [--symbol NAME] [--n N] [--samples S] [--warmup W]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const char* library = argv[1];
  std::string symbol = "example_scale";
  std::int64_t n = 67108864;
  int samples = 30;
  int warmup = 3;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return usage();
    if (arg == "--symbol") symbol = argv[++i];
    else if (arg == "--n") n = std::atoll(argv[++i]);
    else if (arg == "--samples") samples = std::atoi(argv[++i]);
    else if (arg == "--warmup") warmup = std::atoi(argv[++i]);
    else return usage();
  }
  if (n <= 0 || samples <= 0 || warmup < 0) return usage();

  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "event_timer: cannot load %s: %s\n", library, dlerror());
    return 2;
  }
  const auto entry = reinterpret_cast<Scale>(dlsym(handle, symbol.c_str()));
  if (entry == nullptr) {
    std::fprintf(stderr, "event_timer: %s has no symbol %s\n", library, symbol.c_str());
    return 2;
  }

  int device = 0;
  CHECK(cudaGetDevice(&device));
  int l2_bytes = 0;
  CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  const std::size_t flush_bytes = 2 * static_cast<std::size_t>(l2_bytes > 0 ? l2_bytes : 64 << 20);
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);

  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  float* x = nullptr;
  float* y = nullptr;
  void* flush = nullptr;
  unsigned* sink = nullptr;
  CHECK(cudaMalloc(&x, bytes));
  CHECK(cudaMalloc(&y, bytes));
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  CHECK(cudaMemset(flush, 0x5A, flush_bytes));
  std::vector<float> host(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % 1024) * 0.25f;
  CHECK(cudaMemcpy(x, host.data(), bytes, cudaMemcpyHostToDevice));

  std::vector<float> times_ms;
  for (int s = 0; s < warmup + samples; ++s) {
    CHECK(cudaMemsetAsync(y, 0xFF, bytes, stream));  // poison: a NaN pattern, so an unwritten output shows
    flush_by_reading<<<2048, 256, 0, stream>>>(static_cast<const uint4*>(flush), flush_bytes / sizeof(uint4), sink);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(start, stream));
    const cudaError_t returned = entry(x, y, n, stream);
    CHECK(cudaEventRecord(stop, stream));
    if (returned != cudaSuccess) {
      std::fprintf(stderr, "event_timer: the kernel returned %s\n", cudaGetErrorString(returned));
      return 3;
    }
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (s >= warmup) times_ms.push_back(ms);
  }

  std::vector<float> out(static_cast<std::size_t>(n));
  CHECK(cudaMemcpy(out.data(), y, bytes, cudaMemcpyDeviceToHost));
  std::int64_t first_bad = -1;
  for (std::size_t i = 0; i < out.size() && first_bad < 0; ++i)
    if (out[i] != 2.0f * host[i]) first_bad = static_cast<std::int64_t>(i);

  std::vector<float> sorted = times_ms;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t middle = sorted.size() / 2;
  const double median = sorted.size() % 2 == 1 ? sorted[middle] : 0.5 * (sorted[middle - 1] + sorted[middle]);
  std::printf("event_timer n=%lld samples=%d median_ms=%.4f min_ms=%.4f max_ms=%.4f flush_bytes=%zu first_bad=%lld\n",
              static_cast<long long>(n), samples, median, sorted.front(), sorted.back(), flush_bytes,
              static_cast<long long>(first_bad));

  CHECK(cudaFree(sink));
  CHECK(cudaFree(flush));
  CHECK(cudaFree(y));
  CHECK(cudaFree(x));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaStreamDestroy(stream));
  dlclose(handle);
  return first_bad < 0 ? 0 : 1;
}
