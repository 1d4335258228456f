// `optimize --devices` end to end on the host target, where a list simulates that many devices: the builtin
// Optimizer sends as many candidates at once as there are devices, and the journal names the device of each; a device
// list that is garbage is refused before a run exists; `worker` on a run that has ended exits at once.
#include <gtest/gtest.h>

#include <set>

#include <evoteam/core/fs.hpp>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

using namespace evoteam::testing;

TEST(DevicePoolE2E, TwoDevicesEvaluateTogetherAndTheJournalNamesEach) {
  TempDir dir;
  ProcessResult result =
      run_evoteam({"--set", "eval.cache_dir=" + (dir / "cache").string(), "--set", "team.evaluations_per_cycle=6",
                   "optimize", k_task.string(), "--provider", "builtin", "--devices", "0,1", "--runs-dir",
                   (dir / "runs").string(), "--max-cycles", "1", "--json"},
                  std::chrono::seconds(300));
  ASSERT_TRUE(result.ok()) << describe(result);
  const nlohmann::json summary = parse_stdout(result);
  std::set<std::string> devices;
  for (const nlohmann::json& record : evaluations(summary["run_dir"].get<std::string>()))
    devices.insert(record.value("device", ""));
  // The pool hands out its first free device, so the second one measured something only while the first was busy.
  EXPECT_EQ(devices, (std::set<std::string>{"host:0", "host:1"})) << summary.dump(2);
  // status counts the device time of each.
  ProcessResult status =
      run_evoteam({"status", summary["run_dir"].get<std::string>(), "--json"}, std::chrono::seconds(30));
  ASSERT_TRUE(status.ok()) << describe(status);
  const nlohmann::json view = parse_stdout(status);
  EXPECT_GT(view["device_seconds"].value("host:0", 0.0), 0.0) << view.dump(2);
  EXPECT_GT(view["device_seconds"].value("host:1", 0.0), 0.0) << view.dump(2);
}

TEST(DevicePoolE2E, ADeviceListTheMachineCannotHonourIsRefusedBeforeARunExists) {
  TempDir dir;
  ProcessResult result = run_evoteam(
      {"optimize", k_task.string(), "--provider", "builtin", "--devices", ",", "--runs-dir", (dir / "runs").string()},
      std::chrono::seconds(60));
  EXPECT_EQ(result.exit_code, 3) << describe(result);
  EXPECT_NE(result.err.text.find("--devices"), std::string::npos) << describe(result);
  EXPECT_FALSE(only_run(dir / "runs")) << "a run directory was left behind";
}

// A worker pointed at a run that has ended exits at once instead of idling for cluster.slurm.idle_exit_s.
TEST(WorkerE2E, AWorkerOnAFinishedRunExitsAtOnce) {
  TempDir dir;
  const std::filesystem::path run = dir / "runs" / "20261130T100000Z-host_matmul";
  std::filesystem::create_directories(run);
  write_json_atomic(run / "run.json", {{"id", run.filename().string()}, {"status", "finished"}});
  ProcessResult result =
      run_evoteam({"--set", "cluster.slurm.idle_exit_s=3600", "worker", run.string()}, std::chrono::seconds(60));
  EXPECT_FALSE(result.timed_out) << "the worker idled on a finished run";
  EXPECT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.err.text.find("has ended"), std::string::npos) << describe(result);
}

// Garbage and duplicates are refused by the configuration's rule, on the host target too, before a run exists.
TEST(DevicePoolE2E, AGarbageOrRepeatedDeviceListIsRefusedOnTheHostTarget) {
  TempDir dir;
  for (const char* devices : {"x", "-1", "0,0", "999", "0,,1", "all,0", "12345678901234567890"}) {
    ProcessResult result = run_evoteam({"optimize", k_task.string(), "--provider", "builtin", "--devices", devices,
                                        "--runs-dir", (dir / "runs").string()},
                                       std::chrono::seconds(60));
    EXPECT_EQ(result.exit_code, 3) << devices << ": " << describe(result);
    EXPECT_NE(result.err.text.find("cluster.devices"), std::string::npos) << devices << ": " << describe(result);
    EXPECT_FALSE(only_run(dir / "runs")) << devices << ": a run directory was left behind";
  }
}

}  // namespace
}  // namespace evoteam
