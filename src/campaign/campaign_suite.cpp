// SUITE resolved into task directories: a directory of tasks, a glob, or a list file with weights.
#include <glob.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include <evoteam/campaign/campaign.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>

namespace evoteam {

namespace {

constexpr const char* k_task_json = "task.json";

bool holds_task(const std::filesystem::path& dir) {
  std::error_code error;
  return std::filesystem::is_regular_file(dir / k_task_json, error);
}

std::filesystem::path absolute_dir(const std::filesystem::path& dir) {
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::weakly_canonical(dir, error);
  if (error) absolute = std::filesystem::absolute(dir);
  return absolute;
}

bool looks_like_glob(const std::string& text) { return text.find_first_of("*?[") != std::string::npos; }

std::vector<SuiteEntry> suite_of_directory(const std::filesystem::path& dir) {
  if (holds_task(dir)) return {{absolute_dir(dir), 1.0}};
  std::vector<std::filesystem::path> children;
  std::error_code error;
  for (std::filesystem::directory_iterator it(dir, error), end; !error && it != end; it.increment(error))
    if (it->is_directory() && holds_task(it->path())) children.push_back(it->path());
  if (error) throw IoError("cannot list suite directory " + dir.string() + ": " + error.message());
  std::sort(children.begin(), children.end());
  std::vector<SuiteEntry> entries;
  for (const std::filesystem::path& child : children) entries.push_back({absolute_dir(child), 1.0});
  return entries;
}

std::vector<SuiteEntry> suite_of_glob(const std::string& pattern) {
  glob_t matches{};
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &matches);
  std::vector<std::filesystem::path> dirs;
  if (rc == 0)
    for (std::size_t i = 0; i < matches.gl_pathc; ++i)
      if (holds_task(matches.gl_pathv[i])) dirs.emplace_back(matches.gl_pathv[i]);
  ::globfree(&matches);
  if (rc != 0 && rc != GLOB_NOMATCH) throw IoError("cannot expand the suite pattern " + pattern);
  std::sort(dirs.begin(), dirs.end());
  std::vector<SuiteEntry> entries;
  for (const std::filesystem::path& dir : dirs) entries.push_back({absolute_dir(dir), 1.0});
  return entries;
}

// A listed path: against the list's folder first (a list kept beside its tasks), then the working directory.
std::filesystem::path listed_dir(const std::filesystem::path& list, const std::string& text) {
  const std::filesystem::path path(text);
  if (path.is_absolute()) return path;
  const std::filesystem::path beside = list.parent_path() / path;
  if (holds_task(beside)) return beside;
  return path;
}

std::vector<SuiteEntry> suite_of_list(const std::filesystem::path& list) {
  std::istringstream lines(read_file(list));
  std::vector<SuiteEntry> entries;
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    const std::string where = list.string() + ":" + std::to_string(number);
    if (const std::size_t hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream fields(trim(line));
    std::string path_text;
    if (!(fields >> path_text)) continue;
    SuiteEntry entry;
    std::string weight_text;
    if (fields >> weight_text) {
      std::size_t used = 0;
      try {
        entry.weight = std::stod(weight_text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != weight_text.size() || !std::isfinite(entry.weight) || entry.weight <= 0)
        throw InvalidInput(where + ": the weight must be a positive number (got '" + weight_text + "')");
      std::string extra;
      if (fields >> extra)
        throw InvalidInput(where + ": expected a task directory and an optional weight, found '" + extra + "' too");
    }
    const std::filesystem::path dir = listed_dir(list, path_text);
    if (!holds_task(dir)) throw InvalidInput(where + ": " + path_text + " holds no task.json");
    entry.task_dir = absolute_dir(dir);
    entries.push_back(entry);
  }
  return entries;
}

}  // namespace

std::vector<SuiteEntry> resolve_suite(const std::string& suite) {
  if (trim(suite).empty()) throw InvalidInput("the suite is empty: give a directory of tasks, a glob or a list file");
  std::error_code error;
  std::vector<SuiteEntry> entries;
  if (std::filesystem::is_directory(suite, error))
    entries = suite_of_directory(suite);
  else if (std::filesystem::is_regular_file(suite, error))
    entries = suite_of_list(suite);
  else if (looks_like_glob(suite))
    entries = suite_of_glob(suite);
  else
    throw InvalidInput("suite " + suite + " is neither a directory, a list file nor a glob that matches anything");
  if (entries.empty())
    throw InvalidInput("suite " + suite + " holds no task (no directory with a task.json among what it names)");
  std::set<std::filesystem::path> seen;
  for (const SuiteEntry& entry : entries)
    if (!seen.insert(entry.task_dir).second)
      throw InvalidInput("suite " + suite + " names task " + entry.task_dir.string() + " twice");
  return entries;
}

}  // namespace evoteam
