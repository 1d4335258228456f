// Fixture source for the captured PTX and SASS (tensor_ops_sm90a.ptx, sass_sm90a_tensor.txt): one warp-level
// mma.sync kernel (HMMA) and one warpgroup wgmma kernel (HGMMA, sm_90a only). The operands are not meaningful;
// only the instructions matter.
#include <cstdint>

extern "C" __global__ void mma_sync_tile(const unsigned* a, const unsigned* b, float* d) {
  unsigned a0 = a[threadIdx.x], a1 = a[threadIdx.x + 32], a2 = a[threadIdx.x + 64], a3 = a[threadIdx.x + 96];
  unsigned b0 = b[threadIdx.x], b1 = b[threadIdx.x + 32];
  float c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  d[threadIdx.x * 4 + 0] = c0;
  d[threadIdx.x * 4 + 1] = c1;
  d[threadIdx.x * 4 + 2] = c2;
  d[threadIdx.x * 4 + 3] = c3;
}

extern "C" __global__ void wgmma_tile(std::uint64_t desc_a, std::uint64_t desc_b, float* d) {
  float c0 = 0, c1 = 0, c2 = 0, c3 = 0;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.fence.sync.aligned;\n"
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0,%1,%2,%3}, %4, %5, p, 1, 1, 0, 0;\n"
      "wgmma.commit_group.sync.aligned;\n"
      "wgmma.wait_group.sync.aligned 0;\n}\n"
      : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
      : "l"(desc_a), "l"(desc_b));
#endif
  d[threadIdx.x * 4 + 0] = c0;
  d[threadIdx.x * 4 + 1] = c1;
  d[threadIdx.x * 4 + 2] = c2;
  d[threadIdx.x * 4 + 3] = c3;
}
