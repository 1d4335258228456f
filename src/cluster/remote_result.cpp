#include "cluster/remote_result.hpp"

#include <evoteam/core/error.hpp>

namespace evoteam::cluster {

namespace {

template <typename T>
T field(const nlohmann::json& value, const char* key) {
  if (!value.is_object() || !value.contains(key))
    throw InvalidInput(std::string("worker result: no '") + key + "' in " + value.dump().substr(0, 200));
  try {
    return value.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw InvalidInput(std::string("worker result: '") + key + "' has the wrong type in " +
                       value.dump().substr(0, 200));
  }
}

template <typename T>
std::optional<T> optional_field(const nlohmann::json& value, const char* key) {
  if (!value.contains(key) || value.at(key).is_null()) return std::nullopt;
  return field<T>(value, key);
}

}  // namespace

nlohmann::json result_to_json(const CandidateEvaluator::Result& result) {
  nlohmann::json value = {{"verdict", to_string(result.verdict)},
                          {"speedup", nullptr},
                          {"roofline", nullptr},
                          {"failure_signature", result.failure_signature},
                          {"summary", result.summary},
                          {"eval_json", result.eval_json},
                          {"build_log", result.build_log},
                          {"device_s", result.device_s},
                          {"adopted_constraints", nullptr}};
  if (result.speedup) value["speedup"] = *result.speedup;
  if (result.roofline) value["roofline"] = *result.roofline;
  if (result.adopted_constraints) value["adopted_constraints"] = *result.adopted_constraints;
  return value;
}

CandidateEvaluator::Result result_from_json(const nlohmann::json& value) {
  CandidateEvaluator::Result result;
  const std::string verdict = field<std::string>(value, "verdict");
  const std::optional<Verdict> parsed = parse_verdict(verdict);
  if (!parsed) throw InvalidInput("worker result: unknown verdict '" + verdict + "'");
  result.verdict = *parsed;
  result.speedup = optional_field<double>(value, "speedup");
  result.roofline = optional_field<double>(value, "roofline");
  result.failure_signature = field<std::string>(value, "failure_signature");
  result.summary = field<std::string>(value, "summary");
  result.eval_json = value.value("eval_json", nlohmann::json());
  result.build_log = field<std::string>(value, "build_log");
  result.device_s = field<double>(value, "device_s");
  result.adopted_constraints = optional_field<std::vector<std::string>>(value, "adopted_constraints");
  return result;
}

nlohmann::json profile_to_json(const CandidateEvaluator::Profile& profile) {
  return {{"bound", profile.bound},
          {"summary", profile.summary},
          {"metrics", profile.metrics},
          {"device_s", profile.device_s},
          {"device", profile.device}};
}

CandidateEvaluator::Profile profile_from_json(const nlohmann::json& value) {
  CandidateEvaluator::Profile profile;
  profile.bound = field<std::string>(value, "bound");
  profile.summary = field<std::string>(value, "summary");
  profile.metrics = value.value("metrics", nlohmann::json());
  profile.device_s = field<double>(value, "device_s");
  profile.device = value.value("device", std::string());
  return profile;
}

CandidateEvaluator::Result infra_failure(const std::string& reason) {
  CandidateEvaluator::Result result;
  result.verdict = Verdict::infra_error;
  result.failure_signature = to_string(Verdict::infra_error) + ": " + reason.substr(0, 160);
  result.summary = "INFRA_ERROR: " + reason;
  return result;
}

}  // namespace evoteam::cluster
