#include <evoteam/core/error.hpp>
#include <evoteam/store/store.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace evoteam {

namespace {

// lock_holder() probes with a shared lock for an instant; a few retries keep that probe from being
// mistaken for a live holder.
constexpr int k_lock_attempts = 5;
constexpr std::chrono::milliseconds k_lock_retry_delay{20};

// The pid written in the lock file, or 0 when it is empty or unreadable.
int read_pid(int fd) {
  char buffer[32] = {};
  const ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  if (n <= 0) return 0;
  try {
    return std::stoi(std::string(buffer, static_cast<std::size_t>(n)));
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

RunLock::RunLock(const std::filesystem::path& run_dir, const char* lock_name) {
  const std::filesystem::path lock_path = run_dir / lock_name;
  // "runs/x/" names the run x as "runs/x" does.
  const std::filesystem::path normal = run_dir.lexically_normal();
  const std::string run_name = (normal.has_filename() ? normal : normal.parent_path()).filename().string();
  m_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (m_fd < 0) throw IoError("cannot open lock file " + lock_path.string() + ": " + std::strerror(errno));

  for (int attempt = 1;; ++attempt) {
    if (::flock(m_fd, LOCK_EX | LOCK_NB) == 0) break;
    const int err = errno;
    if (err == EINTR) continue;
    if (err != EWOULDBLOCK || attempt == k_lock_attempts) {
      const int pid = read_pid(m_fd);
      ::close(m_fd);
      m_fd = -1;
      if (err != EWOULDBLOCK) throw IoError("cannot lock " + lock_path.string() + ": " + std::strerror(err));
      const std::string holder = pid > 0 ? "pid " + std::to_string(pid) : "another process";
      throw Error("run " + run_name + " is locked by " + holder + " (a live evoteam process)", ExitCode::run_locked);
    }
    std::this_thread::sleep_for(k_lock_retry_delay);
  }

  // We hold the lock; whatever pid the file names is a dead previous holder's, so it is simply replaced.
  const std::string pid_text = std::to_string(::getpid()) + "\n";
  if (::ftruncate(m_fd, 0) != 0 ||
      ::pwrite(m_fd, pid_text.data(), pid_text.size(), 0) != static_cast<ssize_t>(pid_text.size())) {
    const int err = errno;
    ::close(m_fd);
    m_fd = -1;
    throw IoError("cannot write lock file " + lock_path.string() + ": " + std::strerror(err));
  }
}

RunLock::~RunLock() {
  if (m_fd < 0) return;
  // Empty the pid first so `cat lock` never names a process that has let go; closing releases the flock.
  if (::ftruncate(m_fd, 0) != 0) {
    // Nothing to do: a stale pid is harmless because holders are judged by the flock, not the file.
  }
  ::close(m_fd);
}

std::optional<int> lock_holder(const std::filesystem::path& run_dir, const char* lock_name) {
  const std::filesystem::path lock_path = run_dir / lock_name;
  const int fd = ::open(lock_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<int> holder;
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
    ::flock(fd, LOCK_UN);
  } else if (errno == EWOULDBLOCK) {
    holder = read_pid(fd);
  }
  ::close(fd);
  return holder;
}

}  // namespace evoteam
