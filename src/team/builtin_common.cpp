#include "team/builtin_common.hpp"
#include "team/builtin_coverage.hpp"
#include "team/builtin_surrogate.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <unordered_set>

namespace evoteam::builtin {

namespace {

// The search's settings. The score is in log-speedup units: 0.05 is about 5% of speedup.
constexpr double k_uncertainty_weight = 2.0;     // optimism: mean + 2 sd
constexpr double k_pair_bonus = 0.3;             // for the most untried value pairs a candidate would measure
constexpr double k_change_preference = 0.05;     // a single change wins unless a jump scores 5% better
constexpr double k_ridge = 0.3;                  // regularisation of the additive fit of param effects
constexpr std::size_t k_candidate_limit = 4096;  // larger spaces are sampled rather than enumerated

ParamValues decode_point(const std::vector<ParamSpec>& space, const std::vector<int>& point) {
  ParamValues params;
  for (std::size_t p = 0; p < space.size(); ++p)
    params[space[p].name] = space[p].values[static_cast<std::size_t>(point[p])];
  return params;
}

bool complete(const std::vector<int>& point) {
  return std::all_of(point.begin(), point.end(), [](int value) { return value >= 0; });
}

std::string point_key(const std::vector<int>& point) {
  std::string key;
  for (int value : point) key += std::to_string(value) + ",";
  return key;
}

int distance(const std::vector<int>& a, const std::vector<int>& b) {
  int count = 0;
  for (std::size_t p = 0; p < a.size(); ++p) count += a[p] != b[p] ? 1 : 0;
  return count;
}

std::uint64_t pair_key(std::size_t p, int a, std::size_t q, int b) {
  return (static_cast<std::uint64_t>(p) << 48) | (static_cast<std::uint64_t>(a) << 32) |
         (static_cast<std::uint64_t>(q) << 16) | static_cast<std::uint64_t>(b);
}

// Admissible points not attempted yet: the whole space when it is small, else a sample of it plus every
// single change from the head (so climbing never depends on the sample).
std::vector<std::vector<int>> candidate_points(const SearchRequest& request, const std::vector<int>& head,
                                               const std::unordered_set<std::string>& tried, std::mt19937_64& rng) {
  const std::vector<ParamSpec>& space = request.space;
  std::vector<std::vector<int>> result;
  std::unordered_set<std::string> listed;
  auto consider = [&](const std::vector<int>& point) {
    std::string key = point_key(point);
    if (tried.count(key) || !listed.insert(key).second) return;
    if (request.admissible && !request.admissible(decode_point(space, point))) return;
    result.push_back(point);
  };
  double size = 1;
  for (const ParamSpec& spec : space) size *= static_cast<double>(spec.values.size());
  if (size <= static_cast<double>(k_candidate_limit)) {
    std::vector<int> point(space.size(), 0);
    while (true) {
      consider(point);
      std::size_t p = space.size();
      while (p > 0 && ++point[p - 1] == static_cast<int>(space[p - 1].values.size())) point[--p] = 0;
      if (p == 0) break;
    }
    return result;
  }
  if (complete(head))
    for (std::size_t p = 0; p < space.size(); ++p)
      for (int value = 0; value < static_cast<int>(space[p].values.size()); ++value) {
        if (value == head[p]) continue;
        std::vector<int> point = head;
        point[p] = value;
        consider(point);
      }
  for (std::size_t draw = 0; draw < k_candidate_limit; ++draw) {
    std::vector<int> point(space.size());
    for (std::size_t p = 0; p < space.size(); ++p)
      point[p] = std::uniform_int_distribution<int>(0, static_cast<int>(space[p].values.size()) - 1)(rng);
    consider(point);
  }
  return result;
}

std::string percent(double log_sd) { return fixed(100.0 * (std::exp(log_sd) - 1.0), 0) + "%"; }

}  // namespace

Move make_move(const ParamValues& from, const ParamValues& to) {
  Move move{to, {}, ""};
  for (const auto& [name, value] : to) {
    auto it = from.find(name);
    std::string before = it == from.end() ? "?" : it->second;
    if (before == value) continue;
    move.changed.push_back(name);
    move.description += (move.description.empty() ? "" : ", ") + name + " " + before + "→" + value;
  }
  return move;
}

ProfilerAdvice current_advice(const TurnContext& context) {
  auto field_of = [](const std::string& text, const std::string& name) {
    std::size_t at = text.rfind(name + "=");
    if (at == std::string::npos) return std::string();
    std::string value = text.substr(at + name.size() + 1);
    return value.substr(0, value.find_first_of(" ;\n"));
  };
  std::string focus = field_of(context.handoff_note, "focus");
  std::string relevance = field_of(context.handoff_note, "relevance");
  if (focus.empty() && context.team->knowledge != KnowledgeMode::none) {
    std::vector<KnowledgeEntry> notes = context.knowledge->entries_for_task(KnowledgeKind::hardware);
    for (auto it = notes.rbegin(); it != notes.rend() && focus.empty(); ++it)
      if (auto found = it->fields.find("focus"); found != it->fields.end()) {
        focus = found->second;
        auto weights = it->fields.find("relevance");
        relevance = weights == it->fields.end() ? "" : weights->second;
      }
  }
  ProfilerAdvice advice;
  std::stringstream names(focus);
  for (std::string name; std::getline(names, name, ',');)
    if (!name.empty()) advice.focus.push_back(name);
  std::stringstream weights(relevance);
  for (std::string item; std::getline(weights, item, ',');) {
    std::size_t colon = item.find(':');
    if (colon == std::string::npos) continue;
    try {
      advice.relevance[item.substr(0, colon)] = std::stod(item.substr(colon + 1));
    } catch (const std::exception&) {
      // A malformed weight is ignored: the search then weighs that param like the unmeasured ones.
    }
  }
  return advice;
}

std::vector<std::string> current_focus(const TurnContext& context) { return current_advice(context).focus; }

std::optional<EvaluationRecord> lineage_head(const TurnContext& context) {
  RunHistory history = context.lab->snapshot();
  if (std::optional<EvaluationRecord> best = history.best()) return best;
  if (!history.evaluations.empty()) return history.evaluations.front();
  return std::nullopt;
}

std::vector<Measurement> measurements_of(const RunHistory& history, const std::string& sources_hash) {
  std::vector<Measurement> measured;
  for (const EvaluationRecord& record : history.evaluations) {
    if (record.blocked() || record.sources_hash != sources_hash) continue;
    Measurement point{record.params, Measurement::Outcome::failed, 0, ""};
    // A candidate rejected for bundling changes was still measured; one rejected on re-verification was not sound.
    bool sound = !record.rejected || record.ruled(RulingKind::several_changes);
    if (record.state == RecordState::pending || record.has(Verdict::infra_error)) {
      point.outcome = Measurement::Outcome::pending;
    } else if (record.passed() && *record.speedup > 0 && sound) {
      point.outcome = Measurement::Outcome::passed;
      point.speedup = *record.speedup;
    } else if (record.failed()) {
      point.failure = record.failure_signature.substr(0, record.failure_signature.find(':'));
    }
    measured.push_back(point);
  }
  return measured;
}

std::string InvalidRegion::describe() const {
  std::string text;
  for (const auto& [name, value] : terms) text += (text.empty() ? "" : ",") + name + "=" + value;
  return text;
}

std::vector<InvalidRegion> learned_invalid_regions(const std::vector<ParamSpec>& space,
                                                   const std::vector<Measurement>& measured) {
  // Regions as sorted term lists "p=v" (one or two terms), counted over the failures of each kind.
  using Terms = std::vector<std::pair<std::string, std::string>>;
  auto regions_of = [&space](const ParamValues& params) {
    std::vector<Terms> regions;
    std::vector<std::pair<std::string, std::string>> terms;
    for (const ParamSpec& spec : space)
      if (auto it = params.find(spec.name); it != params.end()) terms.emplace_back(spec.name, it->second);
    for (std::size_t a = 0; a < terms.size(); ++a) {
      regions.push_back({terms[a]});
      for (std::size_t b = a + 1; b < terms.size(); ++b) regions.push_back({terms[a], terms[b]});
    }
    return regions;
  };
  std::set<Terms> with_a_pass;
  std::map<std::pair<std::string, Terms>, std::vector<std::size_t>> failures;  // (failure, region) -> which points
  // (failure, one-term region) -> for each other param, how many of its failures had each value there
  std::map<std::pair<std::string, Terms>, std::map<std::string, std::map<std::string, int>>> others_in_single;
  for (std::size_t index = 0; index < measured.size(); ++index) {
    const Measurement& point = measured[index];
    if (point.outcome == Measurement::Outcome::passed)
      for (Terms& region : regions_of(point.params)) with_a_pass.insert(std::move(region));
    else if (point.outcome == Measurement::Outcome::failed && !point.failure.empty())
      for (Terms& region : regions_of(point.params)) {
        if (region.size() == 1)
          for (const auto& [name, value] : point.params)
            if (name != region[0].first) ++others_in_single[{point.failure, region}][name][value];
        failures[{point.failure, std::move(region)}].push_back(index);
      }
  }
  // A value whose failures all, or all but one, shared one value of another param is explained by that pair
  // (NR=32 failing beside NC=48, where 48 is no multiple of 32, and once beside MC=16 with MR=6, which fails with
  // any NR): the pair is learned, not the wider claim that would wall off NR=32 beside every NC.
  auto explained_by_a_pair = [&](const std::pair<std::string, Terms>& key, int count) {
    for (const auto& [name, values] : others_in_single[key])
      for (const auto& [value, sharing] : values)
        if (sharing >= count - 1) return true;
    return false;
  };
  // Pairs that hold exactly the same failures are rival explanations of them (three failures sharing NC=48, MR=4
  // and PACK_B=0 beside NR=32): none is learned until a failure elsewhere tells them apart.
  std::map<std::pair<std::string, std::vector<std::size_t>>, int> pairs_holding;
  for (const auto& [key, points] : failures)
    if (key.second.size() == 2) ++pairs_holding[{key.first, points}];
  std::vector<InvalidRegion> learned;
  std::set<Terms> single_terms;
  for (int size : {1, 2})
    for (const auto& [key, points] : failures) {
      const Terms& region = key.second;
      const int count = static_cast<int>(points.size());
      if (static_cast<int>(region.size()) != size || count < (size == 1 ? 4 : 3) || with_a_pass.count(region)) continue;
      if (size == 1 && explained_by_a_pair(key, count)) continue;
      if (size == 2 && pairs_holding[{key.first, points}] > 1) continue;
      // A pair inside a learned single value says nothing more.
      if (size == 2 && (single_terms.count({region[0]}) || single_terms.count({region[1]}))) continue;
      if (size == 1) single_terms.insert(region);
      InvalidRegion found;
      for (const auto& [name, value] : region) found.terms[name] = value;
      found.failure = key.first;
      found.failures = count;
      learned.push_back(std::move(found));
    }
  return learned;
}

const InvalidRegion* region_holding(const std::vector<InvalidRegion>& regions, const ParamValues& params) {
  for (const InvalidRegion& region : regions) {
    bool holds = true;
    for (const auto& [name, value] : region.terms)
      if (auto it = params.find(name); it == params.end() || it->second != value) holds = false;
    if (holds) return &region;
  }
  return nullptr;
}

std::map<std::string, double> param_effects(const std::vector<ParamSpec>& space,
                                            const std::vector<Measurement>& measured) {
  std::vector<std::size_t> offset;
  std::size_t width = 0;
  for (const ParamSpec& spec : space) offset.push_back(width), width += spec.values.size();
  std::vector<std::vector<int>> points;
  std::vector<double> ys;
  for (const Measurement& point : measured) {
    if (point.outcome != Measurement::Outcome::passed) continue;
    std::vector<int> encoded = encode_point(space, point.params);
    if (!complete(encoded)) continue;
    points.push_back(encoded);
    ys.push_back(std::log(point.speedup));
  }
  std::map<std::string, double> effects;
  if (points.size() < 2 || width == 0) return effects;
  double mean = 0;
  for (double y : ys) mean += y / static_cast<double>(ys.size());
  // Ridge regression on one-hot values: (X'X + ridge I) w = X'(y - mean).
  std::vector<double> normal(width * width, 0.0), rhs(width, 0.0);
  for (std::size_t i = 0; i < points.size(); ++i)
    for (std::size_t p = 0; p < space.size(); ++p) {
      std::size_t a = offset[p] + static_cast<std::size_t>(points[i][p]);
      rhs[a] += ys[i] - mean;
      for (std::size_t q = 0; q < space.size(); ++q)
        normal[a * width + offset[q] + static_cast<std::size_t>(points[i][q])] += 1.0;
    }
  for (std::size_t a = 0; a < width; ++a) normal[a * width + a] += k_ridge;
  cholesky(normal, width);
  std::vector<double> weights = solve_upper_transposed(normal, width, solve_lower(normal, width, rhs));
  for (std::size_t p = 0; p < space.size(); ++p) {
    std::set<int> values;
    for (const std::vector<int>& point : points) values.insert(point[p]);
    if (values.size() < 2) continue;
    double low = 1e300, high = -1e300;
    for (int value : values) {
      double weight = weights[offset[p] + static_cast<std::size_t>(value)];
      low = std::min(low, weight), high = std::max(high, weight);
    }
    effects[space[p].name] = high - low;
  }
  return effects;
}

std::map<std::string, double> relevance_of(const std::vector<ParamSpec>& space,
                                           const std::map<std::string, double>& effects) {
  std::map<std::string, double> relevance;
  double strongest = 0;
  for (const auto& [name, effect] : effects) strongest = std::max(strongest, effect);
  if (effects.empty()) return relevance;
  for (const ParamSpec& spec : space) {
    auto it = effects.find(spec.name);
    relevance[spec.name] = it == effects.end() ? 1.0 : 0.5 + (strongest > 0 ? it->second / strongest : 0.0);
  }
  return relevance;
}

std::optional<Proposal> propose_next(const SearchRequest& request, std::mt19937_64& rng) {
  const std::vector<ParamSpec>& space = request.space;
  if (space.empty()) return std::nullopt;
  std::unordered_set<std::string> tried;
  std::unordered_set<std::uint64_t> seen_pairs;
  for (const Measurement& point : request.measured) {
    std::vector<int> encoded = encode_point(space, point.params);
    tried.insert(point_key(encoded));
    for (std::size_t p = 0; p < space.size(); ++p) {
      if (encoded[p] < 0) continue;
      for (std::size_t q = p + 1; q < space.size(); ++q)
        if (encoded[q] >= 0) seen_pairs.insert(pair_key(p, encoded[p], q, encoded[q]));
    }
  }
  const ValueCoverage coverage(space, request.measured, learned_invalid_regions(space, request.measured));
  const std::vector<int> head = encode_point(space, request.head);
  std::vector<std::vector<int>> candidates = candidate_points(request, head, tried, rng);
  if (candidates.empty()) return std::nullopt;
  std::shuffle(candidates.begin(), candidates.end(), rng);  // ties go to a random one

  Surrogate model(space, request.measured);
  std::vector<double> optimism(candidates.size(), 0.0);
  std::vector<Surrogate::Prediction> predicted(candidates.size());
  for (std::size_t c = 0; c < candidates.size() && model.usable(); ++c) {
    predicted[c] = model.predict(decode_point(space, candidates[c]));
    optimism[c] = predicted[c].mean + k_uncertainty_weight * predicted[c].sd;
  }
  auto forecast = [&](std::size_t c) {
    if (!model.usable()) return std::string();
    return "; model predicts " + fixed(std::exp(predicted[c].mean), 2) + "x ±" + percent(predicted[c].sd) +
           (request.head_speedup ? " (head " + fixed(*request.head_speedup, 2) + "x)" : "");
  };

  // First measure every declared value once: the model knows nothing of a value it has never seen.
  auto cover = [&](std::size_t pick, const std::string& how) {
    std::string values;
    for (std::size_t p = 0; p < space.size(); ++p)
      if (!coverage.covered(p, candidates[pick][p]))
        values += (values.empty() ? "" : ", ") + space[p].name + "=" +
                  space[p].values[static_cast<std::size_t>(candidates[pick][p])];
    return Proposal{decode_point(space, candidates[pick]), ProposalKind::cover,
                    "explore: measure " + values + how + forecast(pick)};
  };
  std::vector<int> unseen(candidates.size(), 0);
  std::vector<int> uncovered(candidates.size(), 0);
  for (std::size_t c = 0; c < candidates.size(); ++c)
    for (std::size_t p = 0; p < space.size(); ++p) {
      unseen[c] += coverage.never_measured(p, candidates[c][p]) ? 1 : 0;
      uncovered[c] += coverage.covered(p, candidates[c][p]) ? 0 : 1;
    }
  const int most_unseen = *std::max_element(unseen.begin(), unseen.end());
  if (most_unseen > 0) {
    std::size_t pick = candidates.size();
    for (std::size_t c = 0; c < candidates.size(); ++c)
      if (unseen[c] == most_unseen && (pick == candidates.size() || optimism[c] > optimism[pick])) pick = c;
    return cover(pick, " for the first time");
  }
  // Then each value that so far only failed, again: where its failures least suggest another failure, and of those
  // the closest to the head (one change from a passing point blames a failure on the value or its pairing).
  const bool has_head = complete(head);
  std::vector<double> risk(candidates.size(), 0.0);
  for (std::size_t c = 0; c < candidates.size(); ++c) risk[c] = coverage.retry_risk(candidates[c]);
  std::size_t retry = candidates.size();
  auto better_retry = [&](std::size_t c, std::size_t than) {
    const int a = has_head ? distance(candidates[c], head) : 0;
    const int b = has_head ? distance(candidates[than], head) : 0;
    if (risk[c] != risk[than]) return risk[c] < risk[than];
    if (a != b) return a < b;
    return optimism[c] > optimism[than];
  };
  for (std::size_t c = 0; c < candidates.size(); ++c)
    if (uncovered[c] > 0 && (retry == candidates.size() || better_retry(c, retry))) retry = c;
  if (retry != candidates.size()) return cover(retry, " again, away from where it failed");
  // On a stagnation directive, what the search wrote off is questioned first: a value given up after failures that
  // never passed is measured once more where its failures least suggest another (NR=32 given up beside partners
  // that failed for their own reasons may be the best lineage's).
  if (request.mode == SearchMode::new_lineage) {
    std::size_t reopen = candidates.size();
    std::vector<std::string> reopened(candidates.size());
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      for (std::size_t p = 0; p < space.size(); ++p)
        if (coverage.reopenable(p, candidates[c][p]))
          reopened[c] += (reopened[c].empty() ? "" : ", ") + space[p].name + "=" +
                         space[p].values[static_cast<std::size_t>(candidates[c][p])];
      if (reopened[c].empty()) continue;
      risk[c] = coverage.retry_risk(candidates[c], true);
      if (reopen == candidates.size() || better_retry(c, reopen)) reopen = c;
    }
    if (reopen != candidates.size())
      return Proposal{decode_point(space, candidates[reopen]), ProposalKind::jump,
                      "stagnation: reopen " + reopened[reopen] +
                          ", given up after failures, where they least suggest another" + forecast(reopen)};
  }

  // Then the model's choice: optimism plus a bonus for value pairs never measured together (interactions the
  // additive view cannot see), pairs of relevant params counting more.
  auto relevance = [&](std::size_t p) {
    auto it = request.relevance.find(space[p].name);
    return it == request.relevance.end() ? 1.0 : it->second;
  };
  std::vector<double> novelty(candidates.size(), 0.0);
  std::vector<int> new_pairs(candidates.size(), 0);
  for (std::size_t c = 0; c < candidates.size(); ++c)
    for (std::size_t p = 0; p < space.size(); ++p)
      for (std::size_t q = p + 1; q < space.size(); ++q)
        if (!seen_pairs.count(pair_key(p, candidates[c][p], q, candidates[c][q])))
          novelty[c] += relevance(p) * relevance(q), ++new_pairs[c];
  const double most_novel = *std::max_element(novelty.begin(), novelty.end());
  std::vector<double> score(candidates.size());
  for (std::size_t c = 0; c < candidates.size(); ++c)
    score[c] = optimism[c] + (most_novel > 0 ? k_pair_bonus * novelty[c] / most_novel : 0.0);

  auto best_where = [&](auto&& accept) {
    std::size_t pick = candidates.size();
    for (std::size_t c = 0; c < candidates.size(); ++c)
      if (accept(c) && (pick == candidates.size() || score[c] > score[pick])) pick = c;
    return pick;
  };
  std::size_t pick = candidates.size();
  if (request.mode == SearchMode::new_lineage && has_head)
    pick = best_where([&](std::size_t c) { return distance(candidates[c], head) >= 2; });
  if (pick == candidates.size()) {
    pick = best_where([](std::size_t) { return true; });
    std::size_t change =
        has_head ? best_where([&](std::size_t c) { return distance(candidates[c], head) == 1; }) : candidates.size();
    if (change != candidates.size() && score[change] >= score[pick] - k_change_preference) pick = change;
  }
  ParamValues params = decode_point(space, candidates[pick]);
  if (has_head && distance(candidates[pick], head) == 1)
    return Proposal{params, ProposalKind::change,
                    "change " + make_move(request.head, params).description + forecast(pick)};
  return Proposal{params, ProposalKind::jump,
                  "jump to a new lineage: the model's best-ranked unexplored point, measuring " +
                      std::to_string(new_pairs[pick]) + " untried value pair(s)" + forecast(pick)};
}

}  // namespace evoteam::builtin
