#pragma once
// A run's `evoteam resume` started by the campaign: in its own session (a terminal's Ctrl-C or the campaign's own
// death does not reach it), stdin from /dev/null, its output appended to the run's daemon.log as a detached run's.
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace evoteam {

// Starts `program args...` with this process's environment; returns its pid (the caller reaps it). Throws Error
// when it cannot be started.
pid_t spawn_in_session(const std::filesystem::path& program, const std::vector<std::string>& args,
                       const std::filesystem::path& log_file);

}  // namespace evoteam
