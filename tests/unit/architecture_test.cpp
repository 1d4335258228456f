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

#include <evoteam/eval/evaluator.hpp>
#include <evoteam/eval/verdict.hpp>
#include <evoteam/history/journal_records.hpp>
#include <evoteam/store/store.hpp>

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

// --- The run's vocabulary is spelled in the record layer only ---------------------------------------------------

// The record layer (src/history, include/evoteam/history) owns the journal's record types and reads and writes the
// run's vocabulary; every other file asks the types. The transcript of an agent (src/agent) is a file of its own
// whose records share a few words with the journal's ("stop"), so its "type" spellings are its own.
bool in_record_layer(const std::string& relative) {
  return relative.rfind("src/history/", 0) == 0 || relative.rfind("include/evoteam/history/", 0) == 0;
}

std::string alternatives(const std::vector<std::string>& names) {
  std::string pattern;
  for (const std::string& name : names) pattern += (pattern.empty() ? "" : "|") + name;
  return "(" + pattern + ")";
}

struct VocabularyCheck {
  std::string what;
  std::regex pattern;
  bool outside_agent_only = false;  // the agent's transcript spells its own record types
};

// The checks, built from the vocabulary's own name tables: a journal record type next to "type", or compared when
// the name is the journal's alone; a verdict name compared, or a verdict's prefix matched; a stage or run status
// compared as a string.
std::vector<VocabularyCheck> vocabulary_checks() {
  std::vector<std::string> record_types, journal_only;
  for (RecordType type : all_record_types()) {
    record_types.push_back(to_string(type));
    if (to_string(type).find('_') != std::string::npos) journal_only.push_back(to_string(type));
  }
  std::vector<std::string> verdicts, verdict_prefixes;
  for (Verdict verdict : all_verdicts()) {
    const std::string name = to_string(verdict);
    verdicts.push_back(name);
    if (name.find('_') != std::string::npos) verdict_prefixes.push_back(name.substr(0, name.find('_') + 1));
  }
  std::vector<std::string> stages;
  for (Stage stage : EvalOptions::through(Stage::profile).stages) stages.push_back(to_string(stage));
  std::vector<std::string> statuses;
  for (RunStatus status : {RunStatus::running, RunStatus::finished, RunStatus::stopped, RunStatus::failed})
    statuses.push_back(to_string(status));
  const std::string record = alternatives(record_types), only = alternatives(journal_only),
                    verdict = alternatives(verdicts), prefix = alternatives(verdict_prefixes),
                    stage = alternatives(stages), status = alternatives(statuses);
  return {
      {"journal record type", std::regex(R"("type"[^;]*")" + record + R"(")"), true},
      {"journal record type", std::regex(R"([!=]=\s*")" + only + R"("|")" + only + R"("\s*[!=]=)")},
      {"verdict compared as a string", std::regex(R"([!=]=\s*")" + verdict + R"("|")" + verdict + R"("\s*[!=]=)")},
      {"verdict matched by prefix", std::regex(R"(")" + prefix + R"(")")},
      {"stage compared as a string", std::regex(R"([Ss]tage[\w.()\[\]]*\s*[!=]=\s*")" + stage + R"(")")},
      {"run status compared as a string", std::regex(R"([Ss]tatus[\w.()\[\]]*\s*[!=]=\s*")" + status + R"(")")},
  };
}

// "src/report/status.cpp:64: journal record type: if (type == "cycle_end")" for every line of src/ and include/
// outside the record layer that spells the run's vocabulary; comment lines are prose and left out.
std::vector<std::string> vocabulary_outside_record_layer(const fs::path& root) {
  const std::vector<VocabularyCheck> checks = vocabulary_checks();
  std::vector<std::string> found;
  for (const char* folder : {"src", "include"}) {
    if (!fs::exists(root / folder)) continue;
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root / folder)) {
      const std::string extension = entry.path().extension().string();
      if (!entry.is_regular_file() || (extension != ".cpp" && extension != ".hpp")) continue;
      const std::string where = fs::relative(entry.path(), root).string();
      if (in_record_layer(where)) continue;
      const bool agent = where.rfind("src/agent/", 0) == 0;
      std::istringstream lines(slurp(entry.path()));
      int number = 0;
      for (std::string line; std::getline(lines, line);) {
        ++number;
        const std::size_t text = line.find_first_not_of(" \t");
        if (text != std::string::npos && line.compare(text, 2, "//") == 0) continue;
        for (const VocabularyCheck& check : checks)
          if (!(check.outside_agent_only && agent) && std::regex_search(line, check.pattern)) {
            found.push_back(where + ":" + std::to_string(number) + ": " + check.what + ": " + line.substr(text));
            break;
          }
      }
    }
  }
  return found;
}

TEST(Architecture, OnlyTheRecordLayerSpellsTheRunsVocabulary) {
  const std::vector<std::string> found = vocabulary_outside_record_layer(EVOTEAM_SOURCE_DIR);
  EXPECT_TRUE(found.empty()) << joined(found);
}

// Each check fails on a tree that breaks it, and the record layer itself may spell what it owns.
TEST(Architecture, TheVocabularyCheckFindsEachKindOfSpellingOutsideTheRecordLayer) {
  testing::TempDir dir;
  fs::create_directories(dir / "src/report");
  fs::create_directories(dir / "src/history");
  fs::create_directories(dir / "src/agent");
  std::ofstream(dir / "src/report/view.cpp") << "if (type == \"cycle_end\") mark();\n"
                                                "journal.append({{\"type\", \"ruling\"}, {\"reason\", why}});\n"
                                                "if (record.verdict == \"PASS\") ++passed;\n"
                                                "if (verdict.rfind(\"COMPILE_\", 0) == 0) return \"v-build\";\n"
                                                "if (stage.name != \"build\") seconds += stage.wall_s;\n"
                                                "else if (view.status == \"running\") out << \"gone\";\n"
                                                "// a comment may say {\"type\": \"budget_tick\"} == \"PASS\"\n"
                                                "if (tool_name == \"profile\") return Stage::profile;\n";
  std::ofstream(dir / "src/history/journal_records.cpp") << "{RecordType::ruling, \"ruling\"}, \"type\", \"ruling\"\n"
                                                            "if (type == \"cycle_end\") return;\n";
  std::ofstream(dir / "src/agent/agent.cpp") << "m_transcript.append({{\"type\", \"stop\"}});\n";
  const std::vector<std::string> found = vocabulary_outside_record_layer(dir.path());
  ASSERT_EQ(found.size(), 6u) << joined(found);
  EXPECT_EQ(found[0].rfind("src/report/view.cpp:1: journal record type: ", 0), 0u) << found[0];
  EXPECT_EQ(found[1].rfind("src/report/view.cpp:2: journal record type: ", 0), 0u) << found[1];
  EXPECT_EQ(found[2].rfind("src/report/view.cpp:3: verdict compared as a string: ", 0), 0u) << found[2];
  EXPECT_EQ(found[3].rfind("src/report/view.cpp:4: verdict matched by prefix: ", 0), 0u) << found[3];
  EXPECT_EQ(found[4].rfind("src/report/view.cpp:5: stage compared as a string: ", 0), 0u) << found[4];
  EXPECT_EQ(found[5].rfind("src/report/view.cpp:6: run status compared as a string: ", 0), 0u) << found[5];
}

}  // namespace
}  // namespace evoteam
