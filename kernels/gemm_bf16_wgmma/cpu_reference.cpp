// gemm_bf16_wgmma computes exactly what gemm_bf16 computes (reference.cu is the same file, kept identical by
// TheWgmmaVariantIsGemmBf16WithItsRules), so its double-precision CPU reference is gemm_bf16's:
// evoteam_kernels::gemm_bf16::gemm in kernels/gemm_bf16/cpu_reference.cpp, tested in kernels_gemm_bf16_test.cpp.
// Nothing is defined here, so the one reference cannot drift into two.
#include "kernels/gemm_bf16/cpu_reference.hpp"
