// The module table of ARCHITECTURE.md is the law for includes: a file in src/<module>/ or
// include/evoteam/<module>/ may include its own module and the modules its row lists, nothing else. The table
// must name every module folder, and every public header lives in its module's folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

namespace fs = std::filesystem;
using ModuleTable = std::map<std::string, std::set<std::string>>;  // module -> modules it may depend on

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Rows of the "## Modules" table: | `module` | what it owns | `dep`, `dep` |. Only backticked names in the
// last cell count; "libraries only" lists none.
ModuleTable read_module_table(const fs::path& architecture_md) {
  ModuleTable table;
  std::istringstream lines(slurp(architecture_md));
  bool in_modules = false;
  const std::regex row(R"(^\|\s*`([a-z_]+)`\s*\|.*\|([^|]*)\|\s*$)");
  const std::regex name("`([a-z_]+)`");
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("## ", 0) == 0) in_modules = line == "## Modules";
    std::smatch match;
    if (!in_modules || !std::regex_match(line, match, row)) continue;
    std::set<std::string>& allowed = table[match[1]];
    const std::string cell = match[2];
    for (std::sregex_iterator it(cell.begin(), cell.end(), name), end; it != end; ++it) allowed.insert((*it)[1]);
  }
  return table;
}

// The module a source or header belongs to: src/<module>/..., include/evoteam/<module>/...; src/main.cpp is
// the CLI's. Empty for a file outside every module.
std::string module_of(const fs::path& root, const fs::path& file) {
  const fs::path relative = fs::relative(file, root);
  auto part = relative.begin();
  if (part == relative.end()) return "";
  const std::string top = (part++)->string();
  if (top == "src") {
    if (relative == fs::path("src/main.cpp")) return "cli";
    return part != relative.end() && std::next(part) != relative.end() ? part->string() : "";
  }
  if (top == "include" && part != relative.end() && *part == "evoteam") {
    ++part;
    return part != relative.end() && std::next(part) != relative.end() ? part->string() : "";
  }
  return "";
}

// "src/x.cpp:12: includes <evoteam/team/lab.hpp> (team), not allowed for eval" for every include that breaks
// the table, plus files that sit outside every module of the table.
std::vector<std::string> include_violations(const fs::path& root, const ModuleTable& table) {
  std::vector<std::string> violations;
  const std::regex include_line(R"(^\s*#\s*include\s*[<"](?:evoteam/)?([a-z_]+)/[^>"]+[>"])");
  for (const char* folder : {"src", "include"}) {
    if (!fs::exists(root / folder)) continue;
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root / folder)) {
      const std::string extension = entry.path().extension().string();
      if (!entry.is_regular_file() || (extension != ".cpp" && extension != ".hpp" && extension != ".in")) continue;
      const std::string own = module_of(root, entry.path());
      const std::string where = fs::relative(entry.path(), root).string();
      if (own.empty() || !table.count(own)) {
        violations.push_back(where + ": not in a module of the table");
        continue;
      }
      std::istringstream lines(slurp(entry.path()));
      int number = 0;
      for (std::string line; std::getline(lines, line);) {
        ++number;
        std::smatch match;
        if (!std::regex_search(line, match, include_line)) continue;
        const std::string target = match[1];
        if (!table.count(target) || target == own || table.at(own).count(target)) continue;
        violations.push_back(where + ":" + std::to_string(number) + ": includes " + target + ", not allowed for " +
                             own);
      }
    }
  }
  return violations;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

TEST(Architecture, EveryIncludeFollowsTheModuleTable) {
  const fs::path root = EVOTEAM_SOURCE_DIR;
  const ModuleTable table = read_module_table(root / "ARCHITECTURE.md");
  ASSERT_GE(table.size(), 8u) << "the module table of ARCHITECTURE.md was not found";
  const std::vector<std::string> violations = include_violations(root, table);
  EXPECT_TRUE(violations.empty()) << joined(violations);
}

TEST(Architecture, TheTableNamesEveryModuleFolderAndOnlyThose) {
  const fs::path root = EVOTEAM_SOURCE_DIR;
  const ModuleTable table = read_module_table(root / "ARCHITECTURE.md");
  std::set<std::string> folders;
  for (const fs::path& base : {root / "src", root / "include/evoteam"})
    for (const fs::directory_entry& entry : fs::directory_iterator(base))
      if (entry.is_directory()) folders.insert(entry.path().filename().string());
  std::set<std::string> named;
  for (const auto& [module, allowed] : table) {
    named.insert(module);
    for (const std::string& dependency : allowed)
      EXPECT_TRUE(table.count(dependency)) << module << " -> " << dependency;
  }
  EXPECT_EQ(folders, named);
  for (const fs::directory_entry& entry : fs::directory_iterator(root / "include/evoteam"))
    EXPECT_TRUE(entry.is_directory()) << entry.path() << " is a public header outside a module folder";
}

// A configuration key is read by path only in its module's settings reader (`<module>_settings.cpp`) or in the
// config itself; every other file takes the typed struct. Lines of src/ that call get/at on a Config named
// `config` or `m_config` elsewhere.
std::vector<std::string> config_reads_outside_readers(const fs::path& root) {
  const std::regex read(R"(\b(m_)?config(\(\))?\s*(\.|->)\s*(get\s*<|at\s*\())");
  std::vector<std::string> found;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root / "src")) {
    const std::string name = entry.path().filename().string();
    const bool reader = name.size() > 13 && name.compare(name.size() - 13, 13, "_settings.cpp") == 0;
    if (!entry.is_regular_file() || reader || name.rfind("config", 0) == 0) continue;
    std::istringstream lines(slurp(entry.path()));
    int number = 0;
    for (std::string line; std::getline(lines, line);)
      if (++number, std::regex_search(line, read))
        found.push_back(fs::relative(entry.path(), root).string() + ":" + std::to_string(number) + ": " + line);
  }
  return found;
}

TEST(Architecture, OnlyTheSettingsReadersReadConfigurationKeys) {
  const std::vector<std::string> found = config_reads_outside_readers(EVOTEAM_SOURCE_DIR);
  EXPECT_TRUE(found.empty()) << joined(found);
}

TEST(Architecture, TheReaderCheckFindsAKeyReadOutsideAReader) {
  testing::TempDir dir;
  fs::create_directories(dir / "src/eval");
  std::ofstream(dir / "src/eval/battery.cpp") << "int seeds = config.get<int>(\"eval.correctness.seeds\");\n";
  std::ofstream(dir / "src/eval/eval_settings.cpp") << "s.seeds = config.get<int>(\"eval.correctness.seeds\");\n";
  const std::vector<std::string> found = config_reads_outside_readers(dir.path());
  ASSERT_EQ(found.size(), 1u) << joined(found);
  EXPECT_EQ(found[0].rfind("src/eval/battery.cpp:1: ", 0), 0u) << found[0];
}

// The check itself: a tree with one include that breaks the table and one that follows it.
TEST(Architecture, TheCheckFindsAnIncludeThatBreaksTheTable) {
  testing::TempDir dir;
  fs::create_directories(dir / "src/core");
  fs::create_directories(dir / "src/team");
  fs::create_directories(dir / "include/evoteam/team");
  std::ofstream(dir / "ARCHITECTURE.md") << "## Modules\n\n| module | owns | may depend on |\n| --- | --- | --- |\n"
                                            "| `core` | basics | libraries only |\n| `team` | roles | `core` |\n";
  std::ofstream(dir / "src/core/config.cpp") << "#include <evoteam/team/lab.hpp>\n";
  std::ofstream(dir / "src/team/lab.cpp") << "#include <evoteam/core/config.hpp>\n#include \"team/lab_private.hpp\"\n";
  std::ofstream(dir / "include/evoteam/team/lab.hpp") << "#include <evoteam/core/fs.hpp>\n";
  const ModuleTable table = read_module_table(dir / "ARCHITECTURE.md");
  ASSERT_EQ(table.size(), 2u);
  EXPECT_TRUE(table.at("core").empty());
  EXPECT_EQ(table.at("team"), std::set<std::string>{"core"});
  const std::vector<std::string> violations = include_violations(dir.path(), table);
  ASSERT_EQ(violations.size(), 1u) << joined(violations);
  EXPECT_EQ(violations[0], "src/core/config.cpp:1: includes team, not allowed for core");
}

}  // namespace
}  // namespace evoteam
