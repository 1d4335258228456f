#include "eval/device_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <evoteam/core/clock.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

namespace evoteam::eval {

std::optional<DeviceLock> DeviceLock::acquire(const std::filesystem::path& lock_dir, const std::string& device,
                                              std::chrono::milliseconds timeout) {
  // The lock directory is the machine's, shared by every user's runs (one GPU, whoever runs on it): made like /tmp,
  // world-writable and sticky, and its files readable by all, so a run by one user never shuts out the next user's.
  // One made before this rule (0755) is mended by its owner's next run.
  evoteam::create_directories(lock_dir);
  if (struct stat info{};
      ::stat(lock_dir.c_str(), &info) == 0 && info.st_uid == ::geteuid() && (info.st_mode & 07777) != 01777)
    ::chmod(lock_dir.c_str(), 01777);
  std::string name = device;
  for (char& c : name)
    if (c == '/' || c == ':' || c == ' ') c = '_';
  const std::filesystem::path path = lock_dir / ("evoteam-" + name + ".lock");
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd >= 0) {
    ::fchmod(fd, 0666);  // past the umask; fails harmlessly on another user's file
  } else if (errno == EACCES) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);  // flock needs no write access: another user's file will do
  }
  if (fd < 0)
    throw IoError("cannot open lock file " + path.string() + ": " + std::strerror(errno) +
                  " (the lock directory's owner can open it to all: chmod 1777 " + lock_dir.string() + ")");
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      const double waited = seconds_since(start);
      return DeviceLock(fd, waited);
    }
    if (errno != EWOULDBLOCK && errno != EINTR) {
      const int error = errno;
      ::close(fd);
      throw IoError("cannot lock " + path.string() + ": " + std::strerror(error));
    }
    if (std::chrono::steady_clock::now() - start >= timeout) {
      ::close(fd);
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

DeviceLock::~DeviceLock() {
  if (m_fd >= 0) ::close(m_fd);  // closing the last descriptor releases the flock
}

DeviceLock::DeviceLock(DeviceLock&& other) noexcept : m_fd(other.m_fd), m_waited_s(other.m_waited_s) {
  other.m_fd = -1;
}

DeviceLock& DeviceLock::operator=(DeviceLock&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = other.m_fd;
    m_waited_s = other.m_waited_s;
    other.m_fd = -1;
  }
  return *this;
}

}  // namespace evoteam::eval
