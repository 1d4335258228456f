// A dot product on CUDA cores (fmaf): no tensor-core instruction on any arch.
__global__ void fma_kernel(const float* a, const float* b, float* out, int n) {
  float sum = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) sum = fmaf(a[i], b[i], sum);
  out[threadIdx.x] = sum;
}
