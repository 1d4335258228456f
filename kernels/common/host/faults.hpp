#pragma once
// Turning the candidate's crashes and hangs into records: handlers for the fatal signals (on an alternate
// stack, so a stack overflow is reported too) and a per-call watchdog (ITIMER_REAL). Each writes one record
// line with the current trial and phase, then _exits with a code the evaluator recognises.
namespace evoteam_harness {

constexpr int k_exit_fault = 97;
constexpr int k_exit_hang = 98;

void install_fault_handlers();
// What the process is doing now, for the records: phase is "candidate", "baseline", "reference" or "harness".
void set_activity(int trial, const char* phase);
void arm_watchdog(double seconds);
void disarm_watchdog();

}  // namespace evoteam_harness
