// A published Solution end to end with real nvcc: `evoteam import-solution` writes gpt-5.2's gqa decode kernel as
// a candidate of kernels/gqa_paged_decode_h32_kv8_d128_ps1 (here narrowed to sm_90a to compile one arch), and
// `evoteam eval --stages static,build` judges it. The import must compile (the torch stand-in and the glue are
// ours), and whatever the static stage rejects must be the Solution's own code, never the stand-in's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include <evoteam/core/fs.hpp>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

using namespace evoteam::testing;
using json = nlohmann::json;
namespace fs = std::filesystem;

TEST(PublishedSolutionE2E, AnImportedPublishedSolutionBuildsOrIsRejectedForItsOwnCode) {
  if (!fs::exists("/usr/local/cuda/bin/nvcc") && std::system("command -v nvcc >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "nvcc is not installed";
  TempDir dir;
  const fs::path root = EVOTEAM_SOURCE_DIR;
  const std::string name = "gqa_paged_decode_h32_kv8_d128_ps1";
  const fs::path task = dir / "task";
  copy_tree(root / "kernels" / name, task);
  std::string text = read_file(task / "task.json");
  const std::string both = "\"archs\": [\"sm_90a\", \"sm_100a\"]";
  ASSERT_NE(text.find(both), std::string::npos);
  text.replace(text.find(both), both.size(), "\"archs\": [\"sm_90a\"]");
  write_file_atomic(task / "task.json", text);

  const fs::path solution =
      root / "tests/data/flashinfer_trace/solutions" / name / ("gpt-5.2_" + name + "_cuda_optimized_r10_c0_high.json");
  const std::string candidate = (dir / "candidate").string();
  ProcessResult imported =
      run_evoteam({"import-solution", solution.string(), "--task", task.string(), "--out", candidate, "--definition",
                   (root / "tests/data/flashinfer_trace/definitions" / (name + ".json")).string()},
                  std::chrono::seconds(30));
  ASSERT_EQ(imported.exit_code, 0) << describe(imported);
  EXPECT_TRUE(fs::is_regular_file(dir / "candidate" / "published.json"));

  ProcessResult built = run_evoteam({"eval", task.string(), "--candidate", candidate, "--stages", "static,build",
                                     "--json", "--cache-dir", (dir / "cache").string()},
                                    std::chrono::seconds(240));
  const json result = parse_stdout(built);
  const std::string verdict = result.value("verdict", "");
  EXPECT_TRUE(verdict == "PASS" || verdict == "STATIC_REJECT") << verdict << ": " << result.value("reason", "") << "\n"
                                                               << result.value("build_log", "").substr(0, 3000);
  EXPECT_EQ(built.exit_code, verdict == "PASS" ? 0 : 1) << describe(built);
  if (verdict == "STATIC_REJECT") {
    const std::string reason = result.value("reason", "");
    // The stand-in's names (published_shim, mangled 14published_shim) never appear in a rejection.
    EXPECT_EQ(reason.find("published_shim"), std::string::npos) << reason;
    EXPECT_FALSE(reason.empty());
  }
}

}  // namespace
}  // namespace evoteam
