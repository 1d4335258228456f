#include "report/run_files.hpp"

#include <cstdio>
#include <ctime>

#include <evoteam/core/error.hpp>

namespace evoteam {

double number_or(const nlohmann::json& object, const char* key, double fallback) {
  return optional_number(object, key).value_or(fallback);
}

std::optional<double> optional_number(const nlohmann::json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object.at(key).is_number()) return std::nullopt;
  return object.at(key).get<double>();
}

double token_total(const nlohmann::json& tokens) {
  double total = 0;
  for (const char* kind : {"input", "output", "cache_read", "cache_write"}) total += number_or(tokens, kind, 0);
  return total;
}

std::optional<double> epoch_seconds(const std::string& stamp) {
  std::tm parts{};
  double seconds = 0;
  if (std::sscanf(stamp.c_str(), "%d-%d-%dT%d:%d:%lfZ", &parts.tm_year, &parts.tm_mon, &parts.tm_mday, &parts.tm_hour,
                  &parts.tm_min, &seconds) != 6)
    return std::nullopt;
  parts.tm_year -= 1900;
  parts.tm_mon -= 1;
  parts.tm_sec = 0;
  return static_cast<double>(::timegm(&parts)) + seconds;
}

JournalReplay read_run_journal(const std::filesystem::path& run_dir, std::vector<std::string>& skipped) {
  const std::filesystem::path path = run_dir / k_journal_name;
  std::error_code missing;
  if (!std::filesystem::exists(path, missing)) {
    skipped.push_back(std::string(k_journal_name) +
                      " is missing: the run's history (cycles, evaluations, spend) is not counted");
    return {};
  }
  JournalReplay replay;
  try {
    replay = replay_journal(path);
  } catch (const Error& error) {
    skipped.push_back(std::string("journal not read (") + error.what() + "): the run's history is not counted");
    return {};
  }
  if (replay.torn_tail)
    skipped.push_back("the journal's last line (" + std::to_string(replay.torn_tail_text.size()) +
                      " bytes, torn by an interrupted write) is left out");
  for (const std::string& warning : replay.warnings) skipped.push_back(warning);
  return replay;
}

}  // namespace evoteam
