#pragma once
// Running evoteam itself as a detached daemon (`optimize --detach`). The command line re-executes its own
// binary in a new session, stdin from /dev/null, and waits on a pipe: the daemon writes its run directory
// there as soon as the run exists, and only then stops writing to the caller's terminal. So errors found
// before the run exists (a bad task, a bad flag) still reach the caller with their exit code, and a started
// run hands the caller its directory at once.
#include <sys/types.h>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace evoteam {

struct DetachedStart {
  pid_t pid = 0;
  std::optional<std::string> announced;  // what the daemon announced (its run directory), if it got that far
  int exit_code = 0;                     // how the daemon exited when it announced nothing
};

// Starts `/proc/self/exe args...` (args excludes argv[0]) in its own session and returns once it has
// announced its run directory or exited. Throws Error when the process cannot be started.
DetachedStart start_detached(const std::vector<std::string>& args);

// In a daemon started by start_detached: points stdout and stderr at `log_file` (appending), then announces
// `run_dir` to the waiting caller and lets go of it. Does nothing in a process not started that way.
void announce_detached_run(const std::filesystem::path& run_dir, const std::filesystem::path& log_file);

}  // namespace evoteam
