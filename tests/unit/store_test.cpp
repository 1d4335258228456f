#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/store/store.hpp>

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using evoteam::testing::TempDir;
using nlohmann::json;

void append_raw(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << bytes;
}

std::vector<std::uint64_t> seqs_of(const evoteam::JournalReplay& replay) {
  std::vector<std::uint64_t> seqs;
  for (const json& record : replay.records) seqs.push_back(record.at("seq").get<std::uint64_t>());
  return seqs;
}

// Kills and reaps a forked child when a test ends early.
struct ChildGuard {
  pid_t pid = -1;
  ~ChildGuard() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

// ---- Journal ------------------------------------------------------------------------------------------

TEST(Journal, RoundTripKeepsRecordsInOrderWithSeqAndTime) {
  TempDir dir;
  const fs::path path = dir / "journal.jsonl";
  {
    evoteam::Journal journal(path);
    EXPECT_EQ(journal.next_seq(), 1u);
    EXPECT_EQ(journal.append({{"type", "cycle_start"}, {"cycle", 1}}), 1u);
    journal.append({{"type", "evaluation"}, {"verdict", "PASS"}, {"speedup", 1.5}});
    journal.append(json::object());
  }
  const std::string text = evoteam::read_file(path);
  EXPECT_EQ(text.rfind("{\"evoteam_journal\":1,\"created\":\"", 0), 0u) << text;
  EXPECT_NE(text.find("\n{\"seq\":2,\"t\":\""), std::string::npos) << text;

  const evoteam::JournalReplay replay = evoteam::replay_journal(path);
  EXPECT_EQ(replay.version["evoteam_journal"], 1);
  EXPECT_TRUE(replay.version["created"].is_string());
  ASSERT_EQ(replay.records.size(), 3u);
  EXPECT_EQ(seqs_of(replay), (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(replay.records[0]["type"], "cycle_start");
  EXPECT_EQ(replay.records[1]["speedup"], 1.5);
  EXPECT_TRUE(std::regex_match(replay.records[2]["t"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));
  EXPECT_FALSE(replay.torn_tail);
  EXPECT_TRUE(replay.warnings.empty());
}

TEST(Journal, SeqContinuesAfterReopen) {
  TempDir dir;
  const fs::path path = dir / "journal.jsonl";
  { evoteam::Journal(path).append({{"type", "a"}}); }
  {
    evoteam::Journal journal(path);
    EXPECT_EQ(journal.next_seq(), 2u);
    journal.append({{"type", "b"}});
    journal.append({{"type", "c"}, {"seq", 10}, {"t", "given"}});
    journal.append({{"type", "d"}});
  }
  evoteam::Journal reopened(path);
  EXPECT_EQ(reopened.next_seq(), 12u);
  const evoteam::JournalReplay replay = evoteam::replay_journal(path);
  EXPECT_EQ(seqs_of(replay), (std::vector<std::uint64_t>{1, 2, 10, 11}));
  EXPECT_EQ(replay.records[2]["t"], "given");
}

TEST(Journal, TornTailIsReportedDroppedAndTruncatedOnReopen) {
  TempDir dir;
  const fs::path path = dir / "journal.jsonl";
  {
    evoteam::Journal journal(path);
    journal.append({{"type", "a"}});
    journal.append({{"type", "b"}});
  }
  const auto committed_size = fs::file_size(path);
  const std::string torn = "{\"seq\":3,\"t\":\"2026-11-29T18:45";
  append_raw(path, torn);

  const evoteam::JournalReplay replay = evoteam::replay_journal(path);
  EXPECT_TRUE(replay.torn_tail);
  EXPECT_EQ(replay.torn_tail_text, torn);
  EXPECT_EQ(seqs_of(replay), (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(fs::file_size(path), committed_size + torn.size()) << "replay must not modify the file";

  evoteam::Journal journal(path);
  EXPECT_EQ(fs::file_size(path), committed_size);
  EXPECT_EQ(journal.next_seq(), 3u);
  journal.append({{"type", "c"}});
  const evoteam::JournalReplay repaired = evoteam::replay_journal(path);
  EXPECT_FALSE(repaired.torn_tail);
  EXPECT_EQ(seqs_of(repaired), (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST(Journal, UnparsableLastLineIsATornTail) {
  TempDir dir;
  const fs::path path = dir / "journal.jsonl";
  { evoteam::Journal(path).append({{"type", "a"}}); }
  // The shape a crash can leave when the size reached the disk but the bytes did not.
  append_raw(path, std::string("\0\0\0\0\0\n", 6));
  const evoteam::JournalReplay replay = evoteam::replay_journal(path);
  EXPECT_TRUE(replay.torn_tail);
  EXPECT_EQ(replay.records.size(), 1u);
  EXPECT_TRUE(replay.warnings.empty());

  evoteam::Journal journal(path);
  journal.append({{"type", "b"}});
  const evoteam::JournalReplay repaired = evoteam::replay_journal(path);
  EXPECT_FALSE(repaired.torn_tail);
  EXPECT_EQ(seqs_of(repaired), (std::vector<std::uint64_t>{1, 2}));
}

TEST(Journal, CorruptMiddleLineIsWarnedAndSkipped) {
  TempDir dir;
  const fs::path path = dir / "journal.jsonl";
  { evoteam::Journal(path).append({{"type", "a"}}); }
  append_raw(path, "this is not json\n[1,2]\n\n");
  { evoteam::Journal(path).append({{"type", "b"}}); }

  const evoteam::JournalReplay replay = evoteam::replay_journal(path);
  EXPECT_FALSE(replay.torn_tail);
  EXPECT_EQ(seqs_of(replay), (std::vector<std::uint64_t>{1, 2}));
  ASSERT_EQ(replay.warnings.size(), 2u);
  EXPECT_NE(replay.warnings[0].find("line 3"), std::string::npos) << replay.warnings[0];
  EXPECT_NE(replay.warnings[0].find("this is not json"), std::string::npos) << replay.warnings[0];
  EXPECT_NE(replay.warnings[1].find("line 4"), std::string::npos) << replay.warnings[1];
}

TEST(Journal, NotAJournalFileIsInvalidInput) {
  TempDir dir;
  const fs::path other = dir / "other.jsonl";
  append_raw(other, "{\"hello\":1}\n{\"seq\":1}\n");
  EXPECT_THROW(evoteam::replay_journal(other), evoteam::InvalidInput);
  EXPECT_THROW(evoteam::Journal{other}, evoteam::InvalidInput);
  EXPECT_EQ(evoteam::read_file(other), "{\"hello\":1}\n{\"seq\":1}\n") << "a foreign file is left alone";

  const fs::path empty = dir / "empty.jsonl";
  append_raw(empty, "");
  EXPECT_THROW(evoteam::replay_journal(empty), evoteam::InvalidInput);
  EXPECT_THROW(evoteam::replay_journal(dir / "missing.jsonl"), evoteam::InvalidInput);

  const fs::path newer = dir / "newer.jsonl";
  append_raw(newer, "{\"evoteam_journal\":99}\n");
  try {
    evoteam::replay_journal(newer);
    FAIL() << "expected InvalidInput";
  } catch (const evoteam::InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
  }
}

TEST(Journal, FailedAppendLeavesNoPartialLine) {
  TempDir dir;
  const fs::path path = dir / "journal.jsonl";
  { evoteam::Journal(path).append({{"type", "a"}}); }

  // In a child: a file-size limit makes the next append fail half-way, as a full disk would.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    try {
      evoteam::Journal journal(path);
      struct rlimit limit {};
      ::getrlimit(RLIMIT_FSIZE, &limit);
      const rlim_t saved = limit.rlim_cur;
      limit.rlim_cur = static_cast<rlim_t>(fs::file_size(path) + 50);
      if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(10);
      try {
        journal.append({{"type", "big"}, {"payload", std::string(4000, 'x')}});
        ::_exit(11);
      } catch (const evoteam::IoError&) {
      }
      limit.rlim_cur = saved;
      if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(12);
      journal.append({{"type", "after"}});
      ::_exit(0);
    } catch (...) {
      ::_exit(13);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "10/12: setrlimit failed, 11: no error, 13: unexpected exception";

  const evoteam::JournalReplay replay = evoteam::replay_journal(path);
  EXPECT_FALSE(replay.torn_tail);
  EXPECT_TRUE(replay.warnings.empty());
  ASSERT_EQ(replay.records.size(), 2u);
  EXPECT_EQ(replay.records[1]["type"], "after");
}

TEST(Journal, ConcurrentAppendsKeepWholeLinesAndUniqueSeqs) {
  TempDir dir;
  const fs::path path = dir / "journal.jsonl";
  {
    evoteam::Journal journal(path);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&journal, t] {
        for (int i = 0; i < 25; ++i) journal.append({{"thread", t}, {"i", i}});
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  const evoteam::JournalReplay replay = evoteam::replay_journal(path);
  ASSERT_EQ(replay.records.size(), 100u);
  const std::vector<std::uint64_t> seqs = seqs_of(replay);
  for (std::size_t i = 0; i < seqs.size(); ++i) EXPECT_EQ(seqs[i], i + 1);
}

// ---- Run directory ------------------------------------------------------------------------------------

TEST(StoreRunDir, CreateMakesTheLayoutAndRunJson) {
  TempDir dir;
  const fs::path runs = dir / "runs";
  evoteam::RunDir run = evoteam::RunDir::create(runs, "host_matmul", {{"provider", "scripted"}, {"budget", 5}});
  EXPECT_TRUE(std::regex_match(run.id(), std::regex(R"(\d{8}T\d{6}Z-host_matmul)"))) << run.id();
  EXPECT_EQ(run.path(), runs / run.id());
  for (const char* sub : {"task", "candidates", "cycles", "knowledge", "best"}) {
    EXPECT_TRUE(fs::is_directory(run.path() / sub)) << sub;
  }
  const json info = evoteam::read_run_json(run.path());
  EXPECT_EQ(info["id"], run.id());
  EXPECT_EQ(info["task"], "host_matmul");
  EXPECT_EQ(info["status"], "running");
  EXPECT_TRUE(info.contains("stop_reason") && info["stop_reason"].is_null());
  EXPECT_EQ(info["pid"], ::getpid());
  EXPECT_EQ(info["provider"], "scripted");
  EXPECT_EQ(info["budget"], 5);
  EXPECT_TRUE(info["started"].is_string());
  EXPECT_EQ(info["started"], info["updated"]);
  EXPECT_EQ(evoteam::replay_journal(run.path() / "journal.jsonl").records.size(), 0u);
  EXPECT_EQ(evoteam::read_file(run.path() / "lock"), std::to_string(::getpid()) + "\n");
  EXPECT_EQ(run.cycle_dir(1), run.path() / "cycles" / "0001");
  EXPECT_EQ(run.candidate_dir("c0003"), run.path() / "candidates" / "c0003");
  EXPECT_THROW(run.candidate_dir("../escape"), evoteam::Error);
}

TEST(StoreRunDir, TakenIdGetsANumberedSuffix) {
  TempDir dir;
  const fs::path runs = dir / "runs";
  fs::create_directories(runs);
  // Occupy the ids of the next few seconds so the run must take the -2 suffix whenever it starts.
  const std::time_t now = std::time(nullptr);
  for (int ahead = 0; ahead < 30; ++ahead) {
    const std::time_t moment = now + ahead;
    std::tm parts{};
    ::gmtime_r(&moment, &parts);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &parts);
    fs::create_directories(runs / (std::string(stamp) + "-gemm"));
  }
  evoteam::RunDir run = evoteam::RunDir::create(runs, "gemm", json::object());
  EXPECT_TRUE(std::regex_match(run.id(), std::regex(R"(\d{8}T\d{6}Z-gemm-2)"))) << run.id();
  EXPECT_EQ(evoteam::read_run_json(run.path())["id"], run.id());
}

TEST(StoreRunDir, UnsafeTaskNameCharactersAreReplacedInTheId) {
  TempDir dir;
  evoteam::RunDir run = evoteam::RunDir::create(dir / "runs", "a/b c", json::object());
  EXPECT_TRUE(std::regex_match(run.id(), std::regex(R"(\d{8}T\d{6}Z-a_b_c)"))) << run.id();
  EXPECT_THROW(evoteam::RunDir::create(dir / "runs", "", json::object()), evoteam::InvalidInput);
}

// What the caller writes into a new run (the frozen task) is there before run.json, and a failure while it is
// written (a full disk) removes the half-made directory: no run ever lacks it.
TEST(StoreRunDir, FillRunsBeforeRunJsonAndAFailingFillLeavesNoDirectory) {
  TempDir dir;
  bool had_run_json = true;
  evoteam::RunDir run = evoteam::RunDir::create(dir / "runs", "t", json::object(), [&](const fs::path& path) {
    had_run_json = fs::exists(path / "run.json");
    evoteam::write_file_atomic(path / "task" / "task.json", "{}");
  });
  EXPECT_FALSE(had_run_json);
  EXPECT_TRUE(fs::exists(run.path() / "task" / "task.json"));

  const fs::path other = dir / "other";
  const auto full_disk = [](const fs::path& path) { throw evoteam::IoError("cannot copy into " + path.string()); };
  EXPECT_THROW(evoteam::RunDir::create(other, "t", json::object(), full_disk), evoteam::IoError);
  EXPECT_TRUE(fs::is_empty(other));
}

TEST(StoreRunDir, UpdateRunJsonMergesAndKeepsStopReason) {
  TempDir dir;
  evoteam::RunDir run = evoteam::RunDir::create(dir / "runs", "t", {{"budgets", {{"cycles", 3}}}});
  run.update_run_json({{"status", "stopped"}, {"stop_reason", "budget"}, {"budgets", {{"tokens", 10}}}});
  json info = run.read_run_json();
  EXPECT_EQ(info["status"], "stopped");
  EXPECT_EQ(info["stop_reason"], "budget");
  EXPECT_EQ(info["budgets"], (json{{"cycles", 3}, {"tokens", 10}}));
  run.update_run_json({{"stop_reason", nullptr}});
  info = run.read_run_json();
  EXPECT_TRUE(info.contains("stop_reason") && info["stop_reason"].is_null());
  EXPECT_THROW(run.update_run_json({{"status", "bogus"}}), evoteam::InvalidInput);
  EXPECT_EQ(run.read_run_json()["status"], "stopped");
}

TEST(StoreRunDir, OpenResumesAndRepairsATornJournal) {
  TempDir dir;
  fs::path path;
  {
    evoteam::RunDir run = evoteam::RunDir::create(dir / "runs", "t", json::object());
    path = run.path();
    run.journal().append({{"type", "a"}});
    run.journal().append({{"type", "b"}});
  }
  append_raw(path / "journal.jsonl", "{\"seq\":3,\"ty");
  evoteam::RunDir resumed = evoteam::RunDir::open(path);
  EXPECT_EQ(resumed.id(), path.filename().string());
  EXPECT_EQ(resumed.journal().next_seq(), 3u);
  resumed.journal().append({{"type", "c"}});
  const evoteam::JournalReplay replay = evoteam::replay_journal(path / "journal.jsonl");
  EXPECT_FALSE(replay.torn_tail);
  EXPECT_EQ(seqs_of(replay), (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST(StoreRunDir, CorruptRunJsonIsInvalidInputNamingTheFile) {
  TempDir dir;
  fs::path path;
  {
    evoteam::RunDir run = evoteam::RunDir::create(dir / "runs", "t", json::object());
    path = run.path();
  }
  const std::string text = evoteam::read_file(path / "run.json");
  std::ofstream(path / "run.json", std::ios::binary | std::ios::trunc) << text.substr(0, text.size() / 2);
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      if (attempt == 0)
        evoteam::read_run_json(path);
      else
        evoteam::RunDir::open(path);
      FAIL() << "expected InvalidInput";
    } catch (const evoteam::InvalidInput& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find((path / "run.json").string()), std::string::npos) << message;
      EXPECT_NE(message.find("is not valid JSON (truncated?) at byte"), std::string::npos) << message;
    }
  }
  EXPECT_FALSE(evoteam::lock_holder(path).has_value()) << "a failed open must release the lock";
  EXPECT_THROW(evoteam::RunDir::open(dir / "runs" / "missing"), evoteam::InvalidInput);
  EXPECT_THROW(evoteam::read_run_json(dir.path()), evoteam::InvalidInput);
}

// ---- Run lock -----------------------------------------------------------------------------------------

TEST(StoreRunLock, SecondLockInThisProcessIsRefused) {
  TempDir dir;
  evoteam::RunDir run = evoteam::RunDir::create(dir / "runs", "t", json::object());
  EXPECT_EQ(evoteam::lock_holder(run.path()), ::getpid());
  try {
    evoteam::RunLock second(run.path());
    FAIL() << "expected the lock to be refused";
  } catch (const evoteam::Error& e) {
    EXPECT_EQ(e.code(), evoteam::ExitCode::run_locked);
    EXPECT_EQ(std::string(e.what()),
              "run " + run.id() + " is locked by pid " + std::to_string(::getpid()) + " (a live evoteam process)");
  }
  EXPECT_THROW(evoteam::RunDir::open(run.path()), evoteam::Error);
}

// A path typed with a trailing slash (as shells complete it) still names the run in the message.
TEST(StoreRunLock, TheRefusalNamesTheRunWhenThePathEndsInASlash) {
  TempDir dir;
  evoteam::RunDir run = evoteam::RunDir::create(dir / "runs", "t", json::object());
  try {
    evoteam::RunLock second(run.path().string() + "/");
    FAIL() << "expected the lock to be refused";
  } catch (const evoteam::Error& e) {
    EXPECT_EQ(e.code(), evoteam::ExitCode::run_locked);
    EXPECT_EQ(std::string(e.what()).rfind("run " + run.id() + " is locked by pid ", 0), 0u) << e.what();
  }
}

TEST(StoreRunLock, LiveHolderRefusesAndDeadHolderIsTakenOver) {
  TempDir dir;
  const fs::path run_dir = dir / "run";
  fs::create_directories(run_dir);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  ChildGuard child;
  child.pid = ::fork();
  ASSERT_GE(child.pid, 0);
  if (child.pid == 0) {
    ::close(ready[0]);
    try {
      evoteam::RunLock lock(run_dir);
      const char byte = 'k';
      if (::write(ready[1], &byte, 1) != 1) ::_exit(2);
      while (true) ::pause();
    } catch (...) {
      ::_exit(1);
    }
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1) << "the child could not take the lock";
  ::close(ready[0]);

  EXPECT_EQ(evoteam::lock_holder(run_dir), child.pid);
  try {
    evoteam::RunLock refused(run_dir);
    FAIL() << "expected the lock to be refused";
  } catch (const evoteam::Error& e) {
    EXPECT_EQ(e.code(), evoteam::ExitCode::run_locked);
    EXPECT_NE(std::string(e.what()).find("locked by pid " + std::to_string(child.pid)), std::string::npos) << e.what();
  }

  ::kill(child.pid, SIGKILL);
  ::waitpid(child.pid, nullptr, 0);
  const pid_t dead = child.pid;
  child.pid = -1;
  EXPECT_EQ(evoteam::read_file(run_dir / "lock"), std::to_string(dead) + "\n") << "the stale pid stays behind";
  EXPECT_FALSE(evoteam::lock_holder(run_dir).has_value());

  evoteam::RunLock taken(run_dir);
  EXPECT_EQ(evoteam::read_file(run_dir / "lock"), std::to_string(::getpid()) + "\n");
}

TEST(StoreRunLock, ReleasedWhenTheRunIsClosed) {
  TempDir dir;
  fs::path path;
  {
    evoteam::RunDir run = evoteam::RunDir::create(dir / "runs", "t", json::object());
    path = run.path();
  }
  EXPECT_FALSE(evoteam::lock_holder(path).has_value());
  EXPECT_EQ(evoteam::read_file(path / "lock"), "");
  EXPECT_NO_THROW(evoteam::RunDir::open(path));
}

// ---- Listing and small helpers ------------------------------------------------------------------------

TEST(StoreListRuns, NewestFirstAndOnlyDirectoriesWithRunJson) {
  TempDir dir;
  const fs::path runs = dir / "runs";
  for (const char* name :
       {"20260101T000000Z-a", "20261129T184500Z-b", "20250101T000000Z-c", "20261129T184500Z-b-2", ".hidden"}) {
    fs::create_directories(runs / name);
    append_raw(runs / name / "run.json", "{}");
  }
  fs::create_directories(runs / "20270101T000000Z-unfinished");  // no run.json: a half-made run
  append_raw(runs / "notes.txt", "x");
  std::vector<std::string> names;
  for (const fs::path& run : evoteam::list_runs(runs)) names.push_back(run.filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"20261129T184500Z-b-2", "20261129T184500Z-b", "20260101T000000Z-a",
                                             "20250101T000000Z-c"}));
  EXPECT_TRUE(evoteam::list_runs(dir / "missing").empty());
}

TEST(StoreRunStatus, RoundTripsAndRejectsUnknownText) {
  for (const auto status : {evoteam::RunStatus::running, evoteam::RunStatus::finished, evoteam::RunStatus::stopped,
                            evoteam::RunStatus::failed}) {
    EXPECT_EQ(evoteam::run_status_from_string(evoteam::to_string(status)), status);
  }
  EXPECT_THROW(evoteam::run_status_from_string("paused"), evoteam::InvalidInput);
}

TEST(StoreTimestamps, HaveTheDocumentedShapes) {
  EXPECT_TRUE(std::regex_match(evoteam::utc_compact_timestamp(), std::regex(R"(\d{8}T\d{6}Z)")));
  EXPECT_TRUE(std::regex_match(evoteam::utc_iso_timestamp(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));
}

}  // namespace
