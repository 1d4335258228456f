#pragma once
// What every fuzz target shares: the rule that bad input ends in a typed error, and a scratch directory for the
// parsers that read files.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

namespace evoteam::fuzz {

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Splits the input at NUL bytes: targets that take several texts (a file and assignments) read them this way.
inline std::vector<std::string> split_at_nul(const std::string& text) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == '\0')
      parts.emplace_back();
    else
      parts.back() += c;
  }
  return parts;
}

// Runs one parse. Bad input may end in evoteam::Error (the CLI turns it into exit 3 or 74); anything else that
// escapes (a std::exception from a library, a failed invariant) is a bug, so it aborts and the fuzzer reports it.
template <typename Parse>
void expect_clean_outcome(Parse&& parse) {
  try {
    parse();
  } catch (const Error& error) {
    if (error.code() == ExitCode::internal) {
      std::fprintf(stderr, "fuzz: invariant broken by input: %s\n", error.what());
      std::abort();
    }
  }
}

// A directory of this process's own, made once, for parsers that read files.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("evoteam-fuzz-" + std::to_string(static_cast<long long>(::getpid())));
    std::filesystem::create_directories(path);
    return path;
  }();
  return dir;
}

// Plain writes: these are the fuzzer's own scratch files, not a user's data.
inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// The seeds that stand beside a fuzzed file: a real run's run.json and journal, read once (missing: IoError).
inline std::string seed_text(const std::string& relative) {
  return read_file(std::filesystem::path(EVOTEAM_SOURCE_DIR) / "tests" / "fuzz" / "corpus" / relative);
}
inline const std::string& valid_run_json() {
  static const std::string text = seed_text("run_json/finished_run.json");
  return text;
}
inline const std::string& valid_journal() {
  static const std::string text = seed_text("journal/finished_run.jsonl");
  return text;
}

// The scratch run directory holding this run.json and journal.
inline std::filesystem::path run_dir_with(const std::string& run_json, const std::string& journal) {
  const std::filesystem::path run = scratch_dir() / "run";
  std::filesystem::create_directories(run);
  write_text(run / "run.json", run_json);
  write_text(run / "journal.jsonl", journal);
  return run;
}

}  // namespace evoteam::fuzz
