// The hostile corpus (tests/data/hostile/host): every candidate gets exactly its expected verdict, the
// evaluator survives all of them, and none is ever reported faster than the baseline.
#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/eval/evaluator.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "support/temp_dir.hpp"
#include "unit/eval_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using namespace evoteam;
using evoteam::testing::TempDir;

fs::path corpus() { return install_root() / "tests" / "data" / "hostile" / "host"; }

std::vector<std::string> corpus_entries() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(corpus()))
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

class HostileCorpus : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    s_dir = new TempDir();
    s_task = new Task(evoteam::testing::small_matmul_task(s_dir->path() / "task"));
  }
  static void TearDownTestSuite() {
    delete s_task;
    delete s_dir;
  }
  static TempDir* s_dir;
  static Task* s_task;
};

TempDir* HostileCorpus::s_dir = nullptr;
Task* HostileCorpus::s_task = nullptr;

TEST_P(HostileCorpus, GetsItsExpectedVerdictAndIsNeverFaster) {
  const fs::path candidate_dir = corpus() / GetParam();
  const nlohmann::json expect = read_json_file(candidate_dir / "expect.json");
  Config config = evoteam::testing::eval_test_config();
  if (expect.contains("config")) config.overlay(expect["config"], "expect.json");
  Evaluator evaluator(eval_settings(config), system_runner(), evoteam::testing::eval_test_cache());
  EvalOptions options;
  options.result_cache = CachePolicy::bypass;
  EvalResult result = evaluator.evaluate(*s_task, Candidate{candidate_dir, {}}, options);

  const std::string expected = expect.at("verdict").get<std::string>();
  EXPECT_EQ(to_string(result.verdict), expected)
      << "reason: " << result.reason << "\nevidence: " << result.evidence.dump()
      << "\nbuild log: " << result.build_log.substr(0, 2000);
  if (expect.contains("reason")) {
    EXPECT_NE(result.reason.find(expect["reason"].get<std::string>()), std::string::npos)
        << "reason: " << result.reason;
  }
  EXPECT_FALSE(is_infra(result.verdict)) << result.reason;
  if (result.verdict == Verdict::pass) {
    ASSERT_TRUE(result.speedup.has_value());
    if (expect.value("slower", false)) {
      EXPECT_LT(*result.speedup, 1.0);
    }
  } else {
    EXPECT_FALSE(result.speedup.has_value() && *result.speedup > 1.0)
        << "a hostile candidate was reported faster than the baseline: " << *result.speedup;
  }
  // The verdict is recorded with its evidence.
  const nlohmann::json json = result.to_json();
  EXPECT_EQ(json["verdict"], expected);
  EXPECT_TRUE(json["evidence"].is_object());
}

INSTANTIATE_TEST_SUITE_P(Host, HostileCorpus, ::testing::ValuesIn(corpus_entries()),
                         [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

}  // namespace
