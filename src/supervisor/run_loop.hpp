#pragma once
// The supervisor loop over an open run directory: cycle after cycle until a stop reason, then the stop is
// journaled and run.json updated. Everything outside the run directory comes through the RunContext.
#include <optional>

#include <evoteam/core/config.hpp>
#include <evoteam/history/stop_reason.hpp>
#include <evoteam/llm/meter.hpp>
#include <evoteam/store/store.hpp>
#include <evoteam/supervisor/supervisor.hpp>

#include "supervisor/run_state.hpp"

namespace evoteam {

// The reason a budget or the target ends the run before `next_cycle` starts, if any. `elapsed_s` is the run's
// wall time across resumes; `spent` the meter's totals.
std::optional<StopReason> budget_stop(const Budgets& budgets, const RunState& state, int next_cycle, double elapsed_s,
                                      const MeterTotals& spent);

// The LLM provider settings of a run: the configuration's, with the run's provider and model (the provider's
// default model when none is given). The key and base URL are the run's provider's, read from `environment`.
ProviderSettings run_provider_settings(const Config& config, const OptimizeOptions& options, const PriceTable& prices,
                                       const std::map<std::string, std::string>& environment);
// Builds the run's provider once and reads the role files, so that an unknown provider, a missing key or an
// unpriced model is invalid input before a run directory exists; a server named by its base URL must answer and
// serve the model. Returns what run.json records of the endpoint ({} for the builtin team): its URL and, when
// the model has no price there, that it is priced at zero.
nlohmann::json check_llm_setup(const Config& config, const OptimizeOptions& options);

// The run's evaluator: the context's factory (tests) or the configured executor on the run's frozen task.
std::unique_ptr<CandidateEvaluator> make_evaluator(const Config& config, const RunDir& run,
                                                   const OptimizeOptions& options, RunContext& context);
// The run's knowledge directory: the shared one it was given, else its own.
std::filesystem::path knowledge_dir_of(const OptimizeOptions& options, const RunDir& run);
// What every entry the run records says about where it comes from.
Provenance run_provenance(const RunDir& run, const Task* task);

// Runs cycles until a stop reason. An error escapes as is (the caller marks the run failed); the meter's
// journal sink, set for the loop, is detached either way.
RunOutcome run_loop(const Config& config, RunDir& run, RunState& state, RunContext& context);

}  // namespace evoteam
