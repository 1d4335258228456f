#pragma once
// The experiment directory, a contract with users who read it with plain tools (ls, cat, jq) and with resume:
// one directory per run holding run.json, an append-only journal, the frozen task, candidates, cycles and
// knowledge. Every committed record survives kill -9.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/core/timestamp.hpp>

namespace evoteam {

class Config;

inline constexpr int k_journal_version = 1;

// store.runs_dir: where run directories are created when --runs-dir is not given.
std::filesystem::path configured_runs_dir(const Config& config);

// --- Journal ---------------------------------------------------------------------------------------------

// Append-only JSON lines; the first line is {"evoteam_journal": 1, "created": ...}. Each append is one
// write(2) of a whole line followed by fdatasync, so an acknowledged record is on disk. Appends from several
// threads are serialised. One writer per file: the run lock guarantees it across processes.
class Journal {
 public:
  // Opens for appending, creating the file atomically with its version line if absent. A torn last line
  // left by a crash is truncated away first (with a warning in the log). Throws InvalidInput when the file
  // is not an evoteam journal, IoError when it cannot be opened or repaired.
  explicit Journal(const std::filesystem::path& path);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Appends one JSON object as one line, starting with "seq" (next in order unless given) and "t" (UTC
  // ISO-8601 time unless given). Returns the record's seq. Throws IoError on failure, after truncating any
  // partial line away so the file stays a valid journal.
  std::uint64_t append(nlohmann::json record);
  // The seq the next record will get: 1 for a new journal, the largest recorded seq + 1 after a reopen.
  std::uint64_t next_seq() const;
  const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
  int m_fd = -1;
  std::uint64_t m_next_seq = 1;
  std::uint64_t m_size = 0;  // bytes of whole lines in the file; a failed write is truncated back to it
  bool m_broken = false;     // a failed write could not be undone: refuse further appends
  mutable std::mutex m_mutex;
};

struct JournalReplay {
  nlohmann::json version;               // the first line
  std::vector<nlohmann::json> records;  // every whole record after it, in order
  bool torn_tail = false;               // a partial last line was found (and dropped)
  std::string torn_tail_text;           // what it held, for the report
  std::vector<std::string> warnings;    // e.g. a corrupt line in the middle (kept out of records)
};

// Reads a journal without locking it. A torn tail (a last line without its newline, or an unparsable last
// line) is reported and dropped, never fatal; an unparsable line in the middle becomes a warning. Throws
// InvalidInput if the file is missing, empty, or its first line is not an evoteam journal (or a newer one).
JournalReplay replay_journal(const std::filesystem::path& path);

inline constexpr const char* k_lock_name = "lock";

// --- Run lock --------------------------------------------------------------------------------------------

// flock(LOCK_EX|LOCK_NB) on <run>/lock, which then holds our pid. A lock held by a live process is refused
// (Error with ExitCode::run_locked naming the pid); a stale lock file of a dead process is taken over (the
// kernel drops a flock when its holder dies). The descriptor is close-on-exec, so spawned tools never
// inherit the lock.
class RunLock {
 public:
  // `lock_name` names the lock file inside `run_dir`: a campaign directory is locked the same way through its own
  // campaign.lock, beside the run directories it holds.
  explicit RunLock(const std::filesystem::path& run_dir, const char* lock_name = k_lock_name);
  ~RunLock();  // empties the pid in the lock file and releases the lock
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int m_fd = -1;
};

// The pid recorded in a run's lock file if a live process holds the lock (0 when the holder has not
// written its pid yet), else nullopt.
std::optional<int> lock_holder(const std::filesystem::path& run_dir, const char* lock_name = k_lock_name);

// --- Run directory ---------------------------------------------------------------------------------------

inline constexpr const char* k_run_json_name = "run.json";
inline constexpr const char* k_journal_name = "journal.jsonl";

enum class RunStatus { running, finished, stopped, failed };
std::string to_string(RunStatus status);
// The status a text names, or nullopt for any other text.
std::optional<RunStatus> parse_run_status(std::string_view text);
// Throws InvalidInput for an unknown status text.
RunStatus run_status_from_string(const std::string& text);

// A run directory opened for writing by this process (it holds the lock).
class RunDir {
 public:
  // Creates runs_dir/<UTC timestamp>-<task_name>[-N] (mkdir is the atomic claim of the id) with the lock,
  // the standard subfolders, journal.jsonl, whatever `fill` writes into the new directory (the frozen task),
  // and, last, run.json: `run_info` merged with id, task, status "running", stop_reason null, pid, started,
  // updated. A directory without run.json is not a run, so a run never lacks what `fill` writes: a failure
  // (a full disk) removes the half-made directory, and a kill -9 leaves one that is not listed as a run.
  using Filler = std::function<void(const std::filesystem::path& run_path)>;
  static RunDir create(const std::filesystem::path& runs_dir, const std::string& task_name,
                       const nlohmann::json& run_info, const Filler& fill = {});
  // Opens an existing run for resuming: takes the lock, validates run.json, repairs a torn journal tail,
  // and records our pid in run.json (the status is the caller's to change).
  static RunDir open(const std::filesystem::path& run_dir);

  const std::filesystem::path& path() const { return m_path; }
  const std::string& id() const { return m_id; }
  Journal& journal() { return *m_journal; }

  nlohmann::json read_run_json() const;
  // Atomically rewrites run.json with `patch` merged in (merge_patch semantics; "stop_reason" is kept,
  // as null, even when patched to null) and "updated" set to now. Safe to call from several threads.
  void update_run_json(const nlohmann::json& patch);

  std::filesystem::path task_dir() const;                                      // task/
  std::filesystem::path candidate_dir(const std::string& candidate_id) const;  // candidates/<id>
  std::filesystem::path cycle_dir(int cycle) const;                            // cycles/0001
  std::filesystem::path knowledge_dir() const;                                 // knowledge/
  std::filesystem::path best_dir() const;                                      // best/
  std::filesystem::path start_dir() const;  // start/: the earlier run's best it started from (optimize --from)

 private:
  RunDir(std::filesystem::path path, std::string id);
  std::filesystem::path m_path;
  std::string m_id;
  std::unique_ptr<RunLock> m_lock;
  std::unique_ptr<Journal> m_journal;
  std::unique_ptr<std::mutex> m_run_json_mutex;  // behind a pointer so RunDir stays movable
};

// Reads run.json of any run (no lock); throws InvalidInput naming the file when missing, corrupt or
// truncated, or not a JSON object.
nlohmann::json read_run_json(const std::filesystem::path& run_dir);

// Lists run directories under runs_dir (those holding run.json), newest first by id; only the directory is
// read, not the runs. A missing runs_dir is an empty list; an unreadable one throws IoError.
std::vector<std::filesystem::path> list_runs(const std::filesystem::path& runs_dir);

}  // namespace evoteam
