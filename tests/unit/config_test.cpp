#include <evoteam/core/config.hpp>

#include <fstream>

#include <gtest/gtest.h>

#include <evoteam/core/error.hpp>

#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

using testing::TempDir;

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const InvalidInput& error) {
    return error.what();
  }
  return "";
}

TEST(Config, DefaultsHoldEveryShippedKey) {
  Config config;
  EXPECT_EQ(config.get<std::string>("store.runs_dir"), "runs");
  EXPECT_GT(config.get<double>("process.kill_grace_s"), 0.0);
}

TEST(Config, LaterLayersWin) {
  Config config;
  config.overlay({{"store", {{"runs_dir", "from-file"}}}}, "file.json");
  EXPECT_EQ(config.get<std::string>("store.runs_dir"), "from-file");
  config.overlay_env({{"EVOTEAM_STORE__RUNS_DIR", "from-env"}});
  EXPECT_EQ(config.get<std::string>("store.runs_dir"), "from-env");
  config.overlay_assignment("store.runs_dir=from-flag", "--set");
  EXPECT_EQ(config.get<std::string>("store.runs_dir"), "from-flag");
  // Keys not mentioned by a layer keep their earlier value.
  EXPECT_EQ(config.get<std::string>("log.verbosity"), "normal");
}

TEST(Config, UnknownKeyNamesSourceAndPath) {
  Config config;
  std::string message = error_of([&] { config.overlay({{"store", {{"runs_dri", "x"}}}}, "my.json"); });
  EXPECT_NE(message.find("my.json"), std::string::npos) << message;
  EXPECT_NE(message.find("store.runs_dri"), std::string::npos) << message;
}

TEST(Config, WrongTypeNamesSourceAndPath) {
  Config config;
  std::string message = error_of([&] { config.overlay({{"process", {{"output_cap_bytes", "big"}}}}, "my.json"); });
  EXPECT_NE(message.find("process.output_cap_bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("integer"), std::string::npos) << message;
}

TEST(Config, IntegerAcceptedWhereNumberExpected) {
  Config config;
  config.overlay({{"process", {{"kill_grace_s", 3}}}}, "x");
  EXPECT_DOUBLE_EQ(config.get<double>("process.kill_grace_s"), 3.0);
}

TEST(Config, EnvironmentValuesAreTypedBySchema) {
  Config config;
  config.overlay_env({{"EVOTEAM_PROCESS__OUTPUT_CAP_BYTES", "1234"}, {"EVOTEAM_HOME", "/ignored"}});
  EXPECT_EQ(config.get<int>("process.output_cap_bytes"), 1234);
  std::string message = error_of([&] { config.overlay_env({{"EVOTEAM_PROCESS__OUTPUT_CAP_BYTES", "lots"}}); });
  EXPECT_NE(message.find("EVOTEAM_PROCESS__OUTPUT_CAP_BYTES"), std::string::npos) << message;
}

TEST(Config, MalformedAssignmentIsAnError) {
  Config config;
  EXPECT_FALSE(error_of([&] { config.overlay_assignment("no-equals-sign", "--set"); }).empty());
  EXPECT_FALSE(error_of([&] { config.overlay_assignment("nosuch.key=1", "--set"); }).empty());
}

TEST(Config, BrokenFileNamesTheFile) {
  TempDir dir;
  std::ofstream(dir / "broken.json") << "{ \"store\": { \"runs_dir\": ";
  Config config;
  std::string message = error_of([&] { config.overlay_file(dir / "broken.json"); });
  EXPECT_NE(message.find("broken.json"), std::string::npos) << message;
}

// Every shipped configuration file must load over the defaults (a test that walks configs/).
TEST(Config, EveryShippedConfigLoads) {
  std::filesystem::path configs = std::filesystem::path(EVOTEAM_SOURCE_DIR) / "configs";
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(configs)) {
    if (entry.path().extension() != ".json" || entry.path().filename() == "models.json") continue;
    Config config;
    EXPECT_NO_THROW(config.overlay_file(entry.path())) << entry.path();
    ++loaded;
  }
  EXPECT_GE(loaded, 1);
}

}  // namespace
}  // namespace evoteam
