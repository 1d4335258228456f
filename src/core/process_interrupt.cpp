// SIGINT/SIGTERM forwarding to running child groups.
//
// The handler may only touch lock-free atomics and make async-signal-safe calls (kill, write), so the live
// groups sit in a fixed array of atomic slots rather than a container behind a mutex. Each slot also holds
// the write end of its run's wake pipe: a run that polls its child's pipes wakes at once, even when the child
// ignores the forwarded signal, and then escalates to SIGKILL on its own clock.
#include "core/process_interrupt.hpp"

#include <evoteam/core/process.hpp>

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <mutex>

namespace evoteam {
namespace {

constexpr int k_max_live_groups = 256;

struct Slot {
  std::atomic<int> claimed{0};
  std::atomic<pid_t> pgid{0};
  std::atomic<int> wake_fd{-1};
  std::atomic<int> forwarded{0};  // the last signal the handler sent to this group
};

std::array<Slot, k_max_live_groups> g_slots;
std::atomic<int> g_signal{0};
std::atomic<std::uint64_t> g_generation{0};
// Handlers executing right now (on any thread). Unregistering waits for zero before a wake fd may close.
std::atomic<int> g_handlers_running{0};

// pid_t is int on Linux; it is named anyway because the handler stores one.
// NOLINTBEGIN(misc-redundant-expression)
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<pid_t>::is_always_lock_free &&
                  std::atomic<std::uint64_t>::is_always_lock_free,
              "the signal handler needs lock-free atomics");
// NOLINTEND(misc-redundant-expression)

void forward_interrupt(int sig) {
  const int saved_errno = errno;
  g_handlers_running.fetch_add(1);
  // The flag and generation change before any group is signalled, so a run that sees its child die from
  // the forwarded signal also sees why.
  g_signal.store(sig);
  g_generation.fetch_add(1);
  for (Slot& slot : g_slots) {
    if (slot.claimed.load() == 0) continue;
    const pid_t pgid = slot.pgid.load();
    if (pgid > 0) {
      slot.forwarded.store(sig);  // before kill: the child may react (and wake its run) at once
      ::kill(-pgid, sig);
    }
    const int fd = slot.wake_fd.load();
    if (fd >= 0) {
      const char byte = 'i';
      [[maybe_unused]] const ssize_t ignored = ::write(fd, &byte, 1);  // full pipe: already awake
    }
  }
  g_handlers_running.fetch_sub(1);
  errno = saved_errno;
}

std::mutex g_install_mutex;
bool g_installed = false;
struct sigaction g_previous_int {};
struct sigaction g_previous_term {};

}  // namespace

namespace detail {

std::uint64_t interrupt_generation() { return g_generation.load(); }

LiveGroup::LiveGroup(pid_t pgid, int wake_fd) {
  for (int i = 0; i < k_max_live_groups; ++i) {
    int expected = 0;
    if (g_slots[i].claimed.compare_exchange_strong(expected, 1)) {
      g_slots[i].forwarded.store(0);
      g_slots[i].wake_fd.store(wake_fd);
      g_slots[i].pgid.store(pgid);
      m_slot = i;
      return;
    }
  }
}

int LiveGroup::forwarded_signal() const {
  if (m_slot < 0) return 0;
  // A handler still walking the table may not have reached this slot yet; it never blocks, so wait.
  while (g_handlers_running.load() != 0) sched_yield();
  return g_slots[m_slot].forwarded.load();
}

LiveGroup::~LiveGroup() {
  if (m_slot < 0) return;
  Slot& slot = g_slots[m_slot];
  slot.pgid.store(0);
  slot.wake_fd.store(-1);
  // A handler that loaded the old values before we cleared them may still be using them; it never blocks,
  // so this wait is short. If the handler runs on this very thread it completes before we get here.
  while (g_handlers_running.load() != 0) sched_yield();
  slot.claimed.store(0);
}

}  // namespace detail

void install_interrupt_forwarding() {
  std::lock_guard lock(g_install_mutex);
  if (g_installed) return;
  struct sigaction action {};
  action.sa_handler = forward_interrupt;
  sigfillset(&action.sa_mask);  // one handler at a time per thread; the counter covers other threads
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &action, &g_previous_int);
  ::sigaction(SIGTERM, &action, &g_previous_term);
  g_installed = true;
}

void uninstall_interrupt_forwarding() {
  std::lock_guard lock(g_install_mutex);
  if (!g_installed) return;
  ::sigaction(SIGINT, &g_previous_int, nullptr);
  ::sigaction(SIGTERM, &g_previous_term, nullptr);
  g_installed = false;
}

bool interrupted() { return g_signal.load() != 0; }

int interrupt_signal() { return g_signal.load(); }

void reset_interrupted_for_tests() { g_signal.store(0); }

}  // namespace evoteam
