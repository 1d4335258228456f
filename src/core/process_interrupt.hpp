#pragma once
// Private to the process runner: the table of live child groups that the SIGINT/SIGTERM handler forwards to.
#include <sys/types.h>

#include <cstdint>

namespace evoteam::detail {

// Counts interrupts since start (never reset). A run snapshots it before spawning and reacts only to
// interrupts that arrive after, so shutdown work started after an interrupt still runs.
std::uint64_t interrupt_generation();

// A running child group made visible to the signal handler for as long as this object lives. Destroy it
// before reaping the group leader, so the handler never signals a recycled pid; after the destructor the
// handler no longer touches `wake_fd`, so it may be closed.
class LiveGroup {
 public:
  // wake_fd: the non-blocking write end of the run's wake pipe; the handler writes one byte to it.
  LiveGroup(pid_t pgid, int wake_fd);
  ~LiveGroup();
  LiveGroup(const LiveGroup&) = delete;
  LiveGroup& operator=(const LiveGroup&) = delete;

  // False when the table was full: the run must then poll interrupt_generation() on a short timer.
  bool registered() const { return m_slot >= 0; }
  // The signal the handler has already sent to this group, 0 if none (it arrived before registration).
  int forwarded_signal() const;

 private:
  int m_slot = -1;
};

}  // namespace evoteam::detail
