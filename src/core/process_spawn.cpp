// Starting one child: fork + execve rather than posix_spawn.
//
// posix_spawn covers the process group, the signal mask and dispositions, the descriptors and (glibc 2.36)
// the working directory, but it cannot set resource limits, and a candidate must never dump core or open
// unbounded files. The alternatives are worse: setting limits in the daemon around the spawn changes them for
// every thread and races with concurrent runs; prlimit(2) on the pid after the spawn leaves a window where the
// child runs unlimited; a `prlimit`/`sh -c ulimit` trampoline adds an exec whose "not found" exit 127 cannot be
// told apart from the command's own. So the child is forked and, before execve, does only what posix_spawn's
// child does plus setrlimit, using async-signal-safe calls on data prepared in the parent (fork in a
// threaded program copies only this thread, and any lock another thread held stays held in the child).
// Unlike posix_spawn, the child also asks to die with the daemon (PR_SET_PDEATHSIG).
// A close-on-exec status pipe tells the parent whether execve succeeded, and if not which step failed and why.
#include "core/process_spawn.hpp"

#include <evoteam/core/error.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <string_view>
#include <system_error>
#include <vector>

namespace evoteam::detail {
namespace {

enum class ChildStep : int { process_group, descriptors, working_directory, limits, exec };

struct ChildFailure {
  ChildStep step;
  int err;
};

// Everything the child needs, computed before fork so the child allocates nothing.
struct ChildPlan {
  const char* program = nullptr;
  std::vector<char*> argv;
  std::vector<char*> envp;
  const char* cwd = nullptr;
  ChildFds fds;
  int result_target = -1;
  int status_fd = -1;
  pid_t parent_pid = -1;
  rlimit core{0, 0};
  rlimit open_files{};
  bool limit_address_space = false;
  rlimit address_space{};
  int max_fd_to_scan = 1024;  // fallback when close_range is not available
  sigset_t empty_mask{};
};

[[noreturn]] void child_fail(const ChildPlan& plan, ChildStep step) {
  const ChildFailure failure{step, errno};
  [[maybe_unused]] const ssize_t ignored = ::write(plan.status_fd, &failure, sizeof failure);
  ::_exit(127);
}

// Runs in the forked child: async-signal-safe calls only, no allocation, no exceptions.
[[noreturn]] void child_main(const ChildPlan& plan) {
  if (::setpgid(0, 0) != 0) child_fail(plan, ChildStep::process_group);
  // If the daemon dies without cleaning up (SIGKILL, OOM killer), the child goes too. The death signal fires
  // when the forking thread exits, which is safe: run() holds that thread until the child is reaped.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != plan.parent_pid) ::_exit(127);  // the daemon died before prctl took effect

  // Handlers are reset by execve, but ignored signals (SIGPIPE in many daemons) would stay ignored.
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    ::sigaction(sig, &action, nullptr);  // glibc refuses its internal signals: harmless
  }

  // Move every source above the targets first, so no dup2 overwrites a source still to be used
  // (the daemon's own 0-2 may be closed, making a pipe end land on one of them).
  const int floor = std::max(3, plan.result_target + 1);
  const int in = ::fcntl(plan.fds.stdin_fd, F_DUPFD, floor);
  const int out = ::fcntl(plan.fds.stdout_fd, F_DUPFD, floor);
  const int err = ::fcntl(plan.fds.stderr_fd, F_DUPFD, floor);
  const int res = plan.fds.result_fd >= 0 ? ::fcntl(plan.fds.result_fd, F_DUPFD, floor) : -1;
  if (in < 0 || out < 0 || err < 0 || (plan.fds.result_fd >= 0 && res < 0)) {
    child_fail(plan, ChildStep::descriptors);
  }
  if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0 ||
      (res >= 0 && ::dup2(res, plan.result_target) < 0)) {
    child_fail(plan, ChildStep::descriptors);
  }
  // Nothing else of the daemon's may reach the candidate: descriptors opened elsewhere without
  // close-on-exec (sockets, lock files) are marked now; the status pipe already is.
  if (::close_range(3, UINT_MAX, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd < plan.max_fd_to_scan; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  if (plan.result_target >= 0 && ::fcntl(plan.result_target, F_SETFD, 0) != 0) {
    child_fail(plan, ChildStep::descriptors);
  }

  if (plan.cwd != nullptr && ::chdir(plan.cwd) != 0) child_fail(plan, ChildStep::working_directory);

  if (::setrlimit(RLIMIT_CORE, &plan.core) != 0) child_fail(plan, ChildStep::limits);
  if (::setrlimit(RLIMIT_NOFILE, &plan.open_files) != 0) child_fail(plan, ChildStep::limits);
  if (plan.limit_address_space && ::setrlimit(RLIMIT_AS, &plan.address_space) != 0) {
    child_fail(plan, ChildStep::limits);
  }

  ::sigprocmask(SIG_SETMASK, &plan.empty_mask, nullptr);
  ::execve(plan.program, plan.argv.data(), plan.envp.data());
  child_fail(plan, ChildStep::exec);
}

bool is_executable_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// execvp's search, done in the parent against the child's PATH (the child cannot allocate).
// Returns the path to execute, or sets `error`.
std::string resolve_program(const Command& command, const std::map<std::string, std::string>& env, std::string& error) {
  const std::string& name = command.argv.front();
  if (name.find('/') != std::string::npos) return name;  // relative ones resolve after chdir, like execve
  std::string search_path = "/usr/local/bin:/usr/bin:/bin";
  if (const auto it = env.find("PATH"); it != env.end()) search_path = it->second;
  bool found_unexecutable = false;
  std::string_view rest = search_path;
  while (true) {
    const std::size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (dir.empty()) dir = ".";
    if (dir.front() != '/' && !command.cwd.empty()) dir = (command.cwd / dir).string();
    const std::string candidate = dir + "/" + name;
    if (is_executable_file(candidate)) return candidate;
    if (::access(candidate.c_str(), F_OK) == 0) found_unexecutable = true;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  error = found_unexecutable ? "'" + name + "' is not executable (PATH=" + search_path + ")"
                             : "command not found: '" + name + "' (PATH=" + search_path + ")";
  return {};
}

std::string describe_failure(const ChildFailure& failure, const std::string& program, const Command& command) {
  const std::string reason = errno_text(failure.err);
  switch (failure.step) {
    case ChildStep::process_group: return "cannot create a process group: " + reason;
    case ChildStep::descriptors: return "cannot set up the child's descriptors: " + reason;
    case ChildStep::working_directory: return "cannot change directory to '" + command.cwd.string() + "': " + reason;
    case ChildStep::limits: return "cannot set resource limits: " + reason;
    case ChildStep::exec: return "cannot execute '" + program + "': " + reason;
  }
  return reason;
}

}  // namespace

void UniqueFd::reset() {
  if (m_fd >= 0) ::close(m_fd);
  m_fd = -1;
}

Pipe make_pipe(PipeReadEnd read_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw IoError("cannot create a pipe for a child process: " + errno_text(errno));
  Pipe pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
  if (read_end == PipeReadEnd::non_blocking) {
    ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  }
  return pipe;
}

SpawnOutcome spawn_child(const Command& command, const ChildFds& fds) {
  SpawnOutcome outcome;
  const std::map<std::string, std::string> env = command.env.empty() ? scrubbed_env() : command.env;
  const std::string program = resolve_program(command, env, outcome.error);
  if (!outcome.error.empty()) return outcome;

  // The strings live in these vectors until after fork; the child only reads them.
  std::vector<std::string> env_entries;
  env_entries.reserve(env.size());
  for (const auto& [key, value] : env) env_entries.push_back(key + "=" + value);
  const std::string cwd = command.cwd.string();

  ChildPlan plan;
  plan.program = program.c_str();
  for (const std::string& arg : command.argv) plan.argv.push_back(const_cast<char*>(arg.c_str()));
  plan.argv.push_back(nullptr);
  for (std::string& entry : env_entries) plan.envp.push_back(entry.data());
  plan.envp.push_back(nullptr);
  plan.cwd = cwd.empty() ? nullptr : cwd.c_str();
  plan.fds = fds;
  plan.result_target = fds.result_fd >= 0 ? command.result_fd : -1;

  rlimit current{};
  ::getrlimit(RLIMIT_NOFILE, &current);
  const rlim_t wanted = static_cast<rlim_t>(*command.max_open_files);
  const rlim_t open_files = current.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, current.rlim_max);
  plan.open_files = {open_files, open_files};
  plan.max_fd_to_scan = static_cast<int>(std::min<rlim_t>(current.rlim_cur, 65536));
  if (command.max_address_space > 0) {
    plan.limit_address_space = true;
    plan.address_space = {static_cast<rlim_t>(command.max_address_space),
                          static_cast<rlim_t>(command.max_address_space)};
  }
  sigemptyset(&plan.empty_mask);
  plan.parent_pid = ::getpid();

  Pipe status = make_pipe(PipeReadEnd::blocking);
  plan.status_fd = status.write.get();

  // Blocked across fork so no daemon handler (interrupt forwarding) runs in the child before it resets them.
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  const pid_t pid = ::fork();
  if (pid == 0) child_main(plan);
  const int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  status.write.reset();
  if (pid < 0) {
    outcome.error = "cannot fork: " + errno_text(fork_errno);
    return outcome;
  }
  // Both sides set the group, so the parent can signal it whichever runs first; EACCES after exec is fine.
  ::setpgid(pid, pid);

  ChildFailure failure{};
  ssize_t got = 0;
  do {
    got = ::read(status.read.get(), &failure, sizeof failure);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof failure)) {
    int wait_status = 0;
    while (::waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
    }
    outcome.error = describe_failure(failure, program, command);
    return outcome;
  }
  outcome.pid = pid;
  return outcome;
}

}  // namespace evoteam::detail
