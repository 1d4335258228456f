// What the scripts fetch, they fetch from the user's own package index: pip by package name and a pinned version
// (`pip download --no-deps NAME==VERSION`, `pip install NAME==VERSION`), never a hard-coded index or file URL, so
// pip.conf and PIP_INDEX_URL apply. Read as the rule over every shell script the project ships.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The shell scripts under `root`: scripts/, bench/, tests/gpu/, tests/local_llm/ and .ci/ (by extension or shebang).
std::vector<fs::path> shipped_scripts(const fs::path& root) {
  std::vector<fs::path> scripts;
  for (const char* dir : {"scripts", "bench", "tests/gpu", "tests/local_llm", ".ci"}) {
    if (!fs::is_directory(root / dir)) continue;
    for (const auto& entry : fs::directory_iterator(root / dir)) {
      if (!entry.is_regular_file()) continue;
      const std::string text = slurp(entry.path());
      if (entry.path().extension() == ".sh" || text.rfind("#!/usr/bin/env bash", 0) == 0 ||
          text.rfind("#!/bin/bash", 0) == 0)
        scripts.push_back(entry.path());
    }
  }
  return scripts;
}

// The words after pip's verb that name a package without ==VERSION. Options and their values, redirections,
// paths and variables are not packages.
std::vector<std::string> unpinned_packages(const std::string& command) {
  static const std::regex verb(R"(pip3?\s+(download|install)\s)");
  static const std::regex name(R"(^[A-Za-z][A-Za-z0-9_.\-]*$)");
  static const std::vector<std::string> takes_value = {"--dest", "-d",         "--target",
                                                       "-t",     "--platform", "--python-version"};
  std::smatch match;
  if (!std::regex_search(command, match, verb)) return {};
  // The command ends at the first redirection, pipe, list operator or `;`.
  std::string rest = match.suffix().str();
  rest = rest.substr(0, rest.find_first_of(";|&>"));
  std::istringstream words(rest);
  std::vector<std::string> unpinned;
  std::string word;
  bool skip_value = false;
  while (words >> word) {
    if (skip_value) {
      skip_value = false;
      continue;
    }
    if (std::find(takes_value.begin(), takes_value.end(), word) != takes_value.end()) {
      skip_value = true;
      continue;
    }
    std::string bare = word;
    bare.erase(std::remove(bare.begin(), bare.end(), '"'), bare.end());
    bare.erase(std::remove(bare.begin(), bare.end(), '\''), bare.end());
    if (bare.empty() || bare[0] == '-' || bare[0] == '$' || bare.find('/') != std::string::npos) continue;
    if (bare.find("==") == std::string::npos && std::regex_match(bare, name)) unpinned.push_back(bare);
  }
  return unpinned;
}

// Each pip download/install command (continuation lines joined): "file:line: why" for one that names an index or a
// URL, or a package without a pinned version.
std::vector<std::string> fetch_policy_violations(const fs::path& root) {
  static const std::regex pip_command(R"(pip3?\s+(download|install)\b)");
  static const std::regex registry(R"((index-url|find-links|pypi\.org|pythonhosted|https?://))");
  std::vector<std::string> violations;
  for (const fs::path& script : shipped_scripts(root)) {
    std::istringstream lines(slurp(script));
    std::string line, command;
    int number = 0, start = 0;
    while (std::getline(lines, line)) {
      ++number;
      if (command.empty()) start = number;
      command += line;
      if (!command.empty() && command.back() == '\\') {
        command.pop_back();
        continue;
      }
      const std::string where = fs::relative(script, root).string() + ":" + std::to_string(start) + ": ";
      const bool comment =
          command.find_first_not_of(" \t") != std::string::npos && command[command.find_first_not_of(" \t")] == '#';
      if (!comment && std::regex_search(command, pip_command)) {
        if (std::regex_search(command, registry)) violations.push_back(where + "names an index or URL");
        for (const std::string& package : unpinned_packages(command))
          violations.push_back(where + "package " + package + " has no pinned version");
      }
      command.clear();
    }
  }
  return violations;
}

TEST(FetchPolicy, ShippedScriptsFetchWheelsByPinnedNameFromTheUsersIndex) {
  const std::vector<std::string> violations = fetch_policy_violations(EVOTEAM_SOURCE_DIR);
  std::string all;
  for (const std::string& violation : violations) all += violation + "\n";
  EXPECT_TRUE(violations.empty()) << all;
}

// The check itself: a script with a URL and an unpinned package is caught, a pinned fetch by name passes.
TEST(FetchPolicy, TheCheckFindsAnIndexUrlAndAnUnpinnedPackage) {
  testing::TempDir dir;
  fs::create_directories(dir.path() / "scripts");
  std::ofstream(dir.path() / "scripts" / "bad.sh") << "#!/usr/bin/env bash\n"
                                                      "python3 -m pip download --no-deps \\\n"
                                                      "  --index-url https://example.org/simple torch==2.5.0\n"
                                                      "python3 -m pip install numpy\n";
  std::ofstream(dir.path() / "scripts" / "good.sh")
      << "#!/usr/bin/env bash\n"
         "python3 -m pip download --quiet --no-deps --dest \"$w\" \\\n"
         "  nvidia-cuda-cuobjdump==13.5.37 \"flashinfer-python==$v\" >&2\n";
  const std::vector<std::string> violations = fetch_policy_violations(dir.path());
  ASSERT_EQ(violations.size(), 2u);
  EXPECT_NE(violations[0].find("scripts/bad.sh:2: names an index or URL"), std::string::npos) << violations[0];
  EXPECT_NE(violations[1].find("scripts/bad.sh:4: package numpy has no pinned version"), std::string::npos)
      << violations[1];
}

}  // namespace
}  // namespace evoteam
