// GPU tests carry the "gpu" CTest label (suite names starting with Gpu) and skip with the reason without one.
#include <evoteam/core/inventory.hpp>

#include <gtest/gtest.h>

namespace evoteam {
namespace {

TEST(GpuInventory, VisibleDeviceHasNameAndDriver) {
  std::optional<std::string> gpu = detect_gpu(system_runner());
  if (!gpu) GTEST_SKIP() << "no CUDA device visible (nvidia-smi absent or no GPU)";
  EXPECT_NE(gpu->find("driver"), std::string::npos) << *gpu;
}

TEST(Inventory, DoctorListsEveryToolWithAFixWhenMissing) {
  std::vector<ToolProbe> probes = probe_inventory(system_runner());
  ASSERT_GE(probes.size(), 8u);
  bool has_compiler = false;
  for (const ToolProbe& probe : probes) {
    if (probe.name == "c++ compiler") has_compiler = probe.usable;
    if (!probe.usable) {
      EXPECT_FALSE(probe.fix.empty()) << probe.name;
    }
    EXPECT_EQ(probe.detail.find("sk-"), std::string::npos) << "a key value leaked into " << probe.name;
  }
  EXPECT_TRUE(has_compiler);
}

}  // namespace
}  // namespace evoteam
