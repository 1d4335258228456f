#pragma once
// One error style for the whole daemon (see CONTRIBUTING.md):
//  - outcomes of experiments (a kernel that fails to build, a process that exits non-zero, a malformed LLM
//    reply) are data, returned in result structs and journaled;
//  - misconfiguration, bad input and broken invariants throw evoteam::Error, caught once at the top of main,
//    which prints "evoteam: error: ..." and exits with the error's ExitCode.
#include <stdexcept>
#include <string>

namespace evoteam {

// The system's text for an errno value ("No such file or directory"); safe to call from any thread.
std::string errno_text(int err);

// Process exit codes, documented in README.md. Scripts depend on them: never renumber.
enum class ExitCode : int {
  success = 0,
  failure = 1,           // the command ran but did not succeed (e.g. eval verdict other than PASS)
  usage = 2,             // bad command line
  invalid_input = 3,     // invalid task, config, or run directory
  run_locked = 4,        // another live daemon holds the run
  budget_exhausted = 5,  // a run stopped because a budget ran out before its target was met
  provider_refused = 6,  // the LLM provider refused every member's calls for good (a refused key, an unknown model)
  internal = 70,         // a bug in evoteam (EX_SOFTWARE)
  io = 74,               // the file system refused a write (EX_IOERR): disk full, read-only
  interrupted = 130,     // stopped by SIGINT/SIGTERM at a safe point
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ExitCode code = ExitCode::failure)
      : std::runtime_error(message), m_code(code) {}
  ExitCode code() const { return m_code; }

 private:
  ExitCode m_code;
};

// Invalid user input: a task, config or run directory. The message names the file and field.
class InvalidInput : public Error {
 public:
  explicit InvalidInput(const std::string& message) : Error(message, ExitCode::invalid_input) {}
};

// The file system refused an operation (ENOSPC, EROFS, EACCES ...).
class IoError : public Error {
 public:
  explicit IoError(const std::string& message) : Error(message, ExitCode::io) {}
};

[[noreturn]] void throw_check_failure(const char* file, int line, const std::string& message);

}  // namespace evoteam

// Invariant check: a failure is a bug in evoteam, reported with file and line.
#define EVOTEAM_CHECK(cond, msg)                                            \
  do {                                                                      \
    if (!(cond)) ::evoteam::throw_check_failure(__FILE__, __LINE__, (msg)); \
  } while (0)
