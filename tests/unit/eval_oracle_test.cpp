// The Python oracle (eval/oracle.hpp): a task's python_reference run on the correctness inputs and compared with
// the C++ reference. These run the real runner script with a real numpy: the one scripts/test installs into
// <build>/pyenv, or EVOTEAM_TEST_PYTHON. Without one they skip, unless EVOTEAM_REQUIRE_ORACLE is set (CI).
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/eval/evaluator.hpp>
#include <evoteam/eval/oracle.hpp>

#include <gtest/gtest.h>

#include <cstdlib>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "unit/eval_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using namespace evoteam;
using evoteam::testing::TempDir;

// The Python with numpy the tests use: EVOTEAM_TEST_PYTHON, else the build tree's pyenv.
std::string test_python() {
  if (const char* python = std::getenv("EVOTEAM_TEST_PYTHON"); python != nullptr && *python != '\0') return python;
  return (fs::path(EVOTEAM_TEST_HELPERS_DIR) / "pyenv" / "bin" / "python").string();
}

// Why the oracle tests cannot run here, or "" when they can.
std::string missing_numpy() {
  OracleSettings settings;
  settings.python = test_python();
  const PythonProbe probe = probe_python(system_runner(), settings);
  if (!probe.runs) return probe.problem;
  if (!probe.numpy) return test_python() + " has no numpy";
  return "";
}

#define REQUIRE_NUMPY()                                                                                         \
  do {                                                                                                          \
    static const std::string why = missing_numpy();                                                             \
    if (!why.empty()) {                                                                                         \
      if (std::getenv("EVOTEAM_REQUIRE_ORACLE") != nullptr) FAIL() << "EVOTEAM_REQUIRE_ORACLE is set: " << why; \
      GTEST_SKIP() << why << " (scripts/test installs numpy into <build>/pyenv)";                               \
    }                                                                                                           \
  } while (false)

EvalSettings oracle_settings(double timeout_s = 120) {
  EvalSettings settings = evoteam::testing::eval_test_settings();
  settings.oracle.python = test_python();
  settings.oracle.timeout_s = timeout_s;
  return settings;
}

// The small host_matmul copy with `body` as its Python reference's run(A, B).
Task matmul_with_reference(const TempDir& dir, const std::string& body, const std::string& framework = "numpy") {
  evoteam::testing::small_matmul_task(dir / "task");
  write_file_atomic(dir / "task" / "reference.py", "import numpy as np\n\n\ndef run(A, B):\n" + body);
  nlohmann::json task = read_json_file(dir / "task" / "task.json");
  task["python_reference"]["framework"] = framework;
  write_json_atomic(dir / "task" / "task.json", task);
  return load_task(dir / "task");
}

OracleReport check(const Task& task, const EvalSettings& settings) {
  Evaluator evaluator(settings, system_runner(), evoteam::testing::eval_test_cache());
  return evaluator.check_oracle(task);
}

TEST(Oracle, TheNumpyReferenceOfHostMatmulAgreesWithTheCppReference) {
  REQUIRE_NUMPY();
  TempDir dir;
  evoteam::testing::small_matmul_task(dir / "task");
  const OracleReport report = check(load_task(dir / "task"), oracle_settings());
  ASSERT_EQ(report.status, OracleStatus::agreed) << report.summary();
  EXPECT_GT(report.trials, 2);
  ASSERT_EQ(report.outputs.size(), 1u);
  EXPECT_EQ(report.outputs[0].tensor, "C");
  EXPECT_EQ(report.outputs[0].trials, report.trials);
  EXPECT_TRUE(report.outputs[0].passed());
  EXPECT_LE(report.outputs[0].normwise, 1e-6);
  EXPECT_FALSE(report.framework_version.empty());
  EXPECT_EQ(report.device, "cpu");
}

TEST(Oracle, AReferenceOffByOneColumnIsReportedAsDisagreeing) {
  REQUIRE_NUMPY();
  TempDir dir;
  const Task task = matmul_with_reference(dir, "    return np.roll(A @ B, 1, axis=1)\n");
  const OracleReport report = check(task, oracle_settings());
  ASSERT_EQ(report.status, OracleStatus::disagreed) << report.summary();
  ASSERT_EQ(report.outputs.size(), 1u);
  EXPECT_FALSE(report.outputs[0].passed());
  EXPECT_GT(report.outputs[0].max_abs, 0.1);
  EXPECT_NE(report.outputs[0].first_failure.find("mismatch"), std::string::npos) << report.outputs[0].first_failure;
  EXPECT_NE(report.summary().find("FAIL"), std::string::npos);
}

TEST(Oracle, AReferenceThatRaisesIsAFailureNamingTheTrialAndTheException) {
  REQUIRE_NUMPY();
  TempDir dir;
  const Task task = matmul_with_reference(dir, "    raise ValueError('deliberately broken')\n");
  const OracleReport report = check(task, oracle_settings());
  EXPECT_EQ(report.status, OracleStatus::failed);
  EXPECT_NE(report.reason.find("ValueError: deliberately broken"), std::string::npos) << report.reason;
  EXPECT_NE(report.reason.find("trial 0"), std::string::npos) << report.reason;
}

TEST(Oracle, AReferenceWithTheWrongShapeIsAFailureNamingTheOutput) {
  REQUIRE_NUMPY();
  TempDir dir;
  const Task task = matmul_with_reference(dir, "    return (A @ B)[1:]\n");
  const OracleReport report = check(task, oracle_settings());
  EXPECT_EQ(report.status, OracleStatus::failed);
  EXPECT_NE(report.reason.find("output C has shape"), std::string::npos) << report.reason;
}

TEST(Oracle, AReferenceThatHangsIsStoppedAtTheDeadline) {
  REQUIRE_NUMPY();
  TempDir dir;
  const Task task = matmul_with_reference(dir, "    import time\n    time.sleep(120)\n");
  const OracleReport report = check(task, oracle_settings(2));
  EXPECT_EQ(report.status, OracleStatus::failed);
  EXPECT_NE(report.reason.find("did not finish within 2 s"), std::string::npos) << report.reason;
  EXPECT_LT(report.wall_s, 60);
}

TEST(Oracle, AFrameworkThatDoesNotImportSkipsTheOracleSayingSo) {
  REQUIRE_NUMPY();
  TempDir dir;
  const Task task = matmul_with_reference(dir, "    return A @ B\n", "torch");
  const EvalSettings settings = oracle_settings();
  if (probe_python(system_runner(), settings.oracle).torch) GTEST_SKIP() << settings.oracle.python << " imports torch";
  const OracleReport report = check(task, settings);
  EXPECT_EQ(report.status, OracleStatus::skipped);
  EXPECT_EQ(report.reason, "torch is not importable by " + settings.oracle.python + "; the oracle was skipped");
}

TEST(Oracle, APythonThatDoesNotRunSkipsTheOracle) {
  TempDir dir;
  evoteam::testing::small_matmul_task(dir / "task");
  EvalSettings settings = oracle_settings();
  settings.oracle.python = (dir / "no-such-python").string();
  const OracleReport report = check(load_task(dir / "task"), settings);
  EXPECT_EQ(report.status, OracleStatus::skipped);
  EXPECT_NE(report.reason.find("no-such-python"), std::string::npos) << report.reason;
}

TEST(Oracle, ATaskWithoutAPythonReferenceIsRefused) {
  TempDir dir;
  evoteam::testing::small_matmul_task(dir / "task");
  nlohmann::json task = read_json_file(dir / "task" / "task.json");
  task.erase("python_reference");
  write_json_atomic(dir / "task" / "task.json", task);
  EXPECT_THROW(check(load_task(dir / "task"), oracle_settings()), InvalidInput);
}

TEST(OracleCli, EvalWithOracleAddsTheReportToTheJsonAndExitsByIt) {
  REQUIRE_NUMPY();
  TempDir dir;
  evoteam::testing::small_matmul_task(dir / "task");
  const std::vector<std::string> args = {"--set",
                                         "eval.oracle.python=" + test_python(),
                                         "eval",
                                         (dir / "task").string(),
                                         "--stages",
                                         "static,build",
                                         "--oracle",
                                         "--json",
                                         "--no-cache",
                                         "--cache-dir",
                                         evoteam::testing::eval_test_cache().string()};
  ProcessResult result = evoteam::testing::run_evoteam(args, std::chrono::seconds(300));
  ASSERT_EQ(result.exit_code, 0) << evoteam::testing::describe(result);
  nlohmann::json json = nlohmann::json::parse(result.out.text);
  EXPECT_EQ(json["verdict"], "PASS");
  EXPECT_EQ(json["oracle"]["status"], "agreed");
  EXPECT_EQ(json["oracle"]["outputs"][0]["tensor"], "C");
  EXPECT_EQ(json["oracle"]["outputs"][0]["passed"], true);

  write_file_atomic(dir / "task" / "reference.py", "import numpy as np\n\n\ndef run(A, B):\n    return A @ B + 1\n");
  result = evoteam::testing::run_evoteam(args, std::chrono::seconds(300));
  EXPECT_EQ(result.exit_code, 1) << evoteam::testing::describe(result);
  EXPECT_EQ(evoteam::testing::parse_stdout(result)["oracle"]["status"], "disagreed");
}

TEST(OracleCli, DoctorSaysWhichPythonAndWhatItImports) {
  REQUIRE_NUMPY();
  ProcessResult result = evoteam::testing::run_evoteam(
      {"--set", "eval.oracle.python=" + test_python(), "doctor", "--json"}, std::chrono::seconds(120));
  nlohmann::json json = evoteam::testing::parse_stdout(result);
  EXPECT_EQ(json["python_oracle"]["python"], test_python());
  EXPECT_EQ(json["python_oracle"]["runs"], true);
  EXPECT_TRUE(json["python_oracle"]["numpy"].is_string());
  bool listed = false;
  for (const nlohmann::json& tool : json["tools"]) listed |= tool["name"] == "numpy (oracle)" && tool["usable"] == true;
  EXPECT_TRUE(listed) << json.dump();

  result = evoteam::testing::run_evoteam({"--set", "eval.oracle.python=/no/such/python", "doctor"},
                                         std::chrono::seconds(120));
  EXPECT_NE(result.out.text.find("python (oracle)"), std::string::npos) << result.out.text;
  EXPECT_NE(result.out.text.find("/no/such/python"), std::string::npos) << result.out.text;
}

}  // namespace
