#include <evoteam/core/detach.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <evoteam/core/error.hpp>

namespace evoteam {

namespace {

// The daemon finds the write end of the announcement pipe through this variable; it is removed from the
// environment as soon as it is read, so tools the daemon runs never see it.
constexpr const char* k_announce_fd_variable = "EVOTEAM_DETACH_FD";

// Exit status of a daemon that could not even be executed (as a shell reports it).
constexpr int k_exec_failed = 127;

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return static_cast<int>(ExitCode::internal);
}

// The daemon's argv, built before fork: only async-signal-safe calls may run between fork and exec.
constexpr const char* k_self = "/proc/self/exe";

std::vector<char*> daemon_argv(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(k_self));
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  return argv;
}

[[noreturn]] void exec_daemon(char* const* argv, int announce_fd) {
  ::setsid();
  const int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd >= 0) {
    ::dup2(null_fd, STDIN_FILENO);
    if (null_fd != STDIN_FILENO) ::close(null_fd);
  }
  // The pipe was made close-on-exec; this end must survive into the daemon.
  ::fcntl(announce_fd, F_SETFD, 0);
  ::execv(k_self, argv);
  ::_exit(k_exec_failed);
}

}  // namespace

DetachedStart start_detached(const std::vector<std::string>& args) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(std::string("cannot create a pipe: ") + errno_text(errno));
  // Set before fork: setenv is not safe in the child of a threaded process.
  const std::string fd_text = std::to_string(fds[1]);
  std::vector<char*> argv = daemon_argv(args);
  ::setenv(k_announce_fd_variable, fd_text.c_str(), 1);
  const pid_t pid = ::fork();
  if (pid == 0) exec_daemon(argv.data(), fds[1]);
  const int fork_errno = errno;
  ::unsetenv(k_announce_fd_variable);
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    throw Error(std::string("cannot start the daemon: ") + errno_text(fork_errno));
  }

  // The daemon closes its end after announcing, or dies: either way the read ends.
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n > 0)
      text.append(buffer, static_cast<std::size_t>(n));
    else if (n < 0 && errno == EINTR)
      continue;
    else
      break;
  }
  ::close(fds[0]);

  DetachedStart start;
  start.pid = pid;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (!text.empty()) {
    start.announced = text;  // the daemon runs on; it is reparented when we exit
    return start;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  start.exit_code = exit_code_of(status);
  return start;
}

void announce_detached_run(const std::filesystem::path& run_dir, const std::filesystem::path& log_file) {
  const char* fd_text = std::getenv(k_announce_fd_variable);
  if (fd_text == nullptr) return;
  const int announce_fd = std::atoi(fd_text);
  ::unsetenv(k_announce_fd_variable);
  if (announce_fd < 3) return;
  // From here on nothing reaches the caller's terminal: the daemon's output goes to the run directory.
  const int log_fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd >= 0) {
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::close(log_fd);
  }
  // A caller gone meanwhile (its terminal closed) must not take the run down with SIGPIPE: the run goes on.
  struct sigaction ignore {};
  struct sigaction previous {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &previous);
  const std::string line = run_dir.string() + "\n";
  const char* data = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(announce_fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  ::close(announce_fd);
  ::sigaction(SIGPIPE, &previous, nullptr);
}

}  // namespace evoteam
