// The FlashInfer-Trace suite in kernels/flashinfer_trace: every published definition kept there imports with the
// real importer (or is on the documented list of what did not, not_imported.tsv, and then really fails), the
// committed task directories are exactly what the import writes now (what import_all.sh regenerates), they load
// with the real task loader and hash stably, and workloads whose published inputs are tensor files not in the
// repository say that their inputs are random.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/task/task.hpp>
#include <evoteam/trace/trace_import.hpp>

#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

namespace fs = std::filesystem;

const fs::path k_suite_root = EVOTEAM_SOURCE_DIR;
const fs::path k_suite = fs::path("kernels") / "flashinfer_trace";

// Relative paths, as import_all.sh passes them from the repository root: they are recorded in the tasks.
struct Published {
  std::string name;
  fs::path definition;
  std::optional<fs::path> workloads;
};

std::vector<Published> published_definitions() {
  std::vector<Published> found;
  for (const auto& family : fs::directory_iterator(k_suite_root / k_suite / "published" / "definitions"))
    for (const auto& file : fs::directory_iterator(family.path())) {
      if (file.path().extension() != ".json") continue;
      Published entry;
      entry.name = file.path().stem().string();
      const std::string folder = family.path().filename().string();
      entry.definition = k_suite / "published" / "definitions" / folder / file.path().filename();
      const fs::path workloads = k_suite / "published" / "workloads" / folder / (entry.name + ".jsonl");
      if (fs::is_regular_file(k_suite_root / workloads)) entry.workloads = workloads;
      found.push_back(entry);
    }
  std::sort(found.begin(), found.end(), [](const Published& a, const Published& b) { return a.name < b.name; });
  return found;
}

std::map<std::string, std::string> not_imported() {
  std::map<std::string, std::string> listed;
  std::istringstream lines(read_file(k_suite_root / k_suite / "not_imported.tsv"));
  for (std::string line; std::getline(lines, line);) {
    const std::size_t tab = line.find('\t');
    if (tab != std::string::npos) listed[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return listed;
}

std::map<std::string, std::string> files_of(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) files[fs::relative(entry.path(), dir).string()] = read_file(entry.path());
  return files;
}

// The import records the paths it was given, so it runs from the repository root as import_all.sh does.
class FromSourceRoot {
 public:
  FromSourceRoot() : m_before(fs::current_path()) { fs::current_path(k_suite_root); }
  ~FromSourceRoot() { fs::current_path(m_before); }
  FromSourceRoot(const FromSourceRoot&) = delete;
  FromSourceRoot& operator=(const FromSourceRoot&) = delete;

 private:
  fs::path m_before;
};

TEST(TraceSuite, EveryPublishedDefinitionImportsAsCommittedOrIsListedWithWhy) {
  const std::vector<Published> definitions = published_definitions();
  const std::map<std::string, std::string> listed = not_imported();
  ASSERT_GE(definitions.size(), 150u) << "the published set lost definitions";
  testing::TempDir temp;
  FromSourceRoot from_root;
  std::size_t imported_count = 0;
  for (const Published& published : definitions) {
    SCOPED_TRACE(published.name);
    const fs::path committed = k_suite / published.name;
    const fs::path out = temp.path() / published.name;
    if (listed.count(published.name)) {
      EXPECT_FALSE(listed.at(published.name).empty()) << "listed without a reason";
      EXPECT_THROW(import_definition(published.definition, published.workloads, out, false), InvalidInput)
          << "listed as not importing, but it imports now: rerun import_all.sh";
      EXPECT_FALSE(fs::exists(committed / "task.json"));
      continue;
    }
    ImportedTask imported;
    try {
      imported = import_definition(published.definition, published.workloads, out, false);
    } catch (const Error& error) {
      ADD_FAILURE() << "does not import and is not in not_imported.tsv: " << error.what();
      continue;
    }
    ++imported_count;
    for (const TraceFinding& finding : imported.findings)
      EXPECT_EQ(finding.message.find("task loader refuses"), std::string::npos) << describe(finding);
    ASSERT_TRUE(fs::is_regular_file(committed / "task.json")) << "not committed: rerun import_all.sh";
    const std::map<std::string, std::string> written = files_of(out);
    const std::map<std::string, std::string> kept = files_of(committed);
    for (const auto& [file, text] : written) {
      const auto other = kept.find(file);
      if (other == kept.end())
        ADD_FAILURE() << file << " is written by the import but not committed: rerun import_all.sh";
      else
        EXPECT_TRUE(other->second == text) << file << " differs from what the import writes now: rerun import_all.sh";
    }
    for (const auto& [file, text] : kept)
      EXPECT_TRUE(written.count(file)) << file << " is committed but no longer written by the import";
    const Task fresh = load_task(out);
    const Task ours = load_task(committed);
    EXPECT_FALSE(ours.content_hash.empty());
    EXPECT_EQ(fresh.content_hash, ours.content_hash) << "the same import written twice hashes differently";
    EXPECT_EQ(ours.name, published.name);
    EXPECT_TRUE(ours.python_reference.has_value());
  }
  EXPECT_EQ(imported_count + listed.size(), definitions.size()) << "not_imported.tsv lists unknown definitions";
  // No stale task: every task directory of the suite has its published definition.
  std::set<std::string> names;
  for (const Published& published : definitions) names.insert(published.name);
  for (const auto& entry : fs::directory_iterator(k_suite)) {
    if (!fs::is_regular_file(entry.path() / "task.json")) continue;
    EXPECT_TRUE(names.count(entry.path().filename().string())) << entry.path() << " has no published definition";
  }
}

// The published GQA decode workloads load kv_indptr and kv_indices from safetensors files that are not in the
// repository: each such workload keeps its shapes and says its inputs are random, and the README counts them.
TEST(TraceSuite, WorkloadsWhoseInputsAreTensorFilesSayTheirInputsAreRandom) {
  const fs::path dir = k_suite_root / k_suite / "gqa_paged_decode_h32_kv8_d128_ps1";
  const nlohmann::json task = nlohmann::json::parse(read_file(dir / "task.json"), nullptr, true, true);
  std::size_t published = 0, random = 0;
  for (const nlohmann::json& workload : task["workloads"]) {
    if (workload.value("origin", "") != "published") continue;
    ++published;
    if (workload.value("description", "").find("random inputs: ") != std::string::npos) ++random;
  }
  EXPECT_GT(published, 0u);
  EXPECT_EQ(random, published);
  EXPECT_EQ(load_task(dir).workloads.size(), task["workloads"].size());
  EXPECT_NE(read_file(dir / "README.md").find(std::to_string(random) + " with random inputs"), std::string::npos);
  // gemm workloads publish random inputs only: nothing to mark.
  const nlohmann::json gemm =
      nlohmann::json::parse(read_file(k_suite_root / k_suite / "gemm_n4096_k4096" / "task.json"), nullptr, true, true);
  for (const nlohmann::json& workload : gemm["workloads"])
    EXPECT_EQ(workload.value("description", "").find("random inputs"), std::string::npos) << workload.dump();
}

// A family without a generator still imports, with the stubs, and says so as a blocking finding and in the
// vendor baseline.
TEST(TraceSuite, AFamilyWithoutAGeneratorImportsWithStubsAndSaysSo) {
  const fs::path dir = k_suite_root / k_suite / "top_k_sampling_from_probs_v128256";
  const Task task = load_task(dir);
  EXPECT_NE(read_file(dir / "kernel.cu").find("cudaErrorNotSupported"), std::string::npos);
  EXPECT_FALSE(task.vendor.unavailable.empty());
  EXPECT_NE(read_file(dir / "README.md").find("no starting kernel"), std::string::npos);
}

}  // namespace
}  // namespace evoteam
