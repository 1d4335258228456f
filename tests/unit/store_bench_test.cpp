// Store benchmark, disabled in normal runs; bench/store_bench.sh runs it with
// --gtest_also_run_disabled_tests --gtest_filter='StoreBench.*'. EVOTEAM_BENCH_DIR chooses the file system.
#include <evoteam/core/clock.hpp>
#include <evoteam/store/store.hpp>

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;

constexpr int k_records = 10000;
constexpr double k_replay_target_s = 1.0;
constexpr long k_rss_target_kb = 64 * 1024;

using evoteam::seconds_since;

long peak_rss_kb() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;  // kilobytes on Linux
}

TEST(StoreBench, DISABLED_Journal10k) {
  evoteam::testing::TempDir temp;
  fs::path dir = temp.path();
  if (const char* chosen = std::getenv("EVOTEAM_BENCH_DIR"); chosen != nullptr && *chosen != '\0') {
    dir = fs::path(chosen) / "journal-bench";
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  const fs::path path = dir / "journal.jsonl";

  // Records shaped like evaluation results: a verdict, a few per-workload numbers, a short note.
  const auto append_start = std::chrono::steady_clock::now();
  {
    evoteam::Journal journal(path);
    for (int i = 0; i < k_records; ++i) {
      journal.append(
          {{"type", "evaluation"},
           {"candidate", "c" + std::to_string(i)},
           {"verdict", "PASS"},
           {"workloads", {{{"name", "m1024"}, {"median_us", 12.5 + i}}, {{"name", "m4096"}, {"median_us", 98.25}}}},
           {"note", "tiling 128x128, double buffering, one measurable change"}});
    }
  }
  const double append_s = seconds_since(append_start);

  const auto replay_start = std::chrono::steady_clock::now();
  const evoteam::JournalReplay replay = evoteam::replay_journal(path);
  const double replay_s = seconds_since(replay_start);
  const long rss_kb = peak_rss_kb();

  std::printf("journal file:   %s (%ju bytes)\n", path.c_str(), static_cast<std::uintmax_t>(fs::file_size(path)));
  std::printf("append %d records (fdatasync each): %.3f s (%.1f us/record)\n", k_records, append_s,
              append_s * 1e6 / k_records);
  std::printf("replay %d records: %.3f s (target <= %.1f s)\n", k_records, replay_s, k_replay_target_s);
  std::printf("peak RSS of the test process: %.1f MB (target <= %ld MB)\n", rss_kb / 1024.0, k_rss_target_kb / 1024);

  EXPECT_EQ(replay.records.size(), static_cast<std::size_t>(k_records));
  EXPECT_LE(replay_s, k_replay_target_s);
  EXPECT_LE(rss_kb, k_rss_target_kb);
  if (dir != temp.path()) fs::remove_all(dir);
}

}  // namespace
