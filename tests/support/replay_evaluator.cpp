#include "support/replay_evaluator.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>

#include <evoteam/core/error.hpp>

namespace evoteam::testing {

namespace {

// A stage "through" which the evaluation stops before the point's failure never sees it.
int replay_stage_rank(const std::string& stage) {
  if (stage == "static") return 0;
  if (stage == "build") return 1;
  if (stage == "correctness" || stage == "reference") return 2;
  return 3;  // timing, profile
}

int replay_stage_rank(Stage stage) {
  switch (stage) {
    case Stage::static_checks: return 0;
    case Stage::build: return 1;
    case Stage::correctness: return 2;
    default: return 3;
  }
}

std::uint64_t replay_mix(std::uint64_t seed, const std::string& key, std::uint64_t salt) {
  std::uint64_t hash = seed ^ 0x9e3779b97f4a7c15ull ^ (salt * 0xbf58476d1ce4e5b9ull);
  for (unsigned char c : key) hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

}  // namespace

Landscape Landscape::load(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw InvalidInput("cannot read the landscape " + file.string());
  nlohmann::json table;
  try {
    table = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& error) {
    throw InvalidInput("the landscape " + file.string() + " is not JSON: " + error.what());
  }
  Landscape landscape;
  landscape.task = table.value("task", "");
  for (const nlohmann::json& param : table.at("params"))
    landscape.space.push_back(ParamSpec{param.at("name").get<std::string>(),
                                        param.at("values").get<std::vector<std::string>>(),
                                        param.at("default").get<std::string>(), ""});
  for (const nlohmann::json& row : table.at("configs")) {
    Point point;
    point.params = row.at("params").get<ParamAssignment>();
    std::optional<Verdict> verdict = parse_verdict(row.at("verdict").get<std::string>());
    if (!verdict) throw InvalidInput("the landscape " + file.string() + " has an unknown verdict");
    point.verdict = *verdict;
    point.signature = row.value("signature", "");
    point.stage = row.value("stage", "");
    if (row.contains("speedup") && row["speedup"].is_number() && counts_as_pass(point.verdict))
      point.speedup = row["speedup"].get<double>();
    std::vector<double> noise;
    const nlohmann::json workloads = row.value("workloads", nlohmann::json::object());  // items() points into it
    for (const auto& [name, workload] : workloads.items())
      if (workload.contains("relstdev") && workload["relstdev"].is_number())
        noise.push_back(workload["relstdev"].get<double>());
    if (!noise.empty()) {
      std::nth_element(noise.begin(), noise.begin() + static_cast<long>(noise.size() / 2), noise.end());
      point.noise = noise[noise.size() / 2];
    }
    landscape.index[describe_params(point.params)] = landscape.points.size();
    landscape.points.push_back(std::move(point));
  }
  if (landscape.points.empty()) throw InvalidInput("the landscape " + file.string() + " holds no configuration");
  return landscape;
}

const Landscape::Point* Landscape::find(const ParamAssignment& params) const {
  auto it = index.find(describe_params(params));
  return it == index.end() ? nullptr : &points[it->second];
}

double Landscape::best_speedup() const {
  double best = 0;
  for (const Point& point : points)
    if (point.speedup) best = std::max(best, *point.speedup);
  return best;
}

ReplayEvaluator::ReplayEvaluator(const Landscape& landscape, const std::filesystem::path& task_dir,
                                 std::optional<std::uint64_t> noise_seed, ReplayCallLog* log)
    : m_landscape(landscape), m_task(load_task(task_dir)), m_noise_seed(noise_seed), m_log(log) {}

CandidateEvaluator::Result ReplayEvaluator::evaluate(const std::filesystem::path&, const ParamAssignment& params,
                                                     Stage through, std::uint64_t seed_salt) {
  Result result;
  const Landscape::Point* point = m_landscape.find(params);
  if (point == nullptr) {
    result.verdict = Verdict::infra_error;
    result.failure_signature = "INFRA_ERROR: " + describe_params(params) + " is not in the landscape";
    result.summary = result.failure_signature;
  } else if (!counts_as_pass(point->verdict) && replay_stage_rank(point->stage) <= replay_stage_rank(through)) {
    result.verdict = point->verdict;
    result.failure_signature = point->signature;
    result.summary = point->signature;
  } else {
    result.verdict = Verdict::pass;
    if (replay_stage_rank(through) >= 3 && point->speedup) {
      double speedup = *point->speedup;
      if (m_noise_seed && point->noise > 0) {
        std::mt19937_64 draw(replay_mix(*m_noise_seed, describe_params(params), seed_salt));
        speedup *= std::exp(std::normal_distribution<double>(0.0, point->noise)(draw));
      }
      result.speedup = speedup;
    }
    result.summary = "replayed from the landscape of " + m_landscape.task;
  }
  result.eval_json = {{"verdict", to_string(result.verdict)}, {"replayed", true}};
  if (m_log != nullptr) m_log->add(ReplayCallLog::Call{params, result.verdict, result.speedup});
  return result;
}

CandidateEvaluator::Profile ReplayEvaluator::profile(const std::filesystem::path&, const ParamAssignment&) {
  return {"unknown", "replayed: no profile", nlohmann::json::object(), 0.0};
}

void ReplayCallLog::add(Call call) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_calls.push_back(std::move(call));
}

std::vector<ReplayCallLog::Call> ReplayCallLog::calls() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_calls;
}

}  // namespace evoteam::testing
