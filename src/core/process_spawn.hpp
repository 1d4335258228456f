#pragma once
// Private to the process runner: file descriptors that close themselves, and starting one child.
#include <evoteam/core/process.hpp>

#include <sys/types.h>

#include <string>
#include <utility>

namespace evoteam::detail {

// Owns one file descriptor.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : m_fd(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      m_fd = std::exchange(other.m_fd, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return m_fd; }
  explicit operator bool() const { return m_fd >= 0; }
  void reset();

 private:
  int m_fd = -1;
};

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

enum class PipeReadEnd { blocking, non_blocking };

// A close-on-exec pipe; throws IoError when the daemon is out of descriptors.
Pipe make_pipe(PipeReadEnd read_end);

// The child's ends of its standard streams (all close-on-exec in the parent).
struct ChildFds {
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  int result_fd = -1;  // -1: none; else mapped to command.result_fd in the child
};

struct SpawnOutcome {
  pid_t pid = -1;     // > 0: running, leader of its own process group
  std::string error;  // set when the command could not be started (the child, if any, is already reaped)
};

// Starts `command` with `fds` as its streams, in a new process group, with default signal dispositions and
// mask, the command's environment, working directory and resource limits.
SpawnOutcome spawn_child(const Command& command, const ChildFds& fds);

}  // namespace evoteam::detail
