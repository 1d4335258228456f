// The system runner: spawn, then one poll loop per run that reads the child's streams, watches its exit,
// the deadline and interrupts, and kills the whole group when any of them says so.
#include <evoteam/core/clock.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/core/text.hpp>

#include "core/process_interrupt.hpp"
#include "core/process_spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <system_error>

namespace evoteam {
namespace {

using Clock = std::chrono::steady_clock;

// After the child exits its leftover group is killed; output still held open by something that left the
// group (setsid) is read only this long, so it can never hang the caller.
constexpr std::chrono::milliseconds k_drain_after_exit{300};
// Without a pidfd (old kernels, seccomp) the child's exit is polled on this period.
constexpr std::chrono::milliseconds k_exit_poll_period{10};
// A run missing from the interrupt table (more than its capacity at once) checks for interrupts this often.
constexpr std::chrono::milliseconds k_interrupt_poll_period{100};

enum class CaptureMode { head_and_tail, head_only };

// Keeps the first cap/2 and last cap/2 bytes of a stream and counts the rest.
class OutputCapture {
 public:
  OutputCapture(std::size_t cap, CaptureMode mode)
      : m_mode(mode),
        m_head_cap(cap == 0 ? std::numeric_limits<std::size_t>::max()
                            : (mode == CaptureMode::head_only ? cap : cap / 2)),
        m_tail_cap(cap == 0 || mode == CaptureMode::head_only ? 0 : cap - cap / 2) {}

  void append(const char* data, std::size_t size) {
    m_total += size;
    const std::size_t to_head = std::min(size, m_head_cap - m_head.size());
    m_head.append(data, to_head);
    data += to_head;
    size -= to_head;
    if (size == 0 || m_tail_cap == 0) return;
    m_tail.append(data, size);
    // Trim in batches: erasing the front on every read would be quadratic on a chatty child.
    if (m_tail.size() > 2 * m_tail_cap) m_tail.erase(0, m_tail.size() - m_tail_cap);
  }

  CapturedOutput finish() {
    if (m_tail.size() > m_tail_cap) m_tail.erase(0, m_tail.size() - m_tail_cap);
    CapturedOutput output;
    output.total_bytes = m_total;
    if (m_total == m_head.size() + m_tail.size()) {
      output.text = std::move(m_head) + m_tail;
      return output;
    }
    // Cut on UTF-8 character boundaries so the text stays valid for JSON transcripts.
    std::size_t head_keep = m_head.size();
    for (std::size_t back = 1; back <= std::min<std::size_t>(3, m_head.size()); ++back) {
      const auto byte = static_cast<unsigned char>(m_head[m_head.size() - back]);
      if ((byte & 0xC0) == 0x80) continue;  // continuation: look further back
      const std::size_t length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1;
      if (length > back) head_keep = m_head.size() - back;  // incomplete: drop it
      break;
    }
    m_head.resize(head_keep);
    std::size_t tail_skip = 0;
    while (tail_skip < std::min<std::size_t>(3, m_tail.size()) &&
           (static_cast<unsigned char>(m_tail[tail_skip]) & 0xC0) == 0x80) {
      ++tail_skip;
    }
    m_tail.erase(0, tail_skip);
    output.elided_bytes = m_total - m_head.size() - m_tail.size();
    if (m_mode == CaptureMode::head_only) {
      output.text = std::move(m_head);
    } else {
      output.text =
          std::move(m_head) + "\n[... " + std::to_string(output.elided_bytes) + " bytes elided ...]\n" + m_tail;
    }
    return output;
  }

 private:
  CaptureMode m_mode;
  std::size_t m_head_cap;
  std::size_t m_tail_cap;
  std::string m_head;
  std::string m_tail;
  std::uint64_t m_total = 0;
};

struct Stream {
  detail::UniqueFd fd;
  OutputCapture capture;
};

// The parent's side of a run's pipes once the child has its ends.
struct RunPipes {
  std::vector<Stream> streams;  // stdout, stderr, then the record channel when the command has one
  detail::Pipe wake;            // the interrupt handler writes a byte to it to end a poll early
};

// What happened to the child while its output was pumped.
struct PumpOutcome {
  bool timed_out = false;
  bool interrupted = false;
  bool stopped = false;  // the command's watch said stop
};

// Reads what is available, handing each piece to `on_piece` when given; returns false at end of file (or a read
// error, which ends the stream as well).
bool read_available(Stream& stream, const std::function<void(std::string_view)>& on_piece = {}) {
  std::array<char, 64 * 1024> buffer;
  while (true) {
    const ssize_t got = ::read(stream.fd.get(), buffer.data(), buffer.size());
    if (got > 0) {
      stream.capture.append(buffer.data(), static_cast<std::size_t>(got));
      if (on_piece) on_piece(std::string_view(buffer.data(), static_cast<std::size_t>(got)));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;
  }
}

void drain_wake_pipe(int fd) {
  char buffer[64];
  while (::read(fd, buffer, sizeof buffer) > 0) {
  }
}

// True once the child has exited; it stays a zombie (WNOWAIT) so its pid, which names the group, is not
// recycled while the group may still be signalled.
bool child_has_exited(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return errno == ECHILD;
  return info.si_pid == pid;
}

double seconds(const timeval& value) { return static_cast<double>(value.tv_sec) + value.tv_usec / 1e6; }

void signal_group(pid_t pgid, int sig) {
  ::kill(-pgid, sig);
  if (sig != SIGKILL && sig != SIGCONT) ::kill(-pgid, SIGCONT);  // a stopped member cannot act on SIGTERM
}

void check_command(const Command& command) {
  if (command.argv.empty()) throw Error("process: a command needs at least argv[0]");
  if (command.result_fd != -1 && command.result_fd < 3) {
    throw Error("process: result_fd must be 3 or above (0-2 are the standard streams), got " +
                std::to_string(command.result_fd));
  }
}

// Opens the run's pipes, keeping the parent's ends in `pipes`, and spawns the child on the others. Our copies
// of the child's ends close when this returns: they must go, or end of file never comes.
detail::SpawnOutcome spawn_on_pipes(const Command& command, RunPipes& pipes) {
  detail::Pipe out = detail::make_pipe(detail::PipeReadEnd::non_blocking);
  detail::Pipe err = detail::make_pipe(detail::PipeReadEnd::non_blocking);
  std::optional<detail::Pipe> record;
  if (command.result_fd >= 0) record = detail::make_pipe(detail::PipeReadEnd::non_blocking);
  pipes.wake = detail::make_pipe(detail::PipeReadEnd::non_blocking);
  ::fcntl(pipes.wake.write.get(), F_SETFL, ::fcntl(pipes.wake.write.get(), F_GETFL) | O_NONBLOCK);
  detail::UniqueFd dev_null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!dev_null) throw IoError("cannot open /dev/null: " + std::system_category().message(errno));

  pipes.streams.reserve(3);
  pipes.streams.push_back({std::move(out.read), OutputCapture(*command.output_cap, CaptureMode::head_and_tail)});
  pipes.streams.push_back({std::move(err.read), OutputCapture(*command.output_cap, CaptureMode::head_and_tail)});
  if (record) {
    pipes.streams.push_back({std::move(record->read), OutputCapture(k_result_record_cap, CaptureMode::head_only)});
  }
  const detail::ChildFds child_fds{dev_null.get(), out.write.get(), err.write.get(), record ? record->write.get() : -1};
  return detail::spawn_child(command, child_fds);
}

// Should anything throw while the child runs, its group is killed and the leader reaped rather than left
// behind. It outlives the pump, so it runs after the group has left the interrupt table.
struct KillOnUnwind {
  pid_t pid;
  bool armed = true;
  ~KillOnUnwind() {
    if (!armed) return;
    ::kill(-pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
};

// The running child's state for one poll loop: it reads the streams, watches the child's exit, the deadline
// and interrupts, and signals the whole group when any of them says so. The group is in the interrupt table
// for as long as this object lives.
class RunningChild {
 public:
  RunningChild(const Command& command, pid_t pid, Clock::time_point started, std::uint64_t generation, RunPipes& pipes)
      : m_command(command),
        m_pid(pid),
        m_generation(generation),
        m_pipes(pipes),
        // Raw syscall: glibc 2.36's <sys/pidfd.h> lacks C linkage for C++. -1 (old kernel) falls back to polling.
        m_pid_fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0))),
        m_live_group(pid, pipes.wake.write.get()) {
    if (command.timeout.count() > 0) m_deadline = started + command.timeout;
  }

  // Returns once the child has exited and its streams have ended, or the drain after its exit ran out.
  PumpOutcome pump() {
    while (true) {
      const auto now = Clock::now();
      // Interrupts first: a child that died of a forwarded signal must be reported as interrupted.
      react_to_interrupt(now);
      notice_exit(now);
      enforce_deadline(now);
      watch_when_quiet(now);
      kill_after_grace(now);
      if (m_exited && (!any_stream_open() || now >= *m_drain_until)) return m_outcome;
      wait_and_read(poll_timeout_ms(now));
    }
  }

 private:
  void react_to_interrupt(Clock::time_point now) {
    if (m_exited || m_outcome.interrupted || detail::interrupt_generation() == m_generation) return;
    m_outcome.interrupted = true;
    // Signal the group only if the handler could not (the interrupt came before registration): a second
    // SIGINT would run a child's trap twice.
    if (m_live_group.forwarded_signal() == 0) {
      const int sig = interrupt_signal();
      signal_group(m_pid, sig != 0 ? sig : SIGTERM);
    } else {
      ::kill(-m_pid, SIGCONT);  // as signal_group does: a stopped member cannot act on the forwarded signal
    }
    arm_kill(now);
  }

  void notice_exit(Clock::time_point now) {
    if (m_exited || !child_has_exited(m_pid)) return;
    m_exited = true;
    ::kill(-m_pid, SIGKILL);  // the group must not outlive its leader (background jobs holding our pipes)
    m_drain_until = now + k_drain_after_exit;
  }

  void enforce_deadline(Clock::time_point now) {
    if (m_exited || m_outcome.timed_out || !m_deadline || now < *m_deadline) return;
    m_outcome.timed_out = true;
    signal_group(m_pid, SIGTERM);
    arm_kill(now);
  }

  // The command's watch is asked at least once a period while the child is quiet (a budget may run out elsewhere).
  void watch_when_quiet(Clock::time_point now) {
    if (!m_command.watch || m_exited || now < m_next_watch) return;
    ask_watch(std::string_view(), now);
  }

  void ask_watch(std::string_view piece, Clock::time_point now) {
    m_next_watch = now + m_command.watch_period;
    if (m_outcome.stopped || m_command.watch(piece)) return;
    m_outcome.stopped = true;
    signal_group(m_pid, SIGTERM);
    arm_kill(now);
  }

  // SIGTERM (or the interrupt) went to the group; SIGKILL follows once the grace period is over.
  void arm_kill(Clock::time_point now) {
    if (!m_kill_at) m_kill_at = now + *m_command.kill_grace;
  }

  void kill_after_grace(Clock::time_point now) {
    if (m_exited || !m_kill_at || now < *m_kill_at) return;
    ::kill(-m_pid, SIGKILL);
    m_kill_at.reset();
  }

  bool any_stream_open() const {
    return std::any_of(m_pipes.streams.begin(), m_pipes.streams.end(), [](const Stream& s) { return bool(s.fd); });
  }

  // -1 (no timer) or the milliseconds until the next timer that the loop must act on.
  int poll_timeout_ms(Clock::time_point now) const {
    std::optional<Clock::time_point> wake_at;
    const auto consider = [&](std::optional<Clock::time_point> t) {
      if (t && (!wake_at || *t < *wake_at)) wake_at = t;
    };
    if (!m_exited && !m_outcome.timed_out) consider(m_deadline);
    if (!m_exited) consider(m_kill_at);
    if (m_exited) consider(m_drain_until);
    if (!m_exited && !m_pid_fd) consider(now + k_exit_poll_period);
    if (!m_exited && m_command.watch) consider(m_next_watch);
    if (!m_live_group.registered()) consider(now + k_interrupt_poll_period);
    if (!wake_at) return -1;
    const auto remaining = std::chrono::ceil<std::chrono::milliseconds>(*wake_at - now).count();
    return static_cast<int>(std::clamp<std::int64_t>(remaining, 0, 60'000));
  }

  // Waits for output, the child's exit, a wake-up or the timeout, then reads whatever became available.
  void wait_and_read(int timeout_ms) {
    m_poll_fds.clear();
    for (const Stream& stream : m_pipes.streams) {
      if (stream.fd) m_poll_fds.push_back({stream.fd.get(), POLLIN, 0});
    }
    if (!m_exited && m_pid_fd) m_poll_fds.push_back({m_pid_fd.get(), POLLIN, 0});
    m_poll_fds.push_back({m_pipes.wake.read.get(), POLLIN, 0});
    if (::poll(m_poll_fds.data(), m_poll_fds.size(), timeout_ms) < 0) {
      // Only EINTR is expected; on anything else give up on the child rather than leave it running.
      if (errno != EINTR) {
        ::kill(-m_pid, SIGKILL);
        ::usleep(10'000);
      }
      return;
    }
    const std::function<void(std::string_view)> to_watch = [this](std::string_view piece) {
      ask_watch(piece, Clock::now());
    };
    for (std::size_t i = 0; i < m_pipes.streams.size(); ++i) {
      Stream& stream = m_pipes.streams[i];
      if (!stream.fd) continue;
      const auto it =
          std::find_if(m_poll_fds.begin(), m_poll_fds.end(), [&](const pollfd& p) { return p.fd == stream.fd.get(); });
      const bool watched = i == 0 && m_command.watch;  // stdout only
      if (it != m_poll_fds.end() && it->revents != 0 && !read_available(stream, watched ? to_watch : nullptr))
        stream.fd.reset();
    }
    if (m_poll_fds.back().revents != 0) drain_wake_pipe(m_pipes.wake.read.get());
  }

  const Command& m_command;
  const pid_t m_pid;
  const std::uint64_t m_generation;
  RunPipes& m_pipes;
  detail::UniqueFd m_pid_fd;
  detail::LiveGroup m_live_group;
  std::optional<Clock::time_point> m_deadline;
  std::optional<Clock::time_point> m_kill_at;
  std::optional<Clock::time_point> m_drain_until;
  Clock::time_point m_next_watch = Clock::now();
  bool m_exited = false;
  PumpOutcome m_outcome;
  std::vector<pollfd> m_poll_fds;
};

// Pumps the child's output until it has exited. The group leaves the interrupt table when this returns,
// before the caller reaps, so the handler never signals a recycled pid.
PumpOutcome pump_until_exit(const Command& command, pid_t pid, Clock::time_point started, std::uint64_t generation,
                            RunPipes& pipes) {
  RunningChild child(command, pid, started, generation, pipes);
  return child.pump();
}

// Waits for the leader and records how it ended, the wall time and its resource use.
void reap(pid_t pid, Clock::time_point started, ProcessResult& result) {
  int status = 0;
  rusage usage{};
  pid_t reaped = -1;
  do {
    reaped = ::wait4(pid, &status, 0, &usage);
  } while (reaped < 0 && errno == EINTR);
  result.wall_s = seconds_since(started);
  // reaped < 0 (ECHILD) only if something else reaped our child; its status is then unknown (exit_code -1).
  if (reaped == pid && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (reaped == pid && WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.rusage.user_s = seconds(usage.ru_utime);
  result.rusage.sys_s = seconds(usage.ru_stime);
  result.rusage.max_rss_kb = usage.ru_maxrss;
}

void report_output(std::vector<Stream>& streams, ProcessResult& result) {
  result.out = streams[0].capture.finish();
  result.err = streams[1].capture.finish();
  if (streams.size() > 2) result.result = streams[2].capture.finish();
}

std::mutex g_settings_mutex;
ProcessSettings g_settings;

// The command with every unset field taken from the settings, so the spawn and pump code read plain values.
Command with_settings(const Command& given) {
  const ProcessSettings settings = process_settings_in_use();
  Command command = given;
  if (!command.kill_grace) command.kill_grace = settings.kill_grace;
  if (!command.output_cap) command.output_cap = settings.output_cap;
  if (!command.max_open_files) command.max_open_files = settings.max_open_files;
  return command;
}

class SystemRunner final : public ProcessRunner {
 public:
  ProcessResult run(const Command& given) override;
};

ProcessResult SystemRunner::run(const Command& given) {
  const Command command = with_settings(given);
  check_command(command);
  ProcessResult result;
  const auto started = Clock::now();
  const std::uint64_t generation = detail::interrupt_generation();

  RunPipes pipes;
  const detail::SpawnOutcome spawn = spawn_on_pipes(command, pipes);
  if (spawn.pid <= 0) {
    result.spawn_error = spawn.error;
    result.wall_s = seconds_since(started);
    return result;
  }
  result.spawned = true;
  KillOnUnwind kill_on_unwind{spawn.pid};

  const PumpOutcome outcome = pump_until_exit(command, spawn.pid, started, generation, pipes);
  result.timed_out = outcome.timed_out;
  result.interrupted = outcome.interrupted;
  result.stopped = outcome.stopped;

  // The group has left the interrupt table with the pump; only now may the leader be reaped.
  kill_on_unwind.armed = false;
  reap(spawn.pid, started, result);
  report_output(pipes.streams, result);
  return result;
}

}  // namespace

ProcessRunner& system_runner() {
  static SystemRunner runner;
  return runner;
}

void use_process_settings(const ProcessSettings& settings) {
  std::lock_guard<std::mutex> lock(g_settings_mutex);
  g_settings = settings;
}

ProcessSettings process_settings_in_use() {
  std::lock_guard<std::mutex> lock(g_settings_mutex);
  return g_settings;
}

std::string ProcessResult::describe() const {
  if (!spawned) return "could not start: " + spawn_error;
  std::string how = signal != 0 ? "killed by " + signal_name(signal) : "exit " + std::to_string(exit_code);
  if (interrupted) return "interrupted (" + how + ")";
  if (timed_out) return "timed out after " + fixed(wall_s, 1) + " s (" + how + ")";
  if (stopped) return "stopped by its watcher (" + how + ")";
  return how;
}

std::string signal_name(int signal) {
  if (const char* abbrev = ::sigabbrev_np(signal); abbrev != nullptr) return std::string("SIG") + abbrev;
  return "signal " + std::to_string(signal);
}

}  // namespace evoteam
