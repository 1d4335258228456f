// A writer process appends journal records while the test kills it with SIGKILL at random instants. After
// every kill the journal must replay without an exception and hold every record the writer acknowledged;
// every third round also leaves a torn last line behind, which the next writer must repair.
#include <evoteam/core/error.hpp>
#include <evoteam/store/store.hpp>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using evoteam::testing::TempDir;

constexpr int k_kills = 30;
constexpr int k_max_delay_ms = 60;

// The child side: append forever, reporting each seq over the pipe only after append() has returned.
// It never returns into the test framework.
[[noreturn]] void run_writer(const fs::path& path, int ack_fd, unsigned seed) {
  try {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> payload_length(0, 600);
    evoteam::Journal journal(path);
    for (;;) {
      const std::uint64_t seq =
          journal.append({{"type", "crash_test"}, {"payload", std::string(payload_length(rng), 'p')}});
      if (::write(ack_fd, &seq, sizeof seq) != static_cast<ssize_t>(sizeof seq)) ::_exit(3);
    }
  } catch (...) {
    ::_exit(2);
  }
}

// Reads every acknowledgement left in the pipe; the writer is dead, so this ends at EOF.
std::vector<std::uint64_t> drain_acks(int fd) {
  std::string bytes;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  std::vector<std::uint64_t> acks(bytes.size() / sizeof(std::uint64_t));
  // An empty vector's data() may be null, and memcpy from or to null is undefined even for zero bytes.
  if (!acks.empty()) std::memcpy(acks.data(), bytes.data(), acks.size() * sizeof(std::uint64_t));
  return acks;
}

TEST(JournalCrash, AcknowledgedRecordsSurviveSigkillAtRandomInstants) {
  TempDir dir;
  const fs::path path = dir / "journal.jsonl";
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> delay_ms(0, k_max_delay_ms);

  std::set<std::uint64_t> acknowledged;
  int kills = 0;
  for (int round = 0; round < k_kills; ++round) {
    int pipe_fds[2];
    ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(pipe_fds[0]);
      run_writer(path, pipe_fds[1], seed + static_cast<unsigned>(round));
    }
    ::close(pipe_fds[1]);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    ::kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    if (WIFEXITED(status)) {
      ADD_FAILURE() << "round " << round << ": the writer stopped by itself with code " << WEXITSTATUS(status)
                    << " (2: append or reopen threw, 3: pipe write failed)";
    } else {
      ++kills;
    }
    for (const std::uint64_t seq : drain_acks(pipe_fds[0])) acknowledged.insert(seq);
    ::close(pipe_fds[0]);

    if (!fs::exists(path)) {
      // Killed before the journal was first created: nothing can have been acknowledged.
      EXPECT_TRUE(acknowledged.empty()) << "round " << round;
      continue;
    }
    evoteam::JournalReplay replay;
    try {
      replay = evoteam::replay_journal(path);
    } catch (const std::exception& e) {
      FAIL() << "round " << round << ": replay threw: " << e.what();
    }
    std::set<std::uint64_t> recorded;
    std::uint64_t previous = 0;
    for (const nlohmann::json& record : replay.records) {
      const std::uint64_t seq = record.at("seq").get<std::uint64_t>();
      EXPECT_GT(seq, previous) << "round " << round << ": seq out of order";
      previous = seq;
      recorded.insert(seq);
    }
    EXPECT_TRUE(replay.warnings.empty()) << "round " << round << ": " << replay.warnings.front();
    for (const std::uint64_t seq : acknowledged) {
      ASSERT_TRUE(recorded.count(seq)) << "round " << round << ": acknowledged record " << seq << " is missing";
    }
    if (round % 3 == 2) {
      // Also leave the torn line a power cut could leave, so the next writer's repair runs on a live file.
      std::ofstream(path, std::ios::binary | std::ios::app) << "{\"seq\":" << previous + 1 << ",\"t\":\"20";
    }
  }
  EXPECT_GE(kills, 20);
  EXPECT_FALSE(acknowledged.empty()) << "the writer never got a record acknowledged";
  RecordProperty("acknowledged_records", static_cast<int>(acknowledged.size()));
}

}  // namespace
