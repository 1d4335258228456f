// Knowledge base: structured Markdown round-trips, failures are found by signature, the digest is bounded.
#include <gtest/gtest.h>

#include <evoteam/agent/tools.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/task/task.hpp>
#include <evoteam/team/knowledge.hpp>
#include <evoteam/team/llm_team.hpp>

#include <evoteam/agent/workspace.hpp>
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

TEST(Knowledge, MarkdownFormatParseRoundTrip) {
  KnowledgeEntry first{"tile 16→32: 1.40x",
                       {{"param", "tile"}, {"to", "32"}, {"candidate", "c0007"}},
                       "Measured on all workloads.\nSecond line: with a colon."};
  KnowledgeEntry second{"no fields", {}, ""};
  std::string text =
      "# Validated strategies\n\npreamble text\n\n" + format_knowledge_entry(first) + format_knowledge_entry(second);
  std::vector<KnowledgeEntry> parsed = parse_knowledge_markdown(text);
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0].title, first.title);
  EXPECT_EQ(parsed[0].fields, first.fields);
  EXPECT_EQ(parsed[0].text, first.text);
  EXPECT_EQ(parsed[1].title, "no fields");
  EXPECT_TRUE(parsed[1].fields.empty());
  EXPECT_EQ(parsed[1].text, "");
  // Formatting what was parsed gives the same entries back.
  EXPECT_EQ(format_knowledge_entry(parsed[0]), format_knowledge_entry(first));
}

TEST(Knowledge, BaseStoresEntriesPerKindAndFindsFailuresBySignature) {
  testing::TempDir dir;
  KnowledgeBase knowledge(dir / "knowledge");
  EXPECT_FALSE(knowledge.has_failure("COMPILE_ERROR: x"));
  knowledge.add(
      KnowledgeKind::failed_attempt,
      KnowledgeEntry{"COMPILE_ERROR in c0003", {{"signature", "COMPILE_ERROR: x"}, {"candidate", "c0003"}}, ""});
  knowledge.add(KnowledgeKind::strategy, KnowledgeEntry{"unroll 1→4", {{"param", "unroll"}}, "why"});
  EXPECT_TRUE(knowledge.has_failure("COMPILE_ERROR: x"));
  EXPECT_FALSE(knowledge.has_failure("COMPILE_ERROR: y"));
  EXPECT_EQ(knowledge.entries(KnowledgeKind::failed_attempt).size(), 1u);
  ASSERT_EQ(knowledge.entries(KnowledgeKind::strategy).size(), 1u);
  EXPECT_EQ(knowledge.entries(KnowledgeKind::strategy)[0].text, "why");
  EXPECT_TRUE(std::filesystem::exists(dir / "knowledge" / "failed_attempts.md"));

  knowledge.add_role_record("debugger", KnowledgeEntry{"cycle 2", {{"probes", "3"}}, ""});
  ASSERT_EQ(knowledge.role_records("debugger").size(), 1u);
  EXPECT_EQ(knowledge.role_records("debugger")[0].fields.at("probes"), "3");
  knowledge.write_action_plan("- next: profile\n");
  knowledge.write_action_plan("- next: tile\n");
  EXPECT_NE(knowledge.action_plan().find("tile"), std::string::npos);
  EXPECT_EQ(knowledge.action_plan().find("profile"), std::string::npos);  // replaced, not appended

  // Another KnowledgeBase on the same directory (a shared --knowledge dir) sees the same entries.
  KnowledgeBase again(dir / "knowledge");
  EXPECT_TRUE(again.has_failure("COMPILE_ERROR: x"));
}

TEST(Knowledge, KindNamesParseAndUnknownThrows) {
  EXPECT_EQ(knowledge_kind_from_string("strategy"), KnowledgeKind::strategy);
  EXPECT_EQ(knowledge_kind_from_string("failed_attempt"), KnowledgeKind::failed_attempt);
  EXPECT_EQ(file_name(KnowledgeKind::constraint), "constraints.md");
  EXPECT_THROW(knowledge_kind_from_string("gossip"), InvalidInput);
}

TEST(Knowledge, DigestIsCutToTheLimit) {
  testing::TempDir dir;
  KnowledgeBase knowledge(dir / "knowledge");
  EXPECT_EQ(knowledge.digest(1000), "(no knowledge recorded yet)");
  for (int i = 0; i < 40; ++i) {
    std::string n = std::to_string(i);
    knowledge.add(KnowledgeKind::strategy,
                  KnowledgeEntry{"strategy number " + n + " with a long descriptive title", {{"param", "p" + n}}, ""});
    knowledge.add(KnowledgeKind::constraint,
                  KnowledgeEntry{"constraint number " + n + " with a long title", {{"when", "p" + n + "=1"}}, ""});
    knowledge.add(KnowledgeKind::failed_attempt,
                  KnowledgeEntry{"failure number " + n + " with a long title", {{"signature", "S" + n}}, ""});
    knowledge.add(KnowledgeKind::hardware, KnowledgeEntry{"observation number " + n + " with a long title", {}, ""});
  }
  knowledge.write_action_plan(std::string(400, 'x') + "\n");
  std::string big = knowledge.digest(100000);
  EXPECT_NE(big.find("strategy number 39"), std::string::npos);
  EXPECT_NE(big.find("constraint number 0"), std::string::npos);

  std::string small = knowledge.digest(300);
  EXPECT_LE(small.size(), 300u + std::string("\n[... digest cut ...]\n").size());
  EXPECT_NE(small.find("digest cut"), std::string::npos);
  // Newest first: the latest constraint survives the cut, the oldest does not.
  EXPECT_NE(small.find("constraint number 39"), std::string::npos) << small;
  EXPECT_EQ(small.find("constraint number 0 "), std::string::npos) << small;
}

// --- Provenance: a shared directory holds entries of many runs and tasks ------------------------------------

const Provenance k_matmul_run1{"host_matmul", "host", "20250101T000000Z-host_matmul"};
const Provenance k_matmul_run2{"host_matmul", "host", "20250102T000000Z-host_matmul"};
const Provenance k_gemm_run{"gemm_bf16", "sm_90a,sm_100a", "20250103T000000Z-gemm_bf16"};

TEST(KnowledgeProvenance, EveryWriterStampsTaskTargetAndRunAndKeepsItsCandidate) {
  testing::TempDir dir;
  KnowledgeBase knowledge(dir / "knowledge", k_gemm_run);
  ASSERT_TRUE(knowledge.add(KnowledgeKind::strategy,
                            KnowledgeEntry{"TILE_N 16→64: 1.40x", {{"param", "TILE_N"}, {"candidate", "c0003"}}, ""}));
  knowledge.add_role_record("debugger", KnowledgeEntry{"cycle 1", {{"probes", "2"}}, ""});
  // The agents' record_knowledge tool goes through the same base: the candidate is the agent's head.
  std::unique_ptr<KnowledgeAccess> access = make_knowledge_access(knowledge, "optimizer", 4000, "c0005");
  access->record("hardware", "smem bound\nat 96 KiB per block");

  auto expect_stamped = [](const KnowledgeEntry& entry, const std::string& candidate) {
    EXPECT_EQ(entry.fields.at("task"), "gemm_bf16") << entry.title;
    EXPECT_EQ(entry.fields.at("target"), "sm_90a,sm_100a") << entry.title;
    EXPECT_EQ(entry.fields.at("run"), "20250103T000000Z-gemm_bf16") << entry.title;
    if (!candidate.empty()) {
      EXPECT_EQ(entry.fields.at("candidate"), candidate) << entry.title;
    }
  };
  ASSERT_EQ(knowledge.entries(KnowledgeKind::strategy).size(), 1u);
  expect_stamped(knowledge.entries(KnowledgeKind::strategy)[0], "c0003");
  ASSERT_EQ(knowledge.entries(KnowledgeKind::hardware).size(), 1u);
  expect_stamped(knowledge.entries(KnowledgeKind::hardware)[0], "c0005");
  EXPECT_EQ(knowledge.entries(KnowledgeKind::hardware)[0].fields.at("author"), "optimizer");
  ASSERT_EQ(knowledge.role_records("debugger").size(), 1u);
  expect_stamped(knowledge.role_records("debugger")[0], "");
  // As a person reads the file: "- key: value" lines under the title.
  const std::string file = read_file(dir / "knowledge" / "strategies.md");
  EXPECT_NE(file.find("- task: gemm_bf16\n"), std::string::npos) << file;
  EXPECT_NE(file.find("- run: 20250103T000000Z-gemm_bf16\n"), std::string::npos) << file;
  // The action plan says whose it is.
  knowledge.write_action_plan("- next: tile\n");
  EXPECT_NE(knowledge.action_plan().find("- task: gemm_bf16"), std::string::npos) << knowledge.action_plan();
}

TEST(KnowledgeProvenance, ATasksTargetIsHostOrItsCudaArchs) {
  Task host;
  host.name = "host_matmul";
  host.target = Target::host;
  Task cuda;
  cuda.name = "gemm_bf16";
  cuda.target = Target::cuda;
  cuda.archs = {"sm_90a", "sm_100a"};
  const Provenance of_host = provenance_of(host, "run-a");
  EXPECT_EQ(of_host.task, "host_matmul");
  EXPECT_EQ(of_host.target, "host");
  EXPECT_EQ(of_host.run, "run-a");
  EXPECT_EQ(provenance_of(cuda, "run-b").target, "sm_90a,sm_100a");
}

// Two runs sharing a directory both have a c0003: the candidate id says nothing about whether an entry repeats
// another, its content does.
TEST(KnowledgeDedup, ContentNotTheCandidateIdMakesARepeat) {
  testing::TempDir dir;
  KnowledgeBase first(dir / "knowledge", k_matmul_run1);
  KnowledgeBase second(dir / "knowledge", k_matmul_run2);
  EXPECT_TRUE(first.add(
      KnowledgeKind::strategy,
      KnowledgeEntry{"TILE_N 16→64: 1.40x", {{"param", "TILE_N"}, {"to", "64"}, {"candidate", "c0003"}}, ""}));
  // Same candidate id, another finding: kept.
  EXPECT_TRUE(second.add(
      KnowledgeKind::strategy,
      KnowledgeEntry{"TILE_K 32→128: 1.20x", {{"param", "TILE_K"}, {"to", "128"}, {"candidate", "c0003"}}, ""}));
  // The first finding again, from another candidate of another run, re-wrapped: one entry.
  EXPECT_FALSE(second.add(
      KnowledgeKind::strategy,
      KnowledgeEntry{"TILE_N  16→64:\t1.40x", {{"to", "64"}, {"param", "TILE_N"}, {"candidate", "c0009"}}, ""}));
  // And within one run, a cycle that finds the same thing again adds nothing.
  EXPECT_FALSE(first.add(
      KnowledgeKind::strategy,
      KnowledgeEntry{"TILE_N 16→64: 1.40x", {{"param", "TILE_N"}, {"to", "64"}, {"candidate", "c0003"}}, ""}));
  EXPECT_EQ(first.entries(KnowledgeKind::strategy).size(), 2u);
  // A different text or field value is different content.
  EXPECT_TRUE(second.add(
      KnowledgeKind::strategy,
      KnowledgeEntry{"TILE_N 16→64: 1.40x", {{"param", "TILE_N"}, {"to", "64"}}, "only with ACC_IN_REGISTERS=1"}));
  // The same words about another task are another task's knowledge; of another kind, another kind's.
  KnowledgeBase gemm(dir / "knowledge", k_gemm_run);
  EXPECT_TRUE(
      gemm.add(KnowledgeKind::strategy,
               KnowledgeEntry{"TILE_N 16→64: 1.40x", {{"param", "TILE_N"}, {"to", "64"}, {"candidate", "c0003"}}, ""}));
  EXPECT_TRUE(first.add(
      KnowledgeKind::hardware,
      KnowledgeEntry{"TILE_N 16→64: 1.40x", {{"param", "TILE_N"}, {"to", "64"}, {"candidate", "c0003"}}, ""}));
  EXPECT_EQ(first.entries(KnowledgeKind::strategy).size(), 4u);
  EXPECT_EQ(content_hash(KnowledgeEntry{"a  b", {{"k", "v"}, {"run", "x"}}, "t"}),
            content_hash(KnowledgeEntry{"a b", {{"k", "v"}, {"run", "y"}, {"task", "z"}}, " t\n"}));
}

TEST(KnowledgeDedup, AFailureIsKnownPerTask) {
  testing::TempDir dir;
  KnowledgeBase first(dir / "knowledge", k_matmul_run1);
  first.add(KnowledgeKind::failed_attempt,
            KnowledgeEntry{"COMPILE_ERROR in c0004", {{"signature", "COMPILE_ERROR: x"}, {"candidate", "c0004"}}, ""});
  EXPECT_TRUE(first.has_failure("COMPILE_ERROR: x"));
  EXPECT_TRUE(KnowledgeBase(dir / "knowledge", k_matmul_run2).has_failure("COMPILE_ERROR: x"));
  EXPECT_FALSE(KnowledgeBase(dir / "knowledge", k_gemm_run).has_failure("COMPILE_ERROR: x"));
}

// "when TILE_N=64" is about host_matmul's TILE_N: another task with a param of that name is not screened by it,
// unless the entry says it holds everywhere.
TEST(KnowledgeScreening, ConstraintsScreenTheirOwnTaskAndGeneralOnesScreenEveryTask) {
  testing::TempDir dir;
  KnowledgeBase matmul(dir / "knowledge", k_matmul_run1);
  KnowledgeBase gemm(dir / "knowledge", k_gemm_run);
  matmul.add(
      KnowledgeKind::constraint,
      KnowledgeEntry{"when TILE_N=64: COMPILE_ERROR", {{"when", "TILE_N=64"}, {"signature", "COMPILE_ERROR"}}, ""});
  const std::map<std::string, std::string> params = {{"TILE_N", "64"}, {"STAGES", "4"}};
  ASSERT_TRUE(matmul.blocking_constraint(params).has_value());
  EXPECT_EQ(matmul.blocking_constraint(params)->title, "when TILE_N=64: COMPILE_ERROR");
  EXPECT_TRUE(KnowledgeBase(dir / "knowledge", k_matmul_run2).blocking_constraint(params).has_value());
  EXPECT_FALSE(gemm.blocking_constraint(params).has_value());
  EXPECT_EQ(matmul.constraint_conditions(), std::vector<std::string>{"TILE_N=64"});
  EXPECT_TRUE(gemm.constraint_conditions().empty());

  gemm.add(KnowledgeKind::constraint,
           KnowledgeEntry{"STAGES=4 never fits", {{"when", "STAGES=4"}, {"scope", "general"}}, ""});
  ASSERT_TRUE(matmul.blocking_constraint({{"TILE_N", "16"}, {"STAGES", "4"}}).has_value());
  EXPECT_EQ(matmul.constraint_conditions(), (std::vector<std::string>{"TILE_N=64", "STAGES=4"}));
  EXPECT_EQ(gemm.constraint_conditions(), std::vector<std::string>{"STAGES=4"});
  // A base without provenance (a tool without a run) sees every entry.
  EXPECT_EQ(KnowledgeBase(dir / "knowledge").constraint_conditions().size(), 2u);
}

// Files written before entries carried a task still parse; such an entry applied everywhere then and still does.
TEST(KnowledgeProvenance, LegacyEntriesWithoutATaskParseAndApplyEverywhere) {
  testing::TempDir dir;
  evoteam::create_directories(dir / "knowledge");
  write_file_atomic(dir / "knowledge" / "constraints.md",
                    "# Constraints\n\n## when A=1: COMPILE_ERROR\n- candidate: c0002\n- when: A=1\n\nold text\n\n");
  write_file_atomic(dir / "knowledge" / "failed_attempts.md",
                    "# Failed attempts\n\n## COMPILE_ERROR in c0002\n- signature: S\n\n");
  KnowledgeBase knowledge(dir / "knowledge", k_gemm_run);
  std::vector<KnowledgeEntry> constraints = knowledge.entries(KnowledgeKind::constraint);
  ASSERT_EQ(constraints.size(), 1u);
  EXPECT_EQ(constraints[0].fields.count("task"), 0u);
  EXPECT_EQ(constraints[0].text, "old text");
  EXPECT_TRUE(knowledge.blocking_constraint({{"A", "1"}}).has_value());
  EXPECT_TRUE(knowledge.has_failure("S"));
  EXPECT_NE(knowledge.digest(4000).find("when A=1"), std::string::npos);
  // A new entry with the legacy one's content is this task's: kept beside it, not taken for a repeat.
  EXPECT_TRUE(
      knowledge.add(KnowledgeKind::constraint,
                    KnowledgeEntry{"when A=1: COMPILE_ERROR", {{"candidate", "c0002"}, {"when", "A=1"}}, "old text"}));
}

// The digest a prompt gets is about the run's task: other tasks' entries stay out, and provenance that says
// nothing new (this task, this run) is left out of its lines.
TEST(KnowledgeProvenance, TheDigestShowsThisTasksEntriesAndNamesEarlierRuns) {
  testing::TempDir dir;
  KnowledgeBase(dir / "knowledge", k_gemm_run)
      .add(KnowledgeKind::strategy, KnowledgeEntry{"gemm stages 2→4", {{"param", "STAGES"}}, ""});
  KnowledgeBase(dir / "knowledge", k_matmul_run1)
      .add(KnowledgeKind::strategy, KnowledgeEntry{"matmul tile 16→64", {{"param", "TILE_N"}}, ""});
  KnowledgeBase second(dir / "knowledge", k_matmul_run2);
  second.add(KnowledgeKind::strategy, KnowledgeEntry{"matmul order 0→1", {{"param", "LOOP_ORDER"}}, ""});
  const std::string digest = second.digest(4000);
  EXPECT_EQ(digest.find("gemm stages"), std::string::npos) << digest;
  EXPECT_NE(digest.find("Validated strategies (2)"), std::string::npos) << digest;
  EXPECT_NE(digest.find("matmul tile 16→64; param=TILE_N; run=20250101T000000Z-host_matmul"), std::string::npos)
      << digest;
  EXPECT_NE(digest.find("matmul order 0→1; param=LOOP_ORDER\n"), std::string::npos) << digest;
  EXPECT_EQ(digest.find("task="), std::string::npos) << digest;
}

// The best kernel of each run outlives its run directory in the knowledge directory: files, params and meta.
TEST(KnowledgeBestKernel, TheRunsBestIsKeptPerTaskAndRunAndReplacedWhenTheBestChanges) {
  testing::TempDir dir;
  evoteam::create_directories(dir / "c0004");
  write_file_atomic(dir / "c0004" / "kernel.cpp", "// tiled\n");
  KnowledgeBase knowledge(dir / "knowledge", k_matmul_run1);
  knowledge.keep_best_kernel({dir / "c0004", {{"TILE_N", "64"}}, "c0004", 2.5});
  const std::filesystem::path kept = dir / "knowledge" / "best" / "host_matmul" / "20250101T000000Z-host_matmul";
  EXPECT_EQ(knowledge.kept_kernel_dir(), kept);
  EXPECT_EQ(read_file(kept / "src" / "kernel.cpp"), "// tiled\n");
  EXPECT_EQ(read_json_file(kept / "params.json"), nlohmann::json({{"TILE_N", "64"}}));
  nlohmann::json meta = read_json_file(kept / "meta.json");
  EXPECT_EQ(meta["candidate"], "c0004");
  EXPECT_EQ(meta["speedup"], 2.5);
  EXPECT_EQ(meta["task"], "host_matmul");
  EXPECT_EQ(meta["target"], "host");
  EXPECT_EQ(meta["run"], "20250101T000000Z-host_matmul");
  EXPECT_EQ(meta["params"], nlohmann::json({{"TILE_N", "64"}}));

  // The same best again writes nothing (its files are not read again); a new best replaces the whole folder.
  write_file_atomic(dir / "c0004" / "kernel.cpp", "// changed behind its back\n");
  knowledge.keep_best_kernel({dir / "c0004", {{"TILE_N", "64"}}, "c0004", 2.5});
  EXPECT_EQ(read_file(kept / "src" / "kernel.cpp"), "// tiled\n");
  evoteam::create_directories(dir / "c0009");
  write_file_atomic(dir / "c0009" / "other.cpp", "// better\n");
  knowledge.keep_best_kernel({dir / "c0009", {{"TILE_N", "256"}}, "c0009", std::nullopt});
  EXPECT_FALSE(std::filesystem::exists(kept / "src" / "kernel.cpp"));
  EXPECT_EQ(read_file(kept / "src" / "other.cpp"), "// better\n");
  EXPECT_TRUE(read_json_file(kept / "meta.json")["speedup"].is_null());
  EXPECT_FALSE(std::filesystem::exists(kept.string() + ".new"));
}

// The agents' knowledge tools on the run's knowledge base: notes land in the kind's file with their author,
// read back by topic; a topic the model made up is a tool error, not an error that ends the run.
TEST(KnowledgeTools, RecordAndReadThroughTheToolsOnTheRunsKnowledgeBase) {
  testing::TempDir dir;
  KnowledgeBase knowledge(dir / "knowledge");
  std::unique_ptr<KnowledgeAccess> access = make_knowledge_access(knowledge, "optimizer", 4000);
  Workspace workspace = Workspace::create(dir / "ws", {}, {});
  Toolbox tools(workspace, nullptr, access.get());
  ASSERT_EQ(tools.call("record_knowledge", {{"kind", "failed_attempt"}, {"text", "tile 64\nspills registers"}}).status,
            ToolStatus::ok);
  ASSERT_EQ(tools.call("record_knowledge", {{"kind", "strategy"}, {"text", "tile 16 wins 1.5x"}}).status,
            ToolStatus::ok);
  const std::string failures = read_file(dir / "knowledge/failed_attempts.md");
  EXPECT_NE(failures.find("## tile 64\n- author: optimizer\n"), std::string::npos) << failures;
  EXPECT_NE(failures.find("spills registers"), std::string::npos) << failures;
  const std::string strategies = tools.call("read_knowledge", {{"topic", "strategy"}}).content;
  EXPECT_NE(strategies.find("tile 16 wins"), std::string::npos) << strategies;
  EXPECT_EQ(strategies.find("tile 64"), std::string::npos) << strategies;
  EXPECT_EQ(tools.call("read_knowledge", {{"topic", "gossip"}}).status, ToolStatus::failed);
}

// read_knowledge by topic, like the digest, gives the run's task's entries: another task's would mislead.
TEST(KnowledgeTools, ReadingATopicGivesTheRunsTaskEntriesWithTheirProvenance) {
  testing::TempDir dir;
  KnowledgeBase gemm(dir / "knowledge", k_gemm_run);
  KnowledgeBase matmul(dir / "knowledge", k_matmul_run1);
  make_knowledge_access(gemm, "optimizer", 4000, "c0002")->record("strategy", "gemm: 4 stages win");
  make_knowledge_access(matmul, "optimizer", 4000, "c0002")->record("strategy", "matmul: tile 64 wins");
  const std::string read = make_knowledge_access(matmul, "debugger", 4000)->read("strategy");
  EXPECT_NE(read.find("matmul: tile 64 wins"), std::string::npos) << read;
  EXPECT_NE(read.find("- task: host_matmul"), std::string::npos) << read;
  EXPECT_EQ(read.find("gemm"), std::string::npos) << read;
}

// The kinds the record_knowledge tool offers are exactly the kinds the knowledge base keeps.
TEST(KnowledgeTools, EveryToolKindIsAKnowledgeBaseKind) {
  for (const std::string& kind : knowledge_kinds()) EXPECT_NO_THROW(knowledge_kind_from_string(kind)) << kind;
}

}  // namespace
}  // namespace evoteam
