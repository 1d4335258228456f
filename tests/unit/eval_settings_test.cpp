// The typed "eval" section: the shipped defaults convert, overlays show up typed, and the JSON form gives the
// section back, which result records (protocol.timing) and cache keys rely on.
#include <evoteam/core/config.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/eval/eval_settings.hpp>

#include <gtest/gtest.h>

namespace {

using namespace evoteam;

TEST(EvalSettings, TheDefaultsConvert) {
  const EvalSettings settings = eval_settings(Config());
  const std::vector<Stage> every_stage = {Stage::static_checks, Stage::build, Stage::correctness, Stage::timing,
                                          Stage::profile};
  EXPECT_EQ(settings.pipeline, every_stage);
  EXPECT_EQ(settings.sandbox, SandboxMode::automatic);
  EXPECT_EQ(settings.cuda.run, CudaRun::automatic);
  EXPECT_EQ(settings.correctness.secret_scope, SecretScope::evaluation);
  EXPECT_EQ(settings.timing.clock, TimingClock::thread_cpu);
  EXPECT_EQ(settings.profile.perf, PerfMode::automatic);
  EXPECT_EQ(settings.correctness.seeds, 5);
  EXPECT_EQ(settings.timing.min_samples, 20);
  EXPECT_DOUBLE_EQ(settings.stages.static_checks.timeout_s, 60);
  EXPECT_DOUBLE_EQ(settings.stages.timing.lock_timeout_s, 3600);
  EXPECT_EQ(settings.host.max_address_space_bytes(), std::uint64_t{16384} << 20);
  EXPECT_TRUE(settings.static_checks.forbid_writable_data);
  ASSERT_EQ(settings.libraries.size(), 2u);
  EXPECT_EQ(settings.libraries[0].name, "cublas");
  EXPECT_EQ(settings.libraries[0].link, (std::vector<std::string>{"-lcublas", "-lcublasLt"}));
}

TEST(EvalSettings, OverlaysShowUpTyped) {
  Config config;
  config.overlay_assignment("eval.timing.clock=wall", "--set");
  config.overlay_assignment(R"(eval.pipeline=["build","static"])", "--set");
  config.overlay_assignment("eval.cuda.run=off", "--set");
  config.overlay_assignment("eval.stages.static.timeout_s=7", "--set");
  const EvalSettings settings = eval_settings(config);
  EXPECT_EQ(settings.timing.clock, TimingClock::wall);
  // Listed in any order, the stages run in pipeline order.
  EXPECT_EQ(settings.pipeline, (std::vector<Stage>{Stage::static_checks, Stage::build}));
  EXPECT_EQ(settings.cuda.run, CudaRun::off);
  EXPECT_DOUBLE_EQ(settings.stages.static_checks.timeout_s, 7);
}

TEST(EvalSettings, TheJsonFormIsTheConfiguredSection) {
  Config config;
  config.overlay_assignment("eval.correctness.secret_scope=evaluator", "--set");
  const EvalSettings settings = eval_settings(config);
  EXPECT_EQ(nlohmann::json(settings), config.at("eval"));
  // protocol.timing in result records reads exactly as the configured section did.
  EXPECT_EQ(nlohmann::json(settings.timing).dump(), config.at("eval.timing").dump());
}

TEST(EvalSettings, ALibraryMayLeaveOutItsSymbolsOrLinkFlags) {
  const auto library = nlohmann::json::parse(R"({"name": "openblas", "link": ["-lopenblas"]})").get<LibrarySettings>();
  EXPECT_EQ(library.name, "openblas");
  EXPECT_TRUE(library.symbols.empty());
  EXPECT_EQ(library.link, std::vector<std::string>{"-lopenblas"});
}

// Loading the configuration refuses such a name; reaching the reader, it is a bug.
TEST(EvalSettings, AnUnknownNameInAClosedSetIsABug) {
  nlohmann::json section = Config().at("eval");
  section["timing"]["clock"] = "sundial";
  try {
    (void)section.get<EvalSettings>();
    FAIL() << "an unknown clock was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::internal);
    EXPECT_NE(std::string(error.what()).find("sundial"), std::string::npos) << error.what();
  }
}

}  // namespace
