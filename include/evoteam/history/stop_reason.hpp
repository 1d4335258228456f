#pragma once
// Why a run stopped: a closed set. run.json's "stop_reason", the journal's "stop" record and the --json summary
// hold exactly the strings of to_string(); the loop itself only ever sees the enum.
//
// A run that fails (an error escapes the loop) has no StopReason: its run.json "stop_reason" and its journal
// "stop" record hold the error message instead, written where the failure is caught (supervisor.cpp).
#include <optional>
#include <string>
#include <string_view>

#include <evoteam/core/error.hpp>
#include <evoteam/store/store.hpp>

namespace evoteam {

enum class StopReason {
  max_cycles,      // --max-cycles reached
  target_reached,  // the best verified speedup reached --target-speedup
  roofline,        // the rule policy: the best candidate is at the roofline
  budget_tokens,
  budget_usd,
  budget_hours,
  budget_gpu_seconds,
  budget_evaluations,
  supervisor_stop,    // the LLM supervisor asked to stop
  interrupted,        // SIGINT/SIGTERM (`evoteam stop`)
  search_exhausted,   // cycles in a row spent no evaluation: the team has nothing left to try
  infra_errors,       // the evaluator failed on every evaluation (or many in a row): the run measured nothing
  provider_refused,   // every member's turn of a cycle failed on a permanent provider error (authentication, model)
  model_unreachable,  // every member's turn of a cycle failed to reach its model at all (no connection, no route)
};

std::string to_string(StopReason reason);
// One of the budget_* reasons: a --budget-* limit ended the run (exit code 5).
bool is_budget(StopReason reason);
// The reason a string names, or nullopt for any other text (e.g. a failed run's error message).
std::optional<StopReason> parse_stop_reason(std::string_view text);

// How a run that stopped for a reason ends: its status in run.json and the journal's stop record, and the process's
// exit code. The one rule: the run loop sets it, and `evoteam wait` derives it for runs recorded before the code was.
struct RunEnd {
  RunStatus status = RunStatus::finished;
  ExitCode exit_code = ExitCode::success;
};
// An interrupt stops the run (exit 130, resumable); a run that measured nothing failed (exit 1); a run whose
// provider refused every member, or none could reach its model, failed (exit 6: ExitCode::provider_refused); any other
// reason finishes it: as budget_exhausted (exit 5) when a budget ended it or a target speedup was set (`target_speedup`
// > 0) and not reached, else as a success (the cycles asked for ran, or the search was exhausted).
RunEnd run_end(StopReason reason, double target_speedup);

}  // namespace evoteam
