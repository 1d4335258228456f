#pragma once
// The GPU's measured peaks (peaks.cu): one {"ev":"peaks", "peak_gflops", "peak_gbytes_per_s"} record.
namespace evoteam_harness::cuda {

// Measures on device 0; returns 0 when both figures were measured.
int measure_peaks();

}  // namespace evoteam_harness::cuda
