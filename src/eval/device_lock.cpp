#include "eval/device_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
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
  evoteam::create_directories(lock_dir);
  std::string name = device;
  for (char& c : name)
    if (c == '/' || c == ':' || c == ' ') c = '_';
  const std::filesystem::path path = lock_dir / ("evoteam-" + name + ".lock");
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) throw IoError("cannot open lock file " + path.string() + ": " + std::strerror(errno));
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
