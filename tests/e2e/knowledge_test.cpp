// Knowledge across runs, end to end with the builtin team on kernels/host_matmul: a second run on the same
// --knowledge directory reads what the first recorded (run.json "knowledge"), `--from RUN` starts it from the
// first run's best kernel, and a run of another task sharing the directory is neither screened by the first
// task's entries nor accepted as a --from.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include <evoteam/core/fs.hpp>
#include <evoteam/team/knowledge.hpp>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "support/test_cache.hpp"

namespace evoteam {
namespace {

using namespace evoteam::testing;

const KnowledgeKind k_entry_kinds[] = {KnowledgeKind::strategy, KnowledgeKind::failed_attempt, KnowledgeKind::hardware,
                                       KnowledgeKind::constraint};

// Every entry of the knowledge directory, of the kinds a run screens and advises with.
std::vector<KnowledgeEntry> all_entries(const std::filesystem::path& knowledge_dir) {
  std::vector<KnowledgeEntry> all;
  for (KnowledgeKind kind : k_entry_kinds) {
    std::vector<KnowledgeEntry> list = KnowledgeBase(knowledge_dir).entries(kind);
    all.insert(all.end(), list.begin(), list.end());
  }
  return all;
}

std::size_t entries_of_task(const std::filesystem::path& knowledge_dir, const std::string& task) {
  std::size_t count = 0;
  for (const KnowledgeEntry& entry : all_entries(knowledge_dir)) count += applies_to_task(entry, task) ? 1 : 0;
  return count;
}

nlohmann::json record_of(const std::filesystem::path& run_dir, const std::string& candidate) {
  for (const nlohmann::json& record : evaluations(run_dir))
    if (record.value("candidate_id", "") == candidate) return record;
  return nullptr;
}

// host_matmul under another name: a second host task whose params share every name with the first.
std::filesystem::path other_task(const std::filesystem::path& dir) {
  const std::filesystem::path task = dir / "other_matmul";
  copy_tree(k_task, task);
  std::string text = read_file(task / "task.json");
  const std::string name = "\"name\": \"host_matmul\"";
  text.replace(text.find(name), name.size(), "\"name\": \"other_matmul\"");
  write_file_atomic(task / "task.json", text);
  return task;
}

TEST(KnowledgeE2E, ASecondRunReadsWhatTheFirstLearnedAndStartsFromItsBest) {
  testing::TempDir dir;
  const std::filesystem::path knowledge = dir / "knowledge";
  const std::filesystem::path runs = dir / "runs";
  // A cache in the build tree, shared with ReportE2E (the same builtin team on the same task): after the first run
  // of either, evaluations are served from it.
  const std::string cache =
      "eval.cache_dir=" + (testing::test_cache_root() / "test-cache/host-matmul-builtin").string();
  auto optimize = [&](const std::filesystem::path& task, const std::filesystem::path& runs_dir,
                      std::vector<std::string> extra) {
    std::vector<std::string> args = {"--set",   cache,        "optimize",        task.string(), "--provider",
                                     "builtin", "--runs-dir", runs_dir.string(), "--knowledge", knowledge.string(),
                                     "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_evoteam(args, std::chrono::seconds(400));
  };

  // The first run learns: every entry it leaves names its task, target and run; its best kernel is kept.
  ProcessResult first = optimize(k_task, runs, {"--max-cycles", "2"});
  ASSERT_TRUE(first.ok()) << describe(first);
  const nlohmann::json first_summary = parse_stdout(first);
  const std::filesystem::path first_dir = first_summary["run_dir"].get<std::string>();
  const std::string first_id = first_dir.filename().string();
  const std::string best = first_summary["best_candidate"];
  const std::vector<KnowledgeEntry> learned = all_entries(knowledge);
  ASSERT_FALSE(learned.empty()) << "the first run recorded no knowledge";
  for (const KnowledgeEntry& entry : learned) {
    EXPECT_EQ(entry.fields.count("task") ? entry.fields.at("task") : "", "host_matmul") << entry.title;
    EXPECT_EQ(entry.fields.count("target") ? entry.fields.at("target") : "", "host") << entry.title;
    EXPECT_EQ(entry.fields.count("run") ? entry.fields.at("run") : "", first_id) << entry.title;
  }
  const std::filesystem::path kept = knowledge / "best" / "host_matmul" / first_id;
  ASSERT_TRUE(std::filesystem::exists(kept / "meta.json")) << kept;
  EXPECT_EQ(read_json_file(kept / "meta.json")["candidate"], best);
  EXPECT_EQ(read_file(kept / "src" / "kernel.cpp"), read_file(first_dir / "candidates" / best / "src" / "kernel.cpp"));
  const nlohmann::json first_best = record_of(first_dir, best);
  ASSERT_TRUE(first_best.is_object());
  EXPECT_EQ(read_json_file(kept / "params.json"), first_best["params"]);

  // The second run, by id under the runs dir: it starts from the first run's best and reads its knowledge.
  ProcessResult second = optimize(k_task, runs, {"--max-cycles", "1", "--from", first_id});
  ASSERT_TRUE(second.ok()) << describe(second);
  const std::filesystem::path second_dir = parse_stdout(second)["run_dir"].get<std::string>();
  const nlohmann::json run_json = read_json_file(second_dir / "run.json");
  EXPECT_EQ(run_json["from"], first_id);
  EXPECT_EQ(run_json["knowledge"]["entries_of_this_task_at_start"], learned.size()) << run_json["knowledge"].dump();
  EXPECT_EQ(run_json["knowledge"]["entries_at_start"], learned.size()) << run_json["knowledge"].dump();
  const nlohmann::json head = record_of(second_dir, "c0001");
  ASSERT_TRUE(head.is_object());
  EXPECT_EQ(head["author_role"], "start");
  EXPECT_EQ(head["params"], first_best["params"]);
  EXPECT_EQ(head["sources_hash"], first_best["sources_hash"]);
  EXPECT_EQ(read_file(second_dir / "candidates" / "c0001" / "src" / "kernel.cpp"),
            read_file(first_dir / "candidates" / best / "src" / "kernel.cpp"));
  ASSERT_TRUE(head["speedup"].is_number()) << head.dump();
  // Measured again: not the starting kernel's 1x but about the first run's best (timing noise allowed).
  EXPECT_GT(head["speedup"].get<double>(), 0.6 * first_summary["best_speedup"].get<double>()) << head.dump();
  // Whatever both runs recorded, nothing is recorded twice.
  std::set<std::string> contents;
  for (KnowledgeKind kind : k_entry_kinds)
    for (KnowledgeEntry entry : KnowledgeBase(knowledge).entries(kind))
      EXPECT_TRUE(contents.insert(file_name(kind) + entry.fields["task"] + content_hash(entry)).second) << entry.title;

  // Another task sharing the directory sees the entries but is screened by none of them.
  const std::filesystem::path other = other_task(dir.path());
  ProcessResult third = optimize(other, runs, {"--max-cycles", "1", "--budget-evaluations", "2"});
  ASSERT_TRUE(third.ok()) << describe(third);
  const std::filesystem::path third_dir = parse_stdout(third)["run_dir"].get<std::string>();
  const nlohmann::json third_knowledge = read_json_file(third_dir / "run.json")["knowledge"];
  EXPECT_EQ(third_knowledge["entries_of_this_task_at_start"], 0) << third_knowledge.dump();
  EXPECT_EQ(third_knowledge["entries_at_start"], entries_of_task(knowledge, "host_matmul")) << third_knowledge.dump();
  EXPECT_TRUE(std::filesystem::exists(knowledge / "best" / "other_matmul" / third_dir.filename() / "meta.json"));

  // A --from of another task's run, or of no run, is invalid input that leaves no run behind.
  const std::filesystem::path refused_runs = dir / "refused";
  ProcessResult wrong_task = optimize(k_task, refused_runs, {"--max-cycles", "1", "--from", third_dir.string()});
  EXPECT_EQ(wrong_task.exit_code, 3) << describe(wrong_task);
  EXPECT_NE(wrong_task.err.text.find("optimised task 'other_matmul', not 'host_matmul'"), std::string::npos)
      << describe(wrong_task);
  ProcessResult no_run = optimize(k_task, refused_runs, {"--max-cycles", "1", "--from", "no-such-run"});
  EXPECT_EQ(no_run.exit_code, 3) << describe(no_run);
  EXPECT_FALSE(only_run(refused_runs).has_value());
  EXPECT_FALSE(std::filesystem::exists(refused_runs));
}

}  // namespace
}  // namespace evoteam
