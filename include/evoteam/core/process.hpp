#pragma once
// Running child processes: nvcc, candidate harness binaries, profilers, sbatch all go through here.
// Every child gets its own process group, /dev/null as stdin, an allowlisted environment, capped output and a
// deadline that kills the whole group. A child's failure is data (ProcessResult), never an exception; only a
// malformed Command (empty argv, result_fd below 3) throws evoteam::Error.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace evoteam {

class Config;

// Captured output of one stream, cut to head and tail when it exceeds the cap.
struct CapturedOutput {
  std::string text;                // head + "\n[... N bytes elided ...]\n" + tail when elided
  std::uint64_t total_bytes = 0;   // everything the child wrote on this stream
  std::uint64_t elided_bytes = 0;  // bytes left out of `text`
};

// Cap on the result record stream (result_fd). Beyond it the record is cut (head kept, no marker) and
// `elided_bytes` is non-zero: readers must treat such a record as invalid.
inline constexpr std::size_t k_result_record_cap = 16u * 1024 * 1024;

struct Command {
  std::vector<std::string> argv;  // argv[0] is looked up in env's PATH when it has no '/'
  std::filesystem::path cwd;      // empty: inherit; relative argv[0] resolves against it
  // The whole environment of the child. Empty means scrubbed_env(): the daemon's own environment never
  // passes through unfiltered.
  std::map<std::string, std::string> env;
  std::chrono::milliseconds timeout{60'000};  // wall-clock deadline; 0 means none
  // Unset: the runner's ProcessSettings (the configuration's "process" section).
  std::optional<std::chrono::milliseconds> kill_grace;  // SIGTERM to the group, then SIGKILL after this
  std::optional<std::size_t> output_cap;                // per stream: keep cap/2 head and cap/2 tail bytes; 0: no cap
  std::optional<std::uint64_t> max_open_files;          // RLIMIT_NOFILE (clamped to the daemon's hard limit)
  std::uint64_t max_address_space = 0;                  // RLIMIT_AS in bytes; 0 means unlimited
  // Extra pipe the child writes its result record to (the harness's dedicated fd, >= 3), or -1 for none.
  int result_fd = -1;
  // Follows a long-running child as it works (a coding-agent CLI's event stream): called with each piece of
  // stdout as it arrives, and with an empty piece at least every `watch_period` while the child is quiet.
  // Returning false stops the child: its group is terminated as at the deadline, and the result says `stopped`.
  // Runs on the caller's thread; stdout is still captured as usual.
  std::function<bool(std::string_view stdout_piece)> watch;
  std::chrono::milliseconds watch_period{1'000};
};

struct ResourceUsage {
  double user_s = 0;
  double sys_s = 0;
  std::int64_t max_rss_kb = 0;
};

struct ProcessResult {
  bool spawned = false;      // false: the command could not be started (no such file, not executable)
  std::string spawn_error;   // why it could not be started
  int exit_code = -1;        // valid when the child exited normally (signal == 0)
  int signal = 0;            // terminating signal, 0 if none
  bool timed_out = false;    // the deadline fired and the group was killed
  bool interrupted = false;  // the daemon was interrupted and forwarded the signal
  bool stopped = false;      // the command's watch asked for the child to stop
  CapturedOutput out;
  CapturedOutput err;
  CapturedOutput result;  // what the child wrote on result_fd (uncapped up to k_result_record_cap)
  double wall_s = 0;
  ResourceUsage rusage;  // of the child and the descendants it waited for (wait4)

  bool ok() const { return spawned && !timed_out && !interrupted && !stopped && signal == 0 && exit_code == 0; }
  // One line: "exit 1", "killed by SIGSEGV", "timed out after 2.0 s", "could not start: ...".
  std::string describe() const;
};

// One truncation and kill policy for every child: the configuration's "process" section. Deadlines stay per call.
struct ProcessSettings {
  std::chrono::milliseconds kill_grace{2'000};
  std::size_t output_cap = 64 * 1024;
  std::uint64_t max_open_files = 1024;
};
ProcessSettings process_settings(const Config& config);

// Seam for tests (fakes over mocks): the real runner spawns, a fake records and replays.
class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  virtual ProcessResult run(const Command& command) = 0;
};

// The real runner. Safe to call from several threads at once. When the child exits, whatever is left of its
// process group is killed and output still held open by escaped descendants is drained only briefly, so a
// stray grandchild never hangs the caller. Requires that nothing else in the daemon reaps children it did
// not spawn (no waitpid(-1), SIGCHLD not ignored).
ProcessRunner& system_runner();
// The defaults system_runner() gives a Command's unset fields. Set once at startup, before any child runs.
void use_process_settings(const ProcessSettings& settings);
ProcessSettings process_settings_in_use();

// An environment built from an allowlist of the daemon's variables (PATH, HOME, USER, LOGNAME, LANG,
// LANGUAGE, TZ, TMPDIR, TERM, LD_LIBRARY_PATH, LC_*, CUDA_*, NVIDIA_*, SLURM_*); names that look like
// credentials (*_API_KEY, *TOKEN*, *SECRET*, *PASSWORD*, *CREDENTIAL*, *_KEY, SLURM_JWT) are dropped even when
// their prefix is allowed. `extra` is added on top, unfiltered: the caller vouches for it.
std::map<std::string, std::string> scrubbed_env(const std::map<std::string, std::string>& extra = {});

// Installs SIGINT/SIGTERM handlers that forward the signal to every running child group, wake the runs
// (which then escalate to SIGKILL after their grace period and return with interrupted=true) and set the
// interrupted flag. Idempotent. Runs started after the interrupt are not affected, so shutdown work (e.g.
// cancelling cluster jobs) can still spawn processes.
void install_interrupt_forwarding();
// Restores the dispositions that were in place before install_interrupt_forwarding(). For tests.
void uninstall_interrupt_forwarding();
// True once SIGINT/SIGTERM reached the daemon. Long loops poll this at safe points.
bool interrupted();
// Which signal interrupted us (0 if none).
int interrupt_signal();
// For tests: clear the interrupted flag.
void reset_interrupted_for_tests();

// Short signal name: "SIGSEGV"; "signal 40" when it has none.
std::string signal_name(int signal);

}  // namespace evoteam
