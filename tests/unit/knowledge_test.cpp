// Knowledge base: structured Markdown round-trips, failures are found by signature, the digest is bounded.
#include <gtest/gtest.h>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/team/knowledge.hpp>
#include <evoteam/team/llm_team.hpp>
#include <evoteam/agent/tools.hpp>

#include "support/temp_dir.hpp"
#include <evoteam/agent/workspace.hpp>

namespace evoteam {
namespace {

TEST(Knowledge, MarkdownFormatParseRoundTrip) {
  KnowledgeEntry first{"tile 16→32: 1.40x", {{"param", "tile"}, {"to", "32"}, {"candidate", "c0007"}},
                       "Measured on all workloads.\nSecond line: with a colon."};
  KnowledgeEntry second{"no fields", {}, ""};
  std::string text = "# Validated strategies\n\npreamble text\n\n" + format_knowledge_entry(first) +
                     format_knowledge_entry(second);
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
  knowledge.add(KnowledgeKind::failed_attempt,
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
    knowledge.add(KnowledgeKind::strategy, KnowledgeEntry{"strategy number " + n + " with a long descriptive title",
                                                          {{"param", "p" + n}}, ""});
    knowledge.add(KnowledgeKind::constraint, KnowledgeEntry{"constraint number " + n + " with a long title",
                                                            {{"when", "p" + n + "=1"}}, ""});
    knowledge.add(KnowledgeKind::failed_attempt, KnowledgeEntry{"failure number " + n + " with a long title",
                                                                {{"signature", "S" + n}}, ""});
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
  ASSERT_EQ(tools.call("record_knowledge", {{"kind", "strategy"}, {"text", "tile 16 wins 1.5x"}}).status, ToolStatus::ok);
  const std::string failures = read_file(dir / "knowledge/failed_attempts.md");
  EXPECT_NE(failures.find("## tile 64\n- author: optimizer\n"), std::string::npos) << failures;
  EXPECT_NE(failures.find("spills registers"), std::string::npos) << failures;
  const std::string strategies = tools.call("read_knowledge", {{"topic", "strategy"}}).content;
  EXPECT_NE(strategies.find("tile 16 wins"), std::string::npos) << strategies;
  EXPECT_EQ(strategies.find("tile 64"), std::string::npos) << strategies;
  EXPECT_EQ(tools.call("read_knowledge", {{"topic", "gossip"}}).status, ToolStatus::failed);
}

// The kinds the record_knowledge tool offers are exactly the kinds the knowledge base keeps.
TEST(KnowledgeTools, EveryToolKindIsAKnowledgeBaseKind) {
  for (const std::string& kind : knowledge_kinds()) EXPECT_NO_THROW(knowledge_kind_from_string(kind)) << kind;
}

}  // namespace
}  // namespace evoteam
