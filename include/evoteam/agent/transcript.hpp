#pragma once
// An agent's transcript, cycles/<nnnn>/agents/<role>/transcript.jsonl in the run directory, whose layout users
// rely on (they read it with cat and jq): append-only JSON lines, one record per message, each written with one
// write(2) and fdatasync so a crash loses at most the record being written. Records carry "seq", "t" (UTC
// ISO-8601) and "type":
//   "message":     role ("system", "user", "assistant"), content (canonical blocks; a string for system);
//                  assistant messages add usage, cost_usd, model, latency_s, stop_reason, request_id,
//                  attempts, agent_elapsed_s
//   "call_failed": a provider call that brought no reply (kind, http_status, message, attempts)
//   "stop":        the loop's stop reason, steps, usage and cost of the agent, and the submission summary
// A coding-agent CLI member's transcript holds instead "cli_start" (its command line without the prompt, the
// prompt, the sandbox), "cli_event" (each JSON event the CLI printed, as printed), "cli_text" (any other line) and
// "cli_end" (how the turn ended, the usage and cost charged, the events read).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evoteam {

// <cycle_dir>/agents/<role>/transcript.jsonl
std::filesystem::path agent_transcript_path(const std::filesystem::path& cycle_dir, const std::string& role);

class Transcript {
 public:
  // Opens for appending, creating parent folders and the file. A torn last line left by a crash is cut
  // away first. Throws IoError when it cannot.
  explicit Transcript(std::filesystem::path path);
  ~Transcript();
  Transcript(const Transcript&) = delete;
  Transcript& operator=(const Transcript&) = delete;

  // Appends `record` with "seq" and "t" set first. Throws IoError on failure.
  void append(nlohmann::json record);
  const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
  int m_fd = -1;
  std::uint64_t m_next_seq = 1;
};

// Every whole record of a transcript, in order; a torn or unparsable last line is dropped. A missing file
// is an empty list. Throws InvalidInput for an unparsable line in the middle.
std::vector<nlohmann::json> read_transcript(const std::filesystem::path& path);

}  // namespace evoteam
