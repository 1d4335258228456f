// The Nsight Compute side of the profile stage: the command line and the raw-page CSV parser, on a fixture in the
// documented `ncu --csv --page raw --print-units base` layout (header row, units row, one row per launch; written
// by hand, not captured on a GPU).
#include <gtest/gtest.h>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

#include <algorithm>

#include "eval/cuda/cuda_ncu.hpp"

namespace evoteam::eval::cuda {
namespace {

std::vector<NcuLaunch> fixture_launches() {
  const auto path = std::filesystem::path(EVOTEAM_SOURCE_DIR) / "tests/data/cuda/ncu_raw_documented.csv";
  return parse_ncu_csv(read_file(path), path.string());
}

TEST(CudaNcu, CommandPinsMetricsAndLeavesClocksAlone) {
  NcuInvocation invocation;
  invocation.kernels = {"gemm", "epilogue"};
  invocation.launch_skip = 3;
  invocation.launch_count = 2;
  invocation.report = "/tmp/profile";
  invocation.program = {"/cache/harness", "--mode", "profile"};
  const std::vector<std::string> argv = ncu_command(invocation);
  const auto after = [&](const std::string& flag) {
    const auto found = std::find(argv.begin(), argv.end(), flag);
    return found == argv.end() || found + 1 == argv.end() ? std::string() : *(found + 1);
  };
  EXPECT_EQ(after("--clock-control"), "none");
  EXPECT_EQ(after("--page"), "raw");
  EXPECT_EQ(after("--print-units"), "base");
  EXPECT_EQ(after("--kernel-name"), "regex:^(gemm|epilogue)$");
  EXPECT_EQ(after("--launch-skip"), "3");
  EXPECT_EQ(after("--launch-count"), "2");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--csv"), argv.end());
  const std::string metrics = after("--metrics");
  for (const std::string& name : pinned_metrics()) EXPECT_NE(metrics.find(name), std::string::npos) << name;
  EXPECT_NE(metrics.find("dram__throughput.avg.pct_of_peak_sustained_elapsed"), std::string::npos);
  EXPECT_EQ(std::vector<std::string>(argv.end() - 3, argv.end()), invocation.program);
}

TEST(CudaNcu, ParsesRawPageRowsUnitsAndSeparators) {
  const std::vector<NcuLaunch> launches = fixture_launches();
  ASSERT_EQ(launches.size(), 3u);
  EXPECT_EQ(launches[0].id, 0);
  EXPECT_EQ(launches[0].kernel, "vector_copy");
  EXPECT_DOUBLE_EQ(launches[0].metrics.at("gpu__time_duration.sum"), 1024512.0);  // "1,024,512"
  EXPECT_EQ(launches[0].units.at("gpu__time_duration.sum"), "nsecond");
  EXPECT_DOUBLE_EQ(launches[2].metrics.at("sm__throughput.avg.pct_of_peak_sustained_elapsed"), 82.4);
  // "n/a" is not a number: left out rather than read as zero.
  EXPECT_EQ(launches[2].metrics.count("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"), 0u);
  // Descriptive columns are not metrics.
  EXPECT_EQ(launches[0].metrics.count("Block Size"), 0u);
  EXPECT_EQ(profile_json(launches)["launches"].size(), 3u);
}

TEST(CudaNcu, SummaryGivesBoundVerdictLimiterAndTopStalls) {
  const nlohmann::json summary = profile_summary(fixture_launches());
  EXPECT_EQ(summary["source"], "ncu");
  ASSERT_EQ(summary["kernels"].size(), 2u);
  const nlohmann::json& copy = summary["kernels"][0];
  EXPECT_EQ(copy["kernel"], "vector_copy");
  EXPECT_EQ(copy["bound"], "memory");
  EXPECT_DOUBLE_EQ(copy["memory_pct"].get<double>(), 88.0);  // mean of 88.5 and 87.5
  EXPECT_EQ(copy["top_stalls"][0]["reason"], "long_scoreboard");
  EXPECT_DOUBLE_EQ(copy["top_stalls"][0]["pct"].get<double>(), 62.5);
  EXPECT_EQ(copy["top_stalls"].size(), 3u);
  const nlohmann::json& gemm = summary["kernels"][1];
  EXPECT_EQ(gemm["bound"], "compute");
  EXPECT_EQ(gemm["occupancy_limiter"], "registers");
  EXPECT_DOUBLE_EQ(gemm["tensor_gmma_pct"].get<double>(), 71.3);
  EXPECT_DOUBLE_EQ(gemm["local_sectors"].get<double>(), 184.0);
  EXPECT_DOUBLE_EQ(gemm["bank_conflicts"].get<double>(), 4100.0);  // 4096 rounded to three digits
  EXPECT_LT(summary.dump().size(), 2000u);                         // fits in a prompt
}

TEST(CudaNcu, BoundVerdictThresholds) {
  EXPECT_EQ(bound_verdict(20, 85), Bound::memory);
  EXPECT_EQ(bound_verdict(90, 40), Bound::compute);
  EXPECT_EQ(bound_verdict(30, 35), Bound::latency);
  EXPECT_EQ(bound_verdict(-1, 50), Bound::unknown);
}

TEST(CudaNcu, RejectsOutputWithoutAHeaderRow) {
  EXPECT_THROW(parse_ncu_csv("==PROF== No kernels were profiled.\n", "profile.csv"), InvalidInput);
}

// Found by tests/fuzz/ncu_csv_fuzz: a row that mentions "Kernel Name" without having it as a cell was taken for the
// header, and every later row was indexed at column -1.
TEST(CudaNcu, RejectsAHeaderWhoseKernelNameIsNotACell) {
  const std::string text = "\"ID\",\"Kernel Name\"text,\"gpu__time_duration.sum\"\n\"0\",\"k\",\"5\"\n";
  EXPECT_THROW(parse_ncu_csv(text, "profile.csv"), InvalidInput);
}

TEST(CudaNcu, AnIdOutOfRangeIsLeftUnset) {
  const std::string text =
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"1e300\",\"k\",\"5\"\n\"-3\",\"k\",\"6\"\n";
  const std::vector<NcuLaunch> launches = parse_ncu_csv(text, "profile.csv");
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].id, -1);
  EXPECT_EQ(launches[1].id, -1);
  EXPECT_DOUBLE_EQ(launches[1].metrics.at("gpu__time_duration.sum"), 6.0);
}

}  // namespace
}  // namespace evoteam::eval::cuda
