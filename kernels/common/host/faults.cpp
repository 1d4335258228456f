#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "faults.hpp"

#include <signal.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

#include "../record.hpp"
#include "guarded_buffer.hpp"

namespace evoteam_harness {
namespace {

volatile sig_atomic_t g_trial = -1;
const char* volatile g_phase = "harness";
double g_deadline_s = 0;

const char* signal_label(int signal) {
  switch (signal) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    default: return "SIGNAL";
  }
}

void on_fault(int signal, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  bool write_access = false;
#if defined(__x86_64__)
  if (signal == SIGSEGV && context != nullptr)
    write_access = (static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#else
  (void)context;
#endif
  EmergencyLine line;
  line.text("{\"ev\":\"fault\",\"signal\":\"")
      .text(signal_label(signal))
      .text("\",\"code\":")
      .signed_number(info->si_code);
  line.text(",\"trial\":").signed_number(g_trial).text(",\"phase\":\"").text(g_phase).text("\"");
  if (signal == SIGSEGV || signal == SIGBUS) {
    const AddressInfo where = classify_address(address);
    line.text(",\"addr\":").hex(address).text(",\"write\":").text(write_access ? "true" : "false");
    line.text(",\"region\":\"").text(where.region).text("\"");
    if (where.tensor != nullptr)
      line.text(",\"tensor\":\"").text(where.tensor).text("\",\"output\":").text(where.is_output ? "true" : "false");
  }
  line.text("}").write_out();
  _exit(k_exit_fault);
}

void on_alarm(int) {
  EmergencyLine line;
  line.text("{\"ev\":\"hang\",\"trial\":").signed_number(g_trial).text(",\"phase\":\"").text(g_phase);
  line.text("\",\"deadline_ms\":").number(static_cast<std::uint64_t>(g_deadline_s * 1000)).text("}").write_out();
  _exit(k_exit_hang);
}

}  // namespace

void install_fault_handlers() {
  static char alternate_stack[1 << 16];
  stack_t stack{};
  stack.ss_sp = alternate_stack;
  stack.ss_size = sizeof alternate_stack;
  sigaltstack(&stack, nullptr);
  struct sigaction action {};
  action.sa_sigaction = on_fault;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS}) sigaction(signal, &action, nullptr);
  struct sigaction alarm_action {};
  alarm_action.sa_handler = on_alarm;
  alarm_action.sa_flags = SA_ONSTACK;
  sigemptyset(&alarm_action.sa_mask);
  sigaction(SIGALRM, &alarm_action, nullptr);
}

void set_activity(int trial, const char* phase) {
  g_trial = trial;
  g_phase = phase;
}

void arm_watchdog(double seconds) {
  g_deadline_s = seconds;
  itimerval timer{};
  timer.it_value.tv_sec = static_cast<time_t>(seconds);
  timer.it_value.tv_usec = static_cast<suseconds_t>((seconds - static_cast<double>(timer.it_value.tv_sec)) * 1e6);
  if (timer.it_value.tv_sec == 0 && timer.it_value.tv_usec == 0) timer.it_value.tv_usec = 1000;
  setitimer(ITIMER_REAL, &timer, nullptr);
}

void disarm_watchdog() {
  itimerval timer{};
  setitimer(ITIMER_REAL, &timer, nullptr);
}

}  // namespace evoteam_harness
