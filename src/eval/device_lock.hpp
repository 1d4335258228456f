#pragma once
// Exclusive use of a device for timing: an flock on <lock_dir>/evoteam-<device>.lock, which other evoteam
// processes (and other threads, each with its own open file description) respect.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

namespace evoteam::eval {

class DeviceLock {
 public:
  // Waits up to `timeout`; nullopt when the lock could not be had in time. Throws IoError when the lock file
  // cannot be created.
  static std::optional<DeviceLock> acquire(const std::filesystem::path& lock_dir, const std::string& device,
                                           std::chrono::milliseconds timeout);
  ~DeviceLock();
  DeviceLock(DeviceLock&& other) noexcept;
  DeviceLock& operator=(DeviceLock&& other) noexcept;
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;

  double waited_s() const { return m_waited_s; }

 private:
  DeviceLock(int fd, double waited_s) : m_fd(fd), m_waited_s(waited_s) {}
  int m_fd = -1;
  double m_waited_s = 0;
};

}  // namespace evoteam::eval
