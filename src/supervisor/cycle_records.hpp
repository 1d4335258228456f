#pragma once
// What the supervisor loop writes down, in the run directory's contract: a cycle's team.json and summary.json,
// the journal's cycle_start, turn, cycle_end and stop records, the published best/ and run.json's summary.
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include <evoteam/core/process.hpp>
#include <evoteam/history/history.hpp>
#include <evoteam/llm/meter.hpp>
#include <evoteam/store/store.hpp>
#include <evoteam/supervisor/supervisor.hpp>
#include <evoteam/team/team.hpp>

#include "supervisor/run_state.hpp"

namespace evoteam {

// cycles/<cycle>/team.json and the journal's cycle_start record: the team is decided, nothing has run yet.
// `signals` are those the decision read (null when no decision was made); `supervisor_exchange`, when not null,
// becomes cycles/<cycle>/supervisor.json (the LLM policy's prompt, its reply and the rules' decision beside it).
void record_cycle_start(RunDir& run, int cycle, const TeamSpec& team, const std::string& change,
                        const nlohmann::json& signals, const nlohmann::json& supervisor_exchange);

// The members' turns of a cycle, as summary.json and the cycle_end record hold them.
struct TurnsJson {
  nlohmann::json usage = nlohmann::json::object();  // by role
  nlohmann::json turns = nlohmann::json::object();  // by role: summary and hand-off note
};
// Journals one "turn" record per member.
TurnsJson record_turns(RunDir& run, int cycle, const std::map<std::string, TurnOutcome>& turns);

struct CycleEnd {
  int cycle = 0;
  TurnsJson turns;
  double seconds = 0;  // wall time of the cycle
  std::optional<EvaluationRecord> best;
};
// cycles/<cycle>/summary.json and the journal's cycle_end record, which carries what a resume restores
// (elapsed and GPU time, the policy's clear streak).
void record_cycle_end(RunDir& run, const CycleEnd& end, const RunState& state,
                      const std::map<std::string, int>& clear_streak);

// Replaces best/ with the best candidate and a changes.md against the starting kernel (params and a source
// diff run through `runner`).
void publish_best(RunDir& run, const RunHistory& history, ProcessRunner& runner);

// run.json's "summary": cycles, evaluations, the best, and tokens and cost exactly as the providers reported
// them (the meter is restored from the journal on resume).
nlohmann::json summary_json(const RunState& state, int cycles, const MeterTotals& spent);

// The journal's stop record and run.json's final status, stop reason and summary.
void record_stop(RunDir& run, const RunOutcome& outcome, const nlohmann::json& summary);

}  // namespace evoteam
