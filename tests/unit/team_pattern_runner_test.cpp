// run_team for each pattern with fake members: who ran, in what order or at once, what hand-off note each read,
// and how the cycle's evaluations were split among them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/store/store.hpp>
#include <evoteam/team/team.hpp>

#include "support/temp_dir.hpp"
#include "team/turn_setup.hpp"

namespace evoteam {
namespace {

// What a Debugger is handed when no candidate has failed.
const char* const k_nothing_failed = "no candidate has failed: your workspace holds the best";

// The members never evaluate anything; the lab only has to exist.
class UnusedEvaluator : public CandidateEvaluator {
 public:
  explicit UnusedEvaluator(std::filesystem::path start) : m_start(std::move(start)) {}
  Result evaluate(const std::filesystem::path&, const ParamValues&, Stage, std::uint64_t) override {
    ADD_FAILURE() << "a fake member evaluated";
    return {};
  }
  Profile profile(const std::filesystem::path&, const ParamValues&) override { return {}; }
  std::vector<ParamSpec> param_space() const override { return {}; }
  std::filesystem::path starting_sources() const override { return m_start; }

 private:
  std::filesystem::path m_start;
};

// What the members of one cycle did, in the order they did it.
struct TurnLog {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> started;         // roles, in the order their turns began
  std::map<std::string, TurnContext> seen;  // the context each role was given
  int running = 0;
  int arrived = 0;  // members whose turn began; never goes down
  int most_running_at_once = 0;
  std::map<std::string, int> peers_seen;  // parallel: how many members were in their turn at once, per role
};

// A member that logs its turn and leaves `note` for the next one. With `wait_for_peers`, it stays in its turn
// until that many members are in theirs (or 10 s pass): only members that really run at once all see each other.
class FakeMember : public TeamMember {
 public:
  FakeMember(TurnLog& log, std::string note, int wait_for_peers, bool fail)
      : m_log(log), m_note(std::move(note)), m_wait_for_peers(wait_for_peers), m_fail(fail) {}

  TurnOutcome act(TurnContext& context) override {
    std::unique_lock<std::mutex> lock(m_log.mutex);
    m_log.started.push_back(context.role.name);
    m_log.seen[context.role.name] = context;
    m_log.most_running_at_once = std::max(m_log.most_running_at_once, ++m_log.running);
    ++m_log.arrived;
    m_log.changed.notify_all();
    if (m_wait_for_peers > 0) {
      // No member leaves before all have arrived, so all arriving means all were in their turns at once.
      m_log.changed.wait_for(lock, std::chrono::seconds(10), [&] { return m_log.arrived >= m_wait_for_peers; });
      m_log.peers_seen[context.role.name] = m_log.arrived;
    } else {
      // Give a member that wrongly overlaps this one the time to show it.
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      lock.lock();
    }
    --m_log.running;
    if (m_fail) throw std::runtime_error("the " + context.role.name + " crashed");
    return TurnOutcome{m_note, context.role.name + " done", RoleUsage{}, false, false, ""};
  }

 private:
  TurnLog& m_log;
  std::string m_note;
  int m_wait_for_peers;
  bool m_fail;
};

class RunTeam : public ::testing::Test {
 protected:
  RunTeam()
      : m_evaluator(start_sources()),
        m_run(RunDir::create(m_dir / "runs", "patterns", nlohmann::json::object())),
        m_knowledge(m_run.knowledge_dir()),
        m_lab(m_run, m_evaluator, m_knowledge) {}

  std::filesystem::path start_sources() {
    std::filesystem::create_directories(m_dir / "start");
    write_file_atomic(m_dir / "start" / "kernel.cpp", "// the starting kernel\n");
    return m_dir / "start";
  }

  // Runs `team` with fake members: `notes` gives each role's hand-off note, `failing` the roles that throw.
  std::map<std::string, TurnOutcome> run(const TeamSpec& team, int evaluations,
                                         const std::map<std::string, std::string>& notes = {},
                                         const std::set<std::string>& failing = {},
                                         ParallelTurns parallel_turns = ParallelTurns::side_by_side) {
    const int wait_for_peers = team.pattern == Pattern::parallel && parallel_turns == ParallelTurns::side_by_side
                                   ? static_cast<int>(team.roles.size())
                                   : 0;
    MemberFactory make_member = [&](const RoleAssignment& role) -> std::unique_ptr<TeamMember> {
      auto note = notes.find(role.name);
      return std::make_unique<FakeMember>(m_log, note == notes.end() ? "" : note->second, wait_for_peers,
                                          failing.count(role.name) > 0);
    };
    return run_team(team, 3, CycleBudget{evaluations}, make_member, m_lab, m_knowledge, 42, parallel_turns);
  }

  static TeamSpec team_of(Pattern pattern, std::vector<RoleAssignment> roles) {
    TeamSpec team;
    team.roles = std::move(roles);
    team.pattern = pattern;
    return team;
  }

  testing::TempDir m_dir;
  UnusedEvaluator m_evaluator;
  RunDir m_run;
  KnowledgeBase m_knowledge;
  Lab m_lab;
  TurnLog m_log;
};

TEST_F(RunTeam, SoloRunsItsOneMemberWithTheWholeBudget) {
  std::map<std::string, TurnOutcome> outcomes = run(team_of(Pattern::solo, {{"optimizer", 1.0, "best"}}), 8);
  EXPECT_EQ(m_log.started, std::vector<std::string>{"optimizer"});
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes.at("optimizer").summary, "optimizer done");
  const TurnContext& seen = m_log.seen.at("optimizer");
  EXPECT_EQ(seen.evaluation_budget, 8);
  EXPECT_EQ(seen.handoff_note, "none");
  EXPECT_EQ(seen.cycle, 3);
  EXPECT_EQ(seen.lab, &m_lab);
  EXPECT_EQ(seen.knowledge, &m_knowledge);
}

// A pipeline runs its members one after another in the team's order; each reads every earlier member's note.
TEST_F(RunTeam, PipelineRunsInOrderAndPassesTheNotesOn) {
  TeamSpec team =
      team_of(Pattern::pipeline,
              {{"profiling-scientist", 0.25, "best"}, {"optimizer", 0.5, "best"}, {"disciplinarian", 0.25, "best"}});
  std::map<std::string, TurnOutcome> outcomes =
      run(team, 8, {{"profiling-scientist", "memory-bound: raise TILE_N"}, {"optimizer", "TILE_N 16 -> 64, 1.4x"}});
  EXPECT_EQ(m_log.started, (std::vector<std::string>{"profiling-scientist", "optimizer", "disciplinarian"}));
  EXPECT_EQ(m_log.most_running_at_once, 1);
  EXPECT_EQ(outcomes.size(), 3u);
  EXPECT_EQ(m_log.seen.at("profiling-scientist").handoff_note, "none");
  EXPECT_EQ(m_log.seen.at("optimizer").handoff_note, "profiling-scientist: memory-bound: raise TILE_N");
  // The reviewer is told first what the cycle recorded for it to review (nothing, with these fake members).
  EXPECT_EQ(m_log.seen.at("disciplinarian").handoff_note,
            "no candidate was recorded this cycle\n"
            "profiling-scientist: memory-bound: raise TILE_N\noptimizer: TILE_N 16 -> 64, 1.4x");
  // The split: each share of 8, rounded down.
  EXPECT_EQ(m_log.seen.at("profiling-scientist").evaluation_budget, 2);
  EXPECT_EQ(m_log.seen.at("optimizer").evaluation_budget, 4);
  EXPECT_EQ(m_log.seen.at("disciplinarian").evaluation_budget, 2);
}

// A member that leaves no note adds nothing to the chain; the order is the team's, not the roles' usual one.
TEST_F(RunTeam, PipelineSkipsEmptyNotesAndKeepsTheTeamsOrder) {
  TeamSpec team = team_of(Pattern::pipeline, {{"optimizer", 0.5, "best"}, {"debugger", 0.5, "failing"}});
  run(team, 4, {{"debugger", "fixed it"}});
  EXPECT_EQ(m_log.started, (std::vector<std::string>{"optimizer", "debugger"}));
  EXPECT_EQ(m_log.seen.at("debugger").handoff_note, k_nothing_failed);
}

// Parallel members run at the same time, each on its own lineage with its own share, and read no note.
TEST_F(RunTeam, ParallelRunsEveryMemberAtOnceOnItsLineage) {
  TeamSpec team = team_of(Pattern::parallel, {{"optimizer", 0.5, "best"}, {"debugger", 0.5, "failing"}});
  const auto start = std::chrono::steady_clock::now();
  std::map<std::string, TurnOutcome> outcomes = run(team, 6, {{"optimizer", "o"}, {"debugger", "d"}});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << "the members waited for each other";
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes.at("optimizer").summary, "optimizer done");
  EXPECT_EQ(outcomes.at("debugger").summary, "debugger done");
  EXPECT_EQ(m_log.most_running_at_once, 2);
  EXPECT_EQ(m_log.peers_seen.at("optimizer"), 2);
  EXPECT_EQ(m_log.peers_seen.at("debugger"), 2);
  EXPECT_EQ(m_log.seen.at("optimizer").role.lineage, "best");
  EXPECT_EQ(m_log.seen.at("debugger").role.lineage, "failing");
  EXPECT_EQ(m_log.seen.at("optimizer").handoff_note, "none");
  EXPECT_EQ(m_log.seen.at("debugger").handoff_note, k_nothing_failed);  // what a Debugger is always told
  EXPECT_EQ(m_log.seen.at("optimizer").evaluation_budget, 3);
  EXPECT_EQ(m_log.seen.at("debugger").evaluation_budget, 3);
  // Each member draws from its own seed, so two members of one cycle do not make the same random choices.
  EXPECT_NE(m_log.seen.at("optimizer").seed, m_log.seen.at("debugger").seed);
}

// In turn (a replayed run), a parallel team's members act one at a time in the team's order, each as it would side
// by side: its own lineage, budget and seed, and no hand-off from the peer before it.
TEST_F(RunTeam, ParallelInTurnRunsTheMembersOneAtATimeInTheTeamsOrder) {
  TeamSpec team = team_of(Pattern::parallel, {{"optimizer", 0.5, "best"}, {"debugger", 0.5, "failing"}});
  std::map<std::string, TurnOutcome> outcomes =
      run(team, 6, {{"optimizer", "o"}, {"debugger", "d"}}, {}, ParallelTurns::in_turn);
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(m_log.most_running_at_once, 1);
  EXPECT_EQ(m_log.started, (std::vector<std::string>{"optimizer", "debugger"}));
  EXPECT_EQ(m_log.seen.at("debugger").handoff_note.find("optimizer: o"), std::string::npos)
      << m_log.seen.at("debugger").handoff_note;
  EXPECT_EQ(m_log.seen.at("debugger").role.lineage, "failing");
  EXPECT_EQ(m_log.seen.at("debugger").evaluation_budget, 3);
}

// A full disk in a member's turn is the run's failure, not the member's: it stops the run (exit 74), so the cycle
// is not closed short of its evaluations, and resume does them once there is space again.
TEST_F(RunTeam, AFullDiskInAMembersTurnStopsTheRunInsteadOfFailingTheMember) {
  class FullDisk : public TeamMember {
   public:
    TurnOutcome act(TurnContext&) override { throw IoError("cannot write candidates/c0003/eval.json: No space left"); }
  };
  MemberFactory make_member = [](const RoleAssignment&) -> std::unique_ptr<TeamMember> {
    return std::make_unique<FullDisk>();
  };
  for (Pattern pattern : {Pattern::solo, Pattern::parallel}) {
    TeamSpec team = team_of(pattern, {{"optimizer", 1.0, "best"}});
    EXPECT_THROW(run_team(team, 1, CycleBudget{2}, make_member, m_lab, m_knowledge, 42), IoError);
  }
}

// A parallel member that crashes is recorded as failed; its peer's turn still counts.
TEST_F(RunTeam, AParallelMembersCrashDoesNotStopItsPeer) {
  TeamSpec team = team_of(Pattern::parallel, {{"optimizer", 0.5, "best"}, {"debugger", 0.5, "failing"}});
  std::map<std::string, TurnOutcome> outcomes = run(team, 2, {}, {"debugger"});
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes.at("optimizer").summary, "optimizer done");
  EXPECT_EQ(outcomes.at("debugger").summary, "failed: the debugger crashed");
}

// Shares round down, but every member gets at least one evaluation and none more than the cycle has.
TEST_F(RunTeam, TheBudgetSplitRoundsDownToAtLeastOneAndAtMostTheCycles) {
  TeamSpec team =
      team_of(Pattern::pipeline,
              {{"optimizer", 0.85, "best"}, {"knowledge-integrator", 0.05, "best"}, {"disciplinarian", 0.1, "best"}});
  run(team, 10);
  EXPECT_EQ(m_log.seen.at("optimizer").evaluation_budget, 8);
  EXPECT_EQ(m_log.seen.at("knowledge-integrator").evaluation_budget, 1);  // 0.5 rounds to 0, raised to 1
  EXPECT_EQ(m_log.seen.at("disciplinarian").evaluation_budget, 1);

  m_log.seen.clear();
  run(team_of(Pattern::solo, {{"optimizer", 1.0, "best"}}), 1);
  EXPECT_EQ(m_log.seen.at("optimizer").evaluation_budget, 1);
}

// --- the rules every team keeps where it is built (enforce_team_rules), whoever proposed it -----------------------

// Sources that hold "broken" do not build, with a build log; everything else passes at 1.0x.
class BrokenBuildEvaluator : public CandidateEvaluator {
 public:
  explicit BrokenBuildEvaluator(std::filesystem::path start) : m_start(std::move(start)) {}
  Result evaluate(const std::filesystem::path& sources_dir, const ParamValues&, Stage, std::uint64_t) override {
    Result result;
    if (read_file(sources_dir / "kernel.cpp").find("broken") != std::string::npos) {
      result.verdict = Verdict::compile_error;
      result.failure_signature = "COMPILE_ERROR: 'broken' does not name a type";
      result.build_log = "kernel.cpp:2:1: error: 'broken' does not name a type\n";
      result.summary = "does not build";
      return result;
    }
    result.verdict = Verdict::pass;
    result.speedup = 1.0;
    result.summary = "passes";
    return result;
  }
  Profile profile(const std::filesystem::path&, const ParamValues&) override { return {}; }
  std::vector<ParamSpec> param_space() const override { return {}; }
  std::filesystem::path starting_sources() const override { return m_start; }

 private:
  std::filesystem::path m_start;
};

// A member that records what it was given and, when it has `code` to submit, records it as a candidate in the lab
// (an Optimizer's turn), so a reviewer after it has something to review.
class RecordingMember : public TeamMember {
 public:
  RecordingMember(std::map<std::string, TurnContext>& seen, std::vector<std::string>& order, std::mutex& mutex,
                  std::string code, std::filesystem::path work_dir)
      : m_seen(seen), m_order(order), m_mutex(mutex), m_code(std::move(code)), m_work_dir(std::move(work_dir)) {}
  TurnOutcome act(TurnContext& context) override {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_seen[context.role.name] = context;
      m_order.push_back(context.role.name + " starts");
    }
    if (!m_code.empty()) {
      std::filesystem::create_directories(m_work_dir);
      write_file_atomic(m_work_dir / "kernel.cpp", m_code);
      context.lab->evaluate(LabRequest{"c0001", context.role.name, context.role.lineage, "tile 64", {}, m_work_dir},
                            context.cycle, Lab::Screening::off);
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    m_order.push_back(context.role.name + " ends");
    return TurnOutcome{context.role.name + " was here", context.role.name + " done", RoleUsage{}, false, false, ""};
  }

 private:
  std::map<std::string, TurnContext>& m_seen;
  std::vector<std::string>& m_order;
  std::mutex& m_mutex;
  std::string m_code;
  std::filesystem::path m_work_dir;
};

class TeamRules : public ::testing::Test {
 protected:
  TeamRules()
      : m_evaluator(start_sources()),
        m_run(RunDir::create(m_dir / "runs", "rules", nlohmann::json::object())),
        m_knowledge(m_run.knowledge_dir()),
        m_lab(m_run, m_evaluator, m_knowledge) {
    m_lab.ensure_start(1);
  }

  std::filesystem::path start_sources() {
    std::filesystem::create_directories(m_dir / "start");
    write_file_atomic(m_dir / "start" / "kernel.cpp", "// the starting kernel\n");
    return m_dir / "start";
  }

  // Records a candidate of `cycle` with `code`, as an Optimizer's submission would.
  LabOutcome submit(const std::string& code, int cycle) {
    const std::filesystem::path dir = m_dir / ("submitted-" + std::to_string(++m_submitted));
    std::filesystem::create_directories(dir);
    write_file_atomic(dir / "kernel.cpp", code);
    return m_lab.evaluate(LabRequest{"c0001", "optimizer", "best", "an attempt", {}, dir}, cycle, Lab::Screening::off);
  }

  // Runs `team` in cycle 2; the optimizer submits `optimizer_code` when it is not empty.
  void run(const TeamSpec& team, const std::string& optimizer_code = "") {
    MemberFactory make_member = [&](const RoleAssignment& role) -> std::unique_ptr<TeamMember> {
      return std::make_unique<RecordingMember>(m_seen, m_order, m_mutex, role.name == "optimizer" ? optimizer_code : "",
                                               m_dir / ("work-" + role.name));
    };
    run_team(team, 2, CycleBudget{4}, make_member, m_lab, m_knowledge, 42);
  }

  testing::TempDir m_dir;
  BrokenBuildEvaluator m_evaluator;
  RunDir m_run;
  KnowledgeBase m_knowledge;
  Lab m_lab;
  int m_submitted = 0;
  std::map<std::string, TurnContext> m_seen;
  std::vector<std::string> m_order;
  std::mutex m_mutex;
};

// Two builds failed and the supervisor (any policy) put the Debugger on lineage best: it is sent to the failing
// candidate all the same, and told which one it is, why it failed and what its build log says.
TEST_F(TeamRules, ADebuggerIsAlwaysSentToTheFailingCandidateWithItsBuildLog) {
  ASSERT_EQ(submit("broken one;\n", 1).record.verdict, Verdict::compile_error);
  ASSERT_EQ(submit("broken two;\n", 1).record.candidate_id, "c0003");
  TeamSpec team;
  team.pattern = Pattern::pipeline;
  team.roles = {{"debugger", 0.5, "best"}, {"optimizer", 0.5, "best"}};
  run(team);
  const TurnContext& debugger = m_seen.at("debugger");
  EXPECT_EQ(debugger.role.lineage, "failing");
  const std::string& note = debugger.handoff_note;
  EXPECT_NE(note.find("failing candidate c0003 (COMPILE_ERROR"), std::string::npos) << note;
  EXPECT_NE(note.find("kernel.cpp:2:1: error: 'broken' does not name a type"), std::string::npos) << note;
  EXPECT_EQ(m_seen.at("optimizer").role.lineage, "best");
  // The record of the team says so too.
  TeamSpec enforced = team;
  EXPECT_EQ(enforce_team_rules(enforced), std::vector<std::string>{"the Debugger works the failing lineage"});
  EXPECT_EQ(enforced.roles[0].lineage, "failing");
}

// A Disciplinarian in a parallel team (as both policies and LLM proposals have put it) used to run beside the
// members whose candidates it should review, with "none" to review. It now runs once they are done, and is told
// the cycle's candidates.
TEST_F(TeamRules, AParallelTeamsDisciplinarianReviewsTheCandidatesItsPeersMade) {
  TeamSpec team;
  team.pattern = Pattern::parallel;
  team.roles = {{"disciplinarian", 0.5, "best"}, {"optimizer", 0.5, "best"}};
  run(team, "// tile 64\n");
  EXPECT_EQ(m_order, (std::vector<std::string>{"optimizer starts", "optimizer ends", "disciplinarian starts",
                                               "disciplinarian ends"}));
  const std::string& note = m_seen.at("disciplinarian").handoff_note;
  EXPECT_NE(note.find("candidates of cycle 2 to review:"), std::string::npos) << note;
  EXPECT_NE(note.find("c0002"), std::string::npos) << note;
  EXPECT_NE(note.find("by optimizer: tile 64"), std::string::npos) << note;
  EXPECT_NE(note.find("optimizer: optimizer was here"), std::string::npos) << note;
}

// In a pipeline the reviewer comes after the members who make candidates (only a Knowledge Integrator may follow
// it), and alone it gets an Optimizer to make them.
TEST_F(TeamRules, ADisciplinarianComesAfterTheMakersOfCandidatesAndNeverAlone) {
  TeamSpec pipeline;
  pipeline.pattern = Pattern::pipeline;
  pipeline.roles = {{"disciplinarian", 0.2, "best"}, {"optimizer", 0.6, "best"}, {"knowledge-integrator", 0.2, "best"}};
  run(pipeline, "// tile 64\n");
  EXPECT_EQ(m_order, (std::vector<std::string>{"optimizer starts", "optimizer ends", "disciplinarian starts",
                                               "disciplinarian ends", "knowledge-integrator starts",
                                               "knowledge-integrator ends"}));
  EXPECT_NE(m_seen.at("disciplinarian").handoff_note.find("c0002"), std::string::npos);

  TeamSpec alone;
  alone.pattern = Pattern::solo;
  alone.roles = {{"disciplinarian", 1.0, "best"}};
  EXPECT_EQ(enforce_team_rules(alone),
            std::vector<std::string>{"an Optimizer makes the candidates the Disciplinarian reviews"});
  EXPECT_EQ(alone.pattern, Pattern::pipeline);
  EXPECT_EQ(alone.role_names(), (std::vector<std::string>{"optimizer", "disciplinarian"}));
  double shares = 0;
  for (const RoleAssignment& role : alone.roles) shares += role.budget_share;
  EXPECT_DOUBLE_EQ(shares, 1.0);
}

// The member factory: the run's provider picks the kind, and the kind makes a member for each of its roles.
TEST(TeamMembers, TheProviderPicksTheKindAndTheBuiltinKindPlaysEveryBuiltinRole) {
  EXPECT_EQ(member_kind_of_provider("builtin"), MemberKind::builtin);
  EXPECT_EQ(member_kind_of_provider("anthropic"), MemberKind::llm);
  EXPECT_EQ(member_kind_of_provider("openai"), MemberKind::llm);
  EXPECT_EQ(member_kind_of_provider("scripted"), MemberKind::llm);
  const MemberFactory make_member = member_factory(MemberKind::builtin, {0.5, nullptr});
  for (const char* role : {"optimizer", "debugger", "profiling-scientist", "knowledge-integrator", "disciplinarian"})
    EXPECT_NE(make_member({role, 1.0, "best"}), nullptr) << role;
  try {
    make_member({"poet", 1.0, "best"});
    FAIL() << "a role the builtin team does not have was made";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("it has optimizer, debugger"), std::string::npos) << error.what();
  }
}

TEST(TeamMembers, EveryKindHasOneNameAndAnLlmMemberNeedsTheRunsLlmTeam) {
  std::set<std::string> names;
  for (const MemberKindInfo& kind : member_kinds())
    EXPECT_TRUE(names.insert(to_string(kind.kind)).second) << kind.name << " is named twice";
  EXPECT_EQ(names, (std::set<std::string>{"builtin", "llm", "cli"}));
  EXPECT_THROW(member_factory(MemberKind::llm, {})({"optimizer", 1.0, "best"}), Error);
  EXPECT_THROW(member_factory(MemberKind::cli, {})({"optimizer", 1.0, "best"}), Error);
}

// The failing lineage moves on once a fix passed: a Debugger is handed the newest failure no later candidate fixed,
// and the best once every failure has a passing descendant.
TEST(TeamLineage, TheFailingLineageMovesOnOnceAFixPassed) {
  const auto record = [](const std::string& id, const std::string& parent, Verdict verdict) {
    EvaluationRecord made;
    made.candidate_id = id;
    made.parent_id = parent;
    made.state = RecordState::evaluated;
    made.verdict = verdict;
    if (verdict == Verdict::pass) made.speedup = 1.0;
    return made;
  };
  RunHistory history;
  history.evaluations = {record("c0001", "", Verdict::pass), record("c0002", "c0001", Verdict::compile_error),
                         record("c0003", "c0001", Verdict::numeric_mismatch)};
  EXPECT_EQ(head_of_lineage(history, "failing").candidate_id, "c0003");
  history.evaluations.push_back(record("c0004", "c0003", Verdict::pass));  // the Debugger's fix of c0003
  EXPECT_EQ(head_of_lineage(history, "failing").candidate_id, "c0002");
  history.evaluations.push_back(record("c0005", "c0002", Verdict::compile_error));
  history.evaluations.push_back(record("c0006", "c0005", Verdict::pass));  // fixes c0005 and, through it, c0002
  EXPECT_EQ(head_of_lineage(history, "failing").candidate_id, history.best()->candidate_id);
}

}  // namespace
}  // namespace evoteam
