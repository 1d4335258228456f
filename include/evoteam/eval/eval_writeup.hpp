#pragma once
// The one write-up of an evaluation for agents, whichever team they belong to: verdict and reason, the stages,
// the speedup and per-workload timing when timed, the build log when the build failed, the evidence when a
// check failed, the profile when it ran.
#include <string>

#include <evoteam/eval/evaluator.hpp>

namespace evoteam {

std::string describe_for_agent(const EvalResult& result);

}  // namespace evoteam
