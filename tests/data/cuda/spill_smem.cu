// Fixture source for the captured ptxas reports (ptxas_sm90a.txt, ptxas_sm100a.txt): one kernel with static
// shared memory and a barrier, one forced to spill by a register cap, one with a dynamic local array.
extern "C" __global__ void tile_sum(const float* in, float* out, int n) {
  __shared__ float tile[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) tile[threadIdx.x] += tile[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = tile[0];
}

extern "C" __global__ void __maxnreg__(32) spilly(const float* in, float* out, int n) {
  float acc[48];
#pragma unroll
  for (int k = 0; k < 48; ++k) acc[k] = in[(threadIdx.x * 48 + k) % n];
#pragma unroll
  for (int r = 0; r < 8; ++r) {
#pragma unroll
    for (int k = 0; k < 48; ++k) acc[k] = acc[k] * acc[(k + r + 1) % 48] + 1.0f;
  }
  float total = 0;
#pragma unroll
  for (int k = 0; k < 48; ++k) total += acc[k];
  out[threadIdx.x] = total;
}

extern "C" __global__ void local_array(const int* idx, float* out) {
  float scratch[64];
  for (int k = 0; k < 64; ++k) scratch[k] = k * 0.5f;
  out[threadIdx.x] = scratch[idx[threadIdx.x] & 63];
}
