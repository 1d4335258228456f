// A minimal sm_90a kernel on the warpgroup MMA path: fence, one wgmma.mma_async (m64n16k16, bf16 in, fp32
// accumulators, both operands through shared-memory matrix descriptors), commit and wait. It computes nothing
// meaningful; it exists so that ptxas emits HGMMA and the PTX holds wgmma.mma_async. Other archs get a plain
// path, as a candidate's code must (wgmma exists on sm_90a only).
#include <cstdint>

__global__ void wgmma_kernel(float* out, std::uint64_t desc_a, std::uint64_t desc_b) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  float d[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %10, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "l"(desc_a), "l"(desc_b), "r"(1));
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  for (int i = 0; i < 8; ++i) out[threadIdx.x * 8 + i] = d[i];
#else
  out[threadIdx.x] = static_cast<float>(desc_a ^ desc_b);
#endif
}
