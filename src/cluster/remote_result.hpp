#pragma once
// A CandidateEvaluator's answers as JSON, so they can cross from a worker to the daemon through result.json.
#include <nlohmann/json.hpp>

#include <evoteam/eval/candidate_evaluator.hpp>

namespace evoteam::cluster {

nlohmann::json result_to_json(const CandidateEvaluator::Result& result);
// Throws InvalidInput naming the field when `value` is not a result this version wrote.
CandidateEvaluator::Result result_from_json(const nlohmann::json& value);

nlohmann::json profile_to_json(const CandidateEvaluator::Profile& profile);
CandidateEvaluator::Profile profile_from_json(const nlohmann::json& value);

// A result that says the infrastructure failed (verdict INFRA_ERROR) with `reason`; nothing was measured.
CandidateEvaluator::Result infra_failure(const std::string& reason);

}  // namespace evoteam::cluster
