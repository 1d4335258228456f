// The builtin team's model-guided search over declared params: on synthetic landscapes it finds the best within
// a small fraction of the space, never proposes a point twice nor an invalid one, steers away from failing
// regions, and the Optimizer does the same through the lab (roots without a parent, changes of one param).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include <evoteam/core/fs.hpp>
#include <evoteam/store/store.hpp>
#include <evoteam/task/task.hpp>
#include <evoteam/team/lab.hpp>
#include <evoteam/team/team.hpp>

#include "support/temp_dir.hpp"
#include "team/builtin_common.hpp"

namespace evoteam {
namespace {

using builtin::Measurement;
using builtin::Proposal;
using builtin::ProposalKind;
using builtin::SearchMode;
using builtin::SearchRequest;

std::vector<ParamSpec> synthetic_space() {
  return {{"A", {"1", "2", "4", "8"}, "1", "tile"},
          {"B", {"1", "2", "4", "8"}, "1", "unroll"},
          {"C", {"0", "1", "2"}, "0", "mode"},
          {"D", {"0", "1", "2"}, "0", "order"}};
}

// A separable landscape: the speedup is a product of one factor per param; D barely matters.
double separable_speedup(const ParamValues& params) {
  static const std::map<std::string, std::map<std::string, double>> factors = {
      {"A", {{"1", 1.0}, {"2", 1.6}, {"4", 2.2}, {"8", 1.9}}},
      {"B", {{"1", 1.0}, {"2", 1.3}, {"4", 1.5}, {"8", 1.2}}},
      {"C", {{"0", 1.0}, {"1", 0.8}, {"2", 1.1}}},
      {"D", {{"0", 1.0}, {"1", 1.02}, {"2", 0.99}}}};
  double speedup = 1.0;
  for (const auto& [name, value] : params) speedup *= factors.at(name).at(value);
  return speedup;
}

// The declared constraint of the synthetic task: A * B <= 32 (A=8 with B=8 is invalid).
bool valid_point(const ParamValues& params) { return std::stoi(params.at("A")) * std::stoi(params.at("B")) <= 32; }

double best_valid_speedup() {
  double best = 0;
  for (const char* a : {"1", "2", "4", "8"})
    for (const char* b : {"1", "2", "4", "8"})
      for (const char* c : {"0", "1", "2"})
        for (const char* d : {"0", "1", "2"}) {
          ParamValues point{{"A", a}, {"B", b}, {"C", c}, {"D", d}};
          if (valid_point(point)) best = std::max(best, separable_speedup(point));
        }
  return best;
}

const ParamValues k_start{{"A", "1"}, {"B", "1"}, {"C", "0"}, {"D", "0"}};

// Runs the search from the starting point for `evaluations` evaluations of `speedup_of` (nullopt: fails).
struct SearchRun {
  std::vector<Measurement> measured;
  std::vector<Proposal> proposals;
  double best = 0;
  int evaluations_to_best = 0;
};

SearchRun run_search(int evaluations, std::uint64_t seed,
                     const std::function<std::optional<double>(const ParamValues&)>& speedup_of) {
  SearchRun run;
  run.measured.push_back({k_start, Measurement::Outcome::passed, *speedup_of(k_start)});
  run.best = run.measured.back().speedup;
  run.evaluations_to_best = 1;
  std::mt19937_64 rng(seed);
  ParamValues head = k_start;
  while (static_cast<int>(run.measured.size()) < evaluations) {
    SearchRequest request{synthetic_space(), run.measured, head, run.best, valid_point, {}, SearchMode::climb};
    std::optional<Proposal> proposal = builtin::propose_next(request, rng);
    if (!proposal) break;
    run.proposals.push_back(*proposal);
    std::optional<double> speedup = speedup_of(proposal->params);
    run.measured.push_back(
        {proposal->params, speedup ? Measurement::Outcome::passed : Measurement::Outcome::failed, speedup.value_or(0)});
    if (speedup && *speedup > run.best) {
      run.best = *speedup;
      head = proposal->params;
      run.evaluations_to_best = static_cast<int>(run.measured.size());
    }
  }
  return run;
}

TEST(BuiltinSearch, FindsTheBestOfASeparableLandscapeWithinASmallFractionOfTheSpace) {
  const double best = best_valid_speedup();
  // 135 valid points; the search must reach the best within 20 evaluations (15% of the space) for every seed.
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    SearchRun run = run_search(20, seed, [](const ParamValues& params) { return separable_speedup(params); });
    EXPECT_DOUBLE_EQ(run.best, best) << "seed " << seed;
    EXPECT_LE(run.evaluations_to_best, 20) << "seed " << seed;
  }
}

TEST(BuiltinSearch, NeverProposesAMeasuredOrAnInvalidPoint) {
  // Run until the space is exhausted: every valid point exactly once, then no proposal.
  SearchRun run = run_search(1000, 3, [](const ParamValues& params) { return separable_speedup(params); });
  std::set<std::string> seen;
  for (const Measurement& point : run.measured) {
    EXPECT_TRUE(valid_point(point.params)) << describe_params(point.params);
    EXPECT_TRUE(seen.insert(describe_params(point.params)).second) << "twice: " << describe_params(point.params);
  }
  EXPECT_EQ(seen.size(), 135u);
}

TEST(BuiltinSearch, MeasuresEveryValueBeforeTrustingTheModel) {
  SearchRun run = run_search(12, 5, [](const ParamValues& params) { return separable_speedup(params); });
  std::map<std::string, std::set<std::string>> values;
  std::size_t covering = 0;
  for (const Proposal& proposal : run.proposals) {
    if (proposal.kind != ProposalKind::cover) break;
    ++covering;
    for (const auto& [name, value] : proposal.params) values[name].insert(value);
  }
  for (const auto& [name, value] : k_start) values[name].insert(value);
  ASSERT_GE(covering, 2u);
  // Four values of A and B need at least three roots besides the start; every value is measured by then.
  for (const ParamSpec& spec : synthetic_space()) EXPECT_EQ(values[spec.name].size(), spec.values.size()) << spec.name;
  for (std::size_t i = covering; i < run.proposals.size(); ++i) EXPECT_NE(run.proposals[i].kind, ProposalKind::cover);
}

TEST(BuiltinSearch, GivesUpAValueThatFailsEverywhereAfterAFewTries) {
  // Every point with C=1 fails (a build error, say). A value that only failed is tried again elsewhere (it may have
  // failed for its neighbours' sake), until three failures nothing else explains (or nine in all); then the search
  // stays away from it.
  int failures = 0;
  int last_failure = 0;
  SearchRun run = run_search(30, 11, [&](const ParamValues& params) -> std::optional<double> {
    if (params.at("C") == "1") return std::nullopt;
    return separable_speedup(params);
  });
  for (std::size_t i = 0; i < run.measured.size(); ++i)
    if (run.measured[i].outcome == Measurement::Outcome::failed) ++failures, last_failure = static_cast<int>(i);
  EXPECT_GE(failures, 2);
  EXPECT_LE(failures, 9) << "of " << run.measured.size();
  EXPECT_LT(last_failure, 15) << "C=1 still tried in the second half of the run";
}

// A value that failed only beside one value of another param (B=8 beside A=1: a tile that does not divide) walls off
// that pair, not the value: B=8 stays open beside the other tiles, where the best may lie. A value that failed beside
// several values of every other param is walled off alone.
TEST(BuiltinSearch, AFailureExplainedByAPairWallsOffThePairNotTheValue) {
  const std::vector<ParamSpec> space = synthetic_space();
  auto failed = [](std::string a, std::string b, std::string c, std::string d) {
    return Measurement{{{"A", a}, {"B", b}, {"C", c}, {"D", d}}, Measurement::Outcome::failed, 0, "COMPILE_ERROR"};
  };
  std::vector<Measurement> beside_one_tile = {failed("1", "8", "0", "0"), failed("1", "8", "1", "1"),
                                              failed("1", "8", "2", "2"), failed("1", "8", "0", "1")};
  std::vector<builtin::InvalidRegion> regions = builtin::learned_invalid_regions(space, beside_one_tile);
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(regions[0].describe(), "A=1,B=8");
  EXPECT_EQ(builtin::region_holding(regions, {{"A", "4"}, {"B", "8"}, {"C", "0"}, {"D", "0"}}), nullptr);

  std::vector<Measurement> beside_every_tile = {failed("1", "8", "0", "0"), failed("2", "8", "1", "1"),
                                                failed("4", "8", "2", "2"), failed("8", "8", "0", "1")};
  regions = builtin::learned_invalid_regions(space, beside_every_tile);
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(regions[0].describe(), "B=8");
}

// The best tile B=8 builds only beside A=4, as NR=32 builds only beside NC=256. A first try of B=8 that lands
// beside another A says nothing of B=8 beside A=4: the search measures it again, away from where it failed, and finds
// the best (A=4, B=8) for every seed.
TEST(BuiltinSearch, AValueThatFailedBesideOnePartnerIsMeasuredAgainElsewhere) {
  auto speedup_of = [](const ParamValues& params) -> std::optional<double> {
    if (params.at("A") != "4" && params.at("B") == "8") return std::nullopt;
    return separable_speedup(params) * (params.at("B") == "8" ? 2.0 : 1.0);
  };
  double best = 0;
  for (const char* c : {"0", "1", "2"})
    for (const char* d : {"0", "1", "2"})
      best = std::max(best, *speedup_of({{"A", "4"}, {"B", "8"}, {"C", c}, {"D", d}}));
  int failed_first = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    SearchRun run = run_search(27, seed, speedup_of);
    EXPECT_DOUBLE_EQ(run.best, best) << "seed " << seed;
    for (const Measurement& point : run.measured)
      if (point.params.at("B") == "8") {
        failed_first += point.outcome == Measurement::Outcome::failed ? 1 : 0;
        break;
      }
  }
  EXPECT_GE(failed_first, 1) << "no seed tried B=8 beside another A first: the test shows nothing";
}

// Failures that several pairs hold alike do not say which pair is at fault: three failures of B=8 that all had A=1
// and C=0 fit (A=1, B=8) as well as (B=8, C=0), so neither is learned until a failure elsewhere tells them apart.
TEST(BuiltinSearch, RivalPairsHoldingTheSameFailuresAreNotLearned) {
  const std::vector<ParamSpec> space = synthetic_space();
  auto failed = [](std::string a, std::string b, std::string c, std::string d) {
    return Measurement{{{"A", a}, {"B", b}, {"C", c}, {"D", d}}, Measurement::Outcome::failed, 0, "COMPILE_ERROR"};
  };
  auto passed = [](std::string a, std::string b, std::string c, std::string d) {
    return Measurement{{{"A", a}, {"B", b}, {"C", c}, {"D", d}}, Measurement::Outcome::passed, 1.0, ""};
  };
  // B=8 passed beside A=2, so B=8 alone is not at fault; A=1 and C=0 passed elsewhere too.
  std::vector<Measurement> measured = {passed("2", "8", "1", "0"), passed("1", "1", "0", "0"),
                                       failed("1", "8", "0", "0"), failed("1", "8", "0", "1"),
                                       failed("1", "8", "0", "2")};
  std::vector<builtin::InvalidRegion> regions = builtin::learned_invalid_regions(space, measured);
  EXPECT_TRUE(regions.empty()) << regions.front().describe();
  // A failure beside A=1 with C=2 holds (A=1, B=8) and not (B=8, C=0): that pair alone is learned.
  measured.push_back(failed("1", "8", "2", "1"));
  regions = builtin::learned_invalid_regions(space, measured);
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(regions[0].describe(), "A=1,B=8");
}

// NR=32 failing three times beside NC=48 and once beside MC=16 with MR=6 (which fails beside any NR) is the pair's
// failure and a stray one, not NR=32's: a value whose failures all but one shared a partner is not walled off alone.
TEST(BuiltinSearch, AValueWhoseFailuresAllButOneShareAPartnerIsNotWalledOffAlone) {
  const std::vector<ParamSpec> space = synthetic_space();
  auto failed = [](std::string a, std::string b, std::string c, std::string d) {
    return Measurement{{{"A", a}, {"B", b}, {"C", c}, {"D", d}}, Measurement::Outcome::failed, 0, "COMPILE_ERROR"};
  };
  std::vector<Measurement> measured = {failed("1", "8", "0", "0"), failed("1", "8", "1", "1"),
                                       failed("1", "8", "2", "2"), failed("4", "8", "2", "0")};
  std::vector<builtin::InvalidRegion> regions = builtin::learned_invalid_regions(space, measured);
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(regions[0].describe(), "A=1,B=8");
  EXPECT_EQ(builtin::region_holding(regions, {{"A", "4"}, {"B", "8"}, {"C", "0"}, {"D", "0"}}), nullptr);
}

// A value given up after failures (B=8, three failures beside partners that pass elsewhere) is left alone while the
// search climbs; a stagnation directive reopens it once more, where its failures least suggest another, until it
// has failed twelve times in all.
TEST(BuiltinSearch, AStagnationDirectiveReopensAValueGivenUp) {
  auto point = [](std::string a, std::string b, std::string c, std::string d) {
    return ParamValues{{"A", a}, {"B", b}, {"C", c}, {"D", d}};
  };
  std::vector<Measurement> measured = {{point("1", "1", "0", "0"), Measurement::Outcome::passed, 1.0, ""},
                                       {point("2", "2", "1", "1"), Measurement::Outcome::passed, 1.5, ""},
                                       {point("4", "4", "2", "2"), Measurement::Outcome::passed, 2.5, ""},
                                       {point("8", "1", "0", "1"), Measurement::Outcome::passed, 1.2, ""},
                                       {point("1", "8", "0", "0"), Measurement::Outcome::failed, 0, "COMPILE_ERROR"},
                                       {point("2", "8", "1", "1"), Measurement::Outcome::failed, 0, "COMPILE_ERROR"},
                                       {point("4", "8", "2", "2"), Measurement::Outcome::failed, 0, "COMPILE_ERROR"}};
  const ParamValues head = point("4", "4", "2", "2");
  auto propose = [&](SearchMode mode) {
    std::mt19937_64 rng(5);
    SearchRequest request{synthetic_space(), measured, head, 2.5, valid_point, {}, mode};
    std::optional<Proposal> proposal = builtin::propose_next(request, rng);
    EXPECT_TRUE(proposal.has_value());
    return proposal.value_or(Proposal{});
  };
  ASSERT_TRUE(builtin::learned_invalid_regions(synthetic_space(), measured).empty());
  EXPECT_EQ(propose(SearchMode::climb).rationale.find("reopen"), std::string::npos);
  const Proposal reopened = propose(SearchMode::new_lineage);
  EXPECT_EQ(reopened.params.at("B"), "8") << reopened.rationale;
  EXPECT_EQ(reopened.kind, ProposalKind::jump);
  EXPECT_NE(reopened.rationale.find("stagnation: reopen B=8"), std::string::npos) << reopened.rationale;

  // Nine more failures of B=8, of kinds too scattered for a region to be learned: twelve in all, it stays given up.
  const char* kinds[] = {"RUNTIME_ERROR", "INCORRECT_OUTPUT", "TIMEOUT"};
  for (int i = 0; i < 9; ++i)
    measured.push_back({point(i % 2 ? "2" : "1", "8", std::to_string(i % 3), std::to_string((i + 1) % 3)),
                        Measurement::Outcome::failed, 0, kinds[i % 3]});
  ASSERT_TRUE(builtin::learned_invalid_regions(synthetic_space(), measured).empty());
  EXPECT_EQ(propose(SearchMode::new_lineage).rationale.find("reopen"), std::string::npos);
}

TEST(BuiltinSearch, SingleChangesAreMadeFromTheHeadAndJumpsGoElsewhere) {
  SearchRun run = run_search(25, 2, [](const ParamValues& params) { return separable_speedup(params); });
  // Replay: each change differs from the best-so-far in one param, each jump in more than one.
  ParamValues head = k_start;
  double best = separable_speedup(k_start);
  int changes = 0;
  for (const Proposal& proposal : run.proposals) {
    std::size_t differ = builtin::make_move(head, proposal.params).changed.size();
    if (proposal.kind == ProposalKind::change) {
      EXPECT_EQ(differ, 1u) << proposal.rationale;
      ++changes;
    }
    if (proposal.kind == ProposalKind::jump) {
      EXPECT_GE(differ, 2u) << proposal.rationale;
    }
    if (separable_speedup(proposal.params) > best) best = separable_speedup(proposal.params), head = proposal.params;
  }
  EXPECT_GE(changes, 1);
}

TEST(BuiltinSearch, NewLineageModeProposesARootAwayFromTheHead) {
  SearchRun run = run_search(8, 4, [](const ParamValues& params) { return separable_speedup(params); });
  ParamValues head = k_start;
  for (const Measurement& point : run.measured)
    if (point.speedup > separable_speedup(head)) head = point.params;
  std::mt19937_64 rng(9);
  SearchRequest request{synthetic_space(),      run.measured, head, separable_speedup(head), valid_point, {},
                        SearchMode::new_lineage};
  std::optional<Proposal> proposal = builtin::propose_next(request, rng);
  ASSERT_TRUE(proposal.has_value());
  EXPECT_EQ(proposal->kind, ProposalKind::jump);
  EXPECT_GE(builtin::make_move(head, proposal->params).changed.size(), 2u);
}

TEST(BuiltinSearch, ParamEffectsRankTheParamsThatMatter) {
  SearchRun run = run_search(20, 6, [](const ParamValues& params) { return separable_speedup(params); });
  std::map<std::string, double> effects = builtin::param_effects(synthetic_space(), run.measured);
  ASSERT_EQ(effects.size(), 4u);
  EXPECT_GT(effects["A"], effects["D"]);
  EXPECT_GT(effects["B"], effects["D"]);
  EXPECT_GT(effects["C"], effects["D"]);
  std::map<std::string, double> relevance = builtin::relevance_of(synthetic_space(), effects);
  EXPECT_DOUBLE_EQ(relevance["A"], 1.5);
  EXPECT_LT(relevance["D"], 1.0);

  // A param measured at a single value has no effect on record (unknown is not flat).
  std::vector<Measurement> one_value = {
      {k_start, Measurement::Outcome::passed, 1.0},
      {{{"A", "2"}, {"B", "1"}, {"C", "0"}, {"D", "0"}}, Measurement::Outcome::passed, 1.6}};
  std::map<std::string, double> partial = builtin::param_effects(synthetic_space(), one_value);
  EXPECT_EQ(partial.count("B"), 0u);
  EXPECT_EQ(partial.count("A"), 1u);
  EXPECT_DOUBLE_EQ(builtin::relevance_of(synthetic_space(), partial)["B"], 1.0);
}

// The same landscape behind the lab, with the constraint declared by a task: the Optimizer's turns.
class SeparableEvaluator : public CandidateEvaluator {
 public:
  explicit SeparableEvaluator(std::filesystem::path start) : m_start(std::move(start)) {
    m_task.name = "separable";
    m_task.params = synthetic_space();
    m_task.param_constraints = {"A * B <= 32"};
  }
  Result evaluate(const std::filesystem::path&, const ParamValues& params, Stage, std::uint64_t) override {
    ++calls;
    Result result;
    result.verdict = Verdict::pass;
    result.speedup = separable_speedup(params);
    result.summary = "passes";
    result.eval_json = {{"verdict", "PASS"}};
    return result;
  }
  Profile profile(const std::filesystem::path&, const ParamValues&) override {
    return {"compute", "fake profile", nlohmann::json::object()};
  }
  std::vector<ParamSpec> param_space() const override { return synthetic_space(); }
  std::filesystem::path starting_sources() const override { return m_start; }
  const Task* task() const override { return &m_task; }

  int calls = 0;

 private:
  std::filesystem::path m_start;
  Task m_task;
};

TEST(BuiltinOptimizer, ReachesTheBestThroughTheLabWithRootsAndSingleChanges) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir / "start");
  write_file_atomic(dir / "start" / "kernel.cpp", "// the starting kernel\n");
  SeparableEvaluator evaluator(dir / "start");
  RunDir run = RunDir::create(dir / "runs", "separable", nlohmann::json::object());
  KnowledgeBase knowledge(run.knowledge_dir());
  Lab lab(run, evaluator, knowledge);
  lab.ensure_start(1);
  TeamSpec team;
  team.roles = {{"optimizer", 1.0, "best"}};
  team.knowledge = KnowledgeMode::digest;

  // Turns of four evaluations, as a cycle's share would be, until 20 evaluations are spent.
  for (int cycle = 1; lab.snapshot().evaluation_count() < 20; ++cycle) {
    TurnContext context;
    context.cycle = cycle;
    context.team = &team;
    context.role = team.roles.front();
    context.evaluation_budget = 4;
    context.handoff_note = "none";
    context.lab = &lab;
    context.knowledge = &knowledge;
    context.seed = 100 + static_cast<std::uint64_t>(cycle);
    TurnOutcome outcome = make_builtin_member("optimizer", 100.0)->act(context);
    EXPECT_EQ(outcome.usage.evaluations, 4) << outcome.summary;
    ASSERT_LT(cycle, 10) << "no progress: " << outcome.summary;
  }

  RunHistory snapshot = lab.snapshot();
  ASSERT_TRUE(snapshot.best().has_value());
  EXPECT_DOUBLE_EQ(*snapshot.best()->speedup, best_valid_speedup());
  EXPECT_EQ(evaluator.calls, snapshot.evaluation_count());
  std::set<std::string> keys;
  int roots = 0, changes = 0;
  for (const EvaluationRecord& record : snapshot.evaluations) {
    EXPECT_TRUE(keys.insert(record.key()).second) << "evaluated twice: " << record.candidate_id;
    EXPECT_TRUE(valid_point(record.params)) << record.candidate_id << " " << describe_params(record.params);
    EXPECT_FALSE(record.hypothesis.empty()) << record.candidate_id;
    if (record.author_role != "optimizer") continue;
    // A change names its parent and differs from it in one param; a root starts a lineage without one.
    if (record.parent_id.empty()) {
      ++roots;
    } else {
      ++changes;
      EXPECT_EQ(record.changes, 1) << record.candidate_id << ": " << record.hypothesis;
    }
  }
  EXPECT_GE(roots, 2);
  EXPECT_GE(changes, 1);
}

}  // namespace
}  // namespace evoteam
