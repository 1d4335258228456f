#pragma once
// Shared by the evaluator tests: a small copy of kernels/host_matmul (workloads 64x48x32 and 96x32x80), a test
// configuration that keeps every phase short (also as typed eval settings), and a build cache that persists in the
// build directory so builds are shared between tests and between runs (results are never cached in tests).
#include <evoteam/core/config.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/eval/eval_settings.hpp>
#include <evoteam/eval/evaluator.hpp>
#include <evoteam/task/task.hpp>

#include <filesystem>
#include <string>

#include "support/test_cache.hpp"

namespace evoteam::testing {

inline std::filesystem::path eval_test_cache() { return test_cache_root() / "eval-test-cache"; }

inline Config eval_test_config() {
  Config config;
  config.overlay(nlohmann::json::parse(R"({
    "eval": {
      "stages": {"correctness": {"timeout_s": 90}, "timing": {"timeout_s": 90}, "profile": {"timeout_s": 60}},
      "correctness": {"call_deadline_min_s": 1.0, "edge_values": [1, 3, 17, 33], "edge_base": 8},
      "timing": {"warmup_s": 0.005, "min_time_s": 0.02, "max_time_s": 3.0, "rotation_max_sets": 8,
                 "min_sample_s": 0.0002, "bootstrap_resamples": 200},
      "profile": {"time_s": 0.02},
      "machine": {"peak_gflops": 5000.0, "peak_gbytes_per_s": 5000.0}
    }
  })"),
                 "eval test config");
  return config;
}

inline EvalSettings eval_test_settings() { return eval_settings(eval_test_config()); }

// Copies kernels/host_matmul into `dir` with small workloads; returns the task loaded from there.
inline Task small_matmul_task(const std::filesystem::path& dir) {
  const std::filesystem::path source = install_root() / "kernels" / "host_matmul";
  std::filesystem::create_directories(dir);
  for (const char* file : {"kernel.cpp", "reference.cpp", "reference.py"})
    std::filesystem::copy_file(source / file, dir / file, std::filesystem::copy_options::overwrite_existing);
  nlohmann::json task = read_json_file(source / "task.json");
  task["name"] = "host_matmul_small";
  task["workloads"] = nlohmann::json::parse(R"([
    {"name": "small", "axes": {"M": 64, "N": 48, "K": 32}},
    {"name": "tall", "axes": {"M": 96, "N": 32, "K": 80}}
  ])");
  write_json_atomic(dir / "task.json", task);
  return load_task(dir);
}

}  // namespace evoteam::testing
