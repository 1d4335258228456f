// The trusted CUDA harness's entry point. It owns every allocation (one guarded cudaMalloc per buffer), the
// stream, the events and the L2 flush buffer; the implementation gets device pointers, sizes and the stream
// through the task's entry point. Results go to the record channel only (--result-fd), one JSON line per event.
//   cuda_harness --result-fd N --self-test        host-side logic only; needs no device
//   cuda_harness --result-fd N --probe            health probe (a fresh process after a fault)
//   cuda_harness --result-fd N --example [--n E] [--samples S] [--candidate lib.so]
//                                                 times the built-in example implementation, or the `scale`
//                                                 entry point (same contract: y = 2x) of a shared object
//   cuda_harness --result-fd N --peaks            measured memory bandwidth and bf16 GEMM rate of device 0
//   cuda_harness --plan plan.json --result-fd N [--candidate X.so] [--baseline Y.so] [--reference Z.so]
//                                                 the plan-driven modes (plan_modes.hpp), through the task's glue
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../record.hpp"
#include "../oracle_files.hpp"
#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "l2_flush.hpp"
#include "peaks.hpp"
#include "plan_modes.hpp"
#include "rank_exchange.hpp"
#include "rank_group.hpp"
#include "../harness_abi.h"

extern "C" cudaError_t example_scale(const float* x, float* y, std::int64_t n, cudaStream_t stream);

namespace evoteam_harness::cuda {
namespace {

using ScaleEntry = cudaError_t (*)(const float*, float*, std::int64_t, cudaStream_t);

int self_test() {
  int failed = 0;
  int checks = 0;
  const auto expect = [&](bool condition, const char* what) {
    ++checks;
    if (condition) return;
    ++failed;
    JsonLine line;
    emit(line.field("ev", "self_test_failure").field("check", what));
  };
  expect(is_sticky(cudaErrorIllegalAddress), "illegal address is sticky");
  expect(is_sticky(cudaErrorMisalignedAddress), "misaligned address is sticky");
  expect(is_sticky(cudaErrorLaunchFailure), "launch failure is sticky");
  expect(!is_sticky(cudaErrorInvalidConfiguration), "invalid configuration is not sticky");
  expect(std::strcmp(failure_class(cudaErrorIllegalAddress, "candidate"), "RUNTIME_FAULT") == 0, "class of a fault");
  expect(std::strcmp(failure_class(cudaErrorInvalidConfiguration, "candidate"), "LAUNCH_ERROR") == 0, "class of a bad launch");
  expect(std::strcmp(failure_class(cudaErrorMemoryAllocation, "harness"), "INFRA_ERROR") == 0, "class of a harness failure");
  const GuardLayout layout = guard_layout(1000, 100);
  expect(layout.guard_before % k_payload_alignment == 0 && layout.guard_before >= 100, "payload stays aligned");
  expect(layout.total() == layout.guard_before + 1000 + 100, "layout adds up");
  std::vector<unsigned char> before(256, k_guard_before);
  std::vector<unsigned char> after(64, k_guard_after);
  expect(!find_guard_damage(before, after).damaged, "clean guards");
  after[3] = 0;
  const GuardDamage damage = find_guard_damage(before, after);
  expect(damage.damaged && damage.after && damage.offset == 3, "damage after the payload located");
  before[255] = 1;
  expect(find_guard_damage(before, after).offset == 0 && !find_guard_damage(before, after).after, "damage before the payload wins");
  expect(flush_bytes(std::size_t{50} << 20) == std::size_t{100} << 20, "flush is twice the L2");
  expect(rank_seed(42, 0) != rank_seed(42, 1) && rank_seed(42, 1) == rank_seed(42, 1), "ranks get their own seeds");
  expect(ranks::id_file("/x/ids", 3) == "/x/ids.3.id", "communicator id files are numbered");
  const int ranks_axis = evoteam_glue_ranks_axis();
  expect(ranks_axis >= -1 && ranks_axis < evoteam_glue_axis_count(), "the glue's ranks axis is one of its axes");
  if (ranks_axis < 0) {
    unsigned char id[k_comm_id_bytes];
    expect(evoteam_glue_comm_unique_id(id, k_comm_id_bytes) != 0, "a task without ranks has no communicator");
  }
  JsonLine line;
  emit(line.field("ev", "self_test").field("checks", checks).field("failed", failed));
  return failed == 0 ? 0 : 1;
}

// Whether the GPU is usable: after a candidate's fault the evaluator runs this in a fresh process; a failure here
// is INFRA_ERROR (the machine, not the candidate).
int probe() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    JsonLine line;
    emit(line.field("ev", "no_device").field("class", "INFRA_ERROR").field("error", status == cudaSuccess ? "no device" : cudaGetErrorName(status)));
    return k_exit_infra;
  }
  cudaDeviceProp properties{};
  EVOTEAM_CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));
  char uuid[64] = {0};
  for (int i = 0; i < 16; ++i)
    std::snprintf(uuid + 2 * i, 3, "%02x", static_cast<unsigned char>(properties.uuid.bytes[i]));
  DeviceBuffer x(4096 * sizeof(float), 256, "x");
  DeviceBuffer y(4096 * sizeof(float), 256, "y");
  EVOTEAM_CUDA_CHECK(cudaMemset(x.data(), 0, x.bytes()));
  check_candidate(example_scale(static_cast<const float*>(x.data()), static_cast<float*>(y.data()), 4096, nullptr), "probe");
  JsonLine line;
  emit(line.field("ev", "probe").field("ok", true).field("device", properties.name).field("uuid", uuid).field("devices", count)
           .field("cc", std::to_string(properties.major) + "." + std::to_string(properties.minor))
           .field("l2_bytes", static_cast<std::int64_t>(properties.l2CacheSize)));
  return 0;
}

int example(std::int64_t n, int samples, ScaleEntry entry) {
  if (probe() != 0) return k_exit_infra;
  set_phase("setup");
  cudaStream_t stream = nullptr;
  EVOTEAM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  EVOTEAM_CUDA_CHECK(cudaEventCreate(&start));
  EVOTEAM_CUDA_CHECK(cudaEventCreate(&stop));
  // Persisting-L2 state left by an earlier process would favour whoever runs second.
  EVOTEAM_CUDA_CHECK(cudaCtxResetPersistingL2Cache());
  L2Flusher flusher(0);
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  DeviceBuffer x(bytes, 4096, "x");
  DeviceBuffer y(bytes, 4096, "y");
  std::vector<float> host(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % 1024) * 0.25f;
  EVOTEAM_CUDA_CHECK(cudaMemcpy(x.data(), host.data(), bytes, cudaMemcpyHostToDevice));
  std::vector<double> times_ms;
  for (int s = 0; s < samples; ++s) {
    EVOTEAM_CUDA_CHECK(cudaMemsetAsync(y.data(), 0xFF, bytes, stream));  // poison: NaN pattern
    flusher.flush(stream);
    EVOTEAM_CUDA_CHECK(cudaEventRecord(start, stream));
    const cudaError_t returned = entry(static_cast<const float*>(x.data()), static_cast<float*>(y.data()), n, stream);
    EVOTEAM_CUDA_CHECK(cudaEventRecord(stop, stream));
    check_candidate(returned, "timing");
    float ms = 0;
    EVOTEAM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times_ms.push_back(ms);
  }
  std::vector<float> out(static_cast<std::size_t>(n));
  EVOTEAM_CUDA_CHECK(cudaMemcpy(out.data(), y.data(), bytes, cudaMemcpyDeviceToHost));
  std::int64_t first_bad = -1;
  for (std::size_t i = 0; i < out.size() && first_bad < 0; ++i)
    if (out[i] != 2.0f * host[i]) first_bad = static_cast<std::int64_t>(i);
  const GuardDamage damage_x = x.check_guards();
  const GuardDamage damage_y = y.check_guards();
  JsonLine line;
  line.field("ev", "example").field("n", n).field("flush_bytes", static_cast<std::int64_t>(flusher.bytes()))
      .array("times_ms", times_ms).field("first_bad", first_bad)
      .field("guards_ok", !damage_x.damaged && !damage_y.damaged)
      .field("status", first_bad < 0 && !damage_x.damaged && !damage_y.damaged ? "ok" : "wrong");
  emit(line);
  EVOTEAM_CUDA_CHECK(cudaEventDestroy(start));
  EVOTEAM_CUDA_CHECK(cudaEventDestroy(stop));
  EVOTEAM_CUDA_CHECK(cudaStreamDestroy(stream));
  return first_bad < 0 ? 0 : 1;
}

// Loads an implementation's entry point by the task's entry name; null path -> not loaded. With `planned` (a
// trusted vendor library, never a candidate's code) its optional `<entry>_plan` hook too.
Implementation load_implementation(const char* path, const char* phase, bool planned = false) {
  Implementation implementation;
  implementation.phase = phase;
  if (path == nullptr) return implementation;
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    throw std::runtime_error(std::string("cannot load the ") + phase + ": " + (why == nullptr ? path : why));
  }
  implementation.entry = dlsym(library, evoteam_glue_entry_name());
  if (implementation.entry == nullptr)
    throw std::runtime_error(std::string("the ") + phase + " does not define " + evoteam_glue_entry_name());
  if (planned) implementation.plan = dlsym(library, (std::string(evoteam_glue_entry_name()) + "_plan").c_str());
  return implementation;
}

int run_plan(const char* plan_path, const char* const paths[3], bool candidate_planned) {
  CudaContext context;
  try {
    context.plan = load_plan(plan_path);
    emit(JsonLine().field("ev", "start").field("mode", context.plan.mode).field("pid", static_cast<std::int64_t>(getpid())));
    context.candidate = load_implementation(paths[0], "candidate", candidate_planned);
    context.baseline = load_implementation(paths[1], "baseline");
    context.reference = load_implementation(paths[2], "reference");
  } catch (const std::exception& error) {
    emit(JsonLine().field("ev", "load_error").field("message", error.what()));
    return 3;
  }
  // A missing or unusable GPU is the machine's problem: say so before anything is charged to the candidate.
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    emit(JsonLine().field("ev", "no_device").field("class", "INFRA_ERROR").field("error", status == cudaSuccess ? "no device" : cudaGetErrorName(status)));
    return k_exit_infra;
  }
  set_phase("setup");
  std::unique_ptr<RankGroup> ranks;
  if (context.plan.ranks.enabled) {
    // One GPU per rank; the group's communicators come per workload (rank_group.hpp).
    if (context.plan.ranks.device >= count) {
      emit(JsonLine().field("ev", "no_device").field("class", "INFRA_ERROR")
               .field("error", "rank " + std::to_string(context.plan.ranks.rank) + " needs device " +
                                   std::to_string(context.plan.ranks.device) + "; " + std::to_string(count) + " visible"));
      return k_exit_infra;
    }
    EVOTEAM_CUDA_CHECK(cudaSetDevice(context.plan.ranks.device));
    ranks = std::make_unique<RankGroup>(context.plan);
    context.ranks = ranks.get();
  }
  EVOTEAM_CUDA_CHECK(cudaStreamCreateWithFlags(&context.stream, cudaStreamNonBlocking));
  set_phase("harness");
  try {
    const std::string& mode = context.plan.mode;
    int code = 2;
    if (mode == "reference") code = run_reference(context);
    else if (mode == "correctness") code = run_correctness(context);
    else if (mode == "timing") code = run_timing(context);
    else if (mode == "profile") code = run_profile(context);
    else if (mode == "compare") code = run_compare_files(context.plan);
    else throw std::runtime_error("unknown mode " + mode);
    if (ranks) ranks->close();
    EVOTEAM_CUDA_CHECK(cudaStreamDestroy(context.stream));
    emit(JsonLine().field("ev", "done").field("mode", mode));
    return code;
  } catch (const std::exception& error) {
    emit(JsonLine().field("ev", "error").field("message", error.what()));
    // A peer may still be inside a collective with this rank: leave the communicator to the process's end.
    static_cast<void>(ranks.release());
    return 2;
  }
}

}  // namespace
}  // namespace evoteam_harness::cuda

int main(int argc, char** argv) {
  int fd = -1;
  std::string mode;
  std::int64_t n = std::int64_t{1} << 24;
  int samples = 20;
  const char* candidate = nullptr;
  const char* plan = nullptr;
  const char* paths[3] = {nullptr, nullptr, nullptr};  // candidate, baseline, reference
  bool candidate_planned = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--result-fd" && i + 1 < argc) fd = std::atoi(argv[++i]);
    else if (arg == "--plan" && i + 1 < argc) plan = argv[++i];
    else if (arg == "--baseline" && i + 1 < argc) paths[1] = argv[++i];
    else if (arg == "--reference" && i + 1 < argc) paths[2] = argv[++i];
    else if (arg == "--n" && i + 1 < argc) n = std::atoll(argv[++i]);
    else if (arg == "--samples" && i + 1 < argc) samples = std::atoi(argv[++i]);
    else if (arg == "--candidate" && i + 1 < argc) candidate = argv[++i];
    else if (arg == "--candidate-plan-hook") candidate_planned = true;
    else mode = arg;
  }
  if (fd < 0) {
    std::fprintf(stderr, "cuda_harness: --result-fd is required\n");
    return 2;
  }
  evoteam_harness::open_record_channel(fd);
  paths[0] = candidate;
  if (plan != nullptr) return evoteam_harness::cuda::run_plan(plan, paths, candidate_planned);
  if (mode == "--self-test") return evoteam_harness::cuda::self_test();
  if (mode == "--probe") return evoteam_harness::cuda::probe();
  if (mode == "--peaks") return evoteam_harness::cuda::probe() == 0 ? evoteam_harness::cuda::measure_peaks() : 4;
  if (mode == "--example") {
    evoteam_harness::cuda::ScaleEntry entry = example_scale;
    if (candidate != nullptr) {
      void* library = dlopen(candidate, RTLD_NOW | RTLD_LOCAL);
      void* symbol = library == nullptr ? nullptr : dlsym(library, "scale");
      if (symbol == nullptr) {
        evoteam_harness::JsonLine line;
        const char* why = dlerror();
        evoteam_harness::emit(line.field("ev", "load_error").field("class", "BUILD_ERROR").field("error", why == nullptr ? "no symbol scale" : why));
        return 2;
      }
      entry = reinterpret_cast<evoteam_harness::cuda::ScaleEntry>(symbol);
    }
    return evoteam_harness::cuda::example(n, samples, entry);
  }
  std::fprintf(stderr, "cuda_harness: unknown mode %s\n", mode.c_str());
  return 2;
}
