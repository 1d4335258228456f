// Loading and validating task directories: the shipped task loads; every kind of mistake is reported with the
// file and the field.
#include <evoteam/core/config.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/task/task.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using evoteam::InvalidInput;
using evoteam::Task;
using evoteam::testing::TempDir;

nlohmann::json minimal_task() {
  return nlohmann::json::parse(R"json({
    "name": "t", "target": "host",
    "axes": {"N": {"type": "var"}, "H": {"type": "const", "value": 4}},
    "inputs": {"x": {"dtype": "float32", "shape": ["N", "H"]}},
    "outputs": {"y": {"dtype": "float32", "shape": ["N"]}},
    "entry": {"name": "rowsum", "args": ["x", "y", "N", "H"]},
    "reference": "reference.cpp",
    "kernel": {"files": ["kernel.cpp"]},
    "workloads": [{"name": "w", "axes": {"N": 16}}],
    "flops": "N * H", "bytes": "4 * (N * H + N)"
  })json");
}

void write_task(const fs::path& dir, const nlohmann::json& task) {
  fs::create_directories(dir);
  evoteam::write_file_atomic(dir / "reference.cpp", "// reference\n");
  evoteam::write_file_atomic(dir / "kernel.cpp", "// kernel\n");
  evoteam::write_json_atomic(dir / "task.json", task);
}

// The message of the InvalidInput that loading `task` throws ("" if it loads).
std::string load_error(const nlohmann::json& task) {
  TempDir dir;
  write_task(dir.path(), task);
  try {
    evoteam::load_task(dir.path());
  } catch (const InvalidInput& error) {
    return error.what();
  }
  return "";
}

TEST(TaskLoader, LoadsTheShippedHostMatmulTask) {
  Task task = evoteam::load_task(evoteam::install_root() / "kernels" / "host_matmul");
  EXPECT_EQ(task.name, "host_matmul");
  EXPECT_EQ(task.target, evoteam::Target::host);
  EXPECT_EQ(task.entry.name, "matmul");
  EXPECT_EQ(task.workloads.size(), 3u);
  EXPECT_EQ(task.kernel_files, std::vector<std::string>{"kernel.cpp"});
  EXPECT_EQ(task.baseline.kind, evoteam::BaselineKind::starting);
  EXPECT_EQ(task.content_hash.size(), 64u);
  auto axes = evoteam::workload_axes(task, task.workloads[0]);
  EXPECT_DOUBLE_EQ(evoteam::workload_flops(task, axes), 2.0 * 512 * 512 * 512);
  EXPECT_EQ(evoteam::tensor_elements(*task.find_tensor("C"), axes), 512 * 512);
}

TEST(TaskLoader, AcceptsAMinimalTaskAndFillsDefaults) {
  TempDir dir;
  write_task(dir.path(), minimal_task());
  Task task = evoteam::load_task(dir.path());
  EXPECT_EQ(task.axes.size(), 2u);
  EXPECT_TRUE(task.find_axis("H")->is_const);
  EXPECT_EQ(task.tolerances.at("y").normwise, 1e-5);
  EXPECT_EQ(evoteam::workload_axes(task, task.workloads[0]).at("H"), 4);
  EXPECT_TRUE(task.deterministic);
  EXPECT_EQ(evoteam::param_space(task).size(), 1u);  // no params: the one empty assignment
}

TEST(TaskLoader, ReportsFileAndFieldForEveryMistake) {
  struct Case {
    const char* what;
    std::function<void(nlohmann::json&)> edit;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"missing name", [](auto& t) { t.erase("name"); }, "name: missing"},
      {"unknown field", [](auto& t) { t["colour"] = "red"; }, "colour: unknown field"},
      {"bad target", [](auto& t) { t["target"] = "fpga"; }, "target: must be"},
      {"cuda without archs", [](auto& t) { t["target"] = "cuda"; }, "archs: missing"},
      {"bad arch",
       [](auto& t) {
         t["target"] = "cuda";
         t["archs"] = {"volta"};
       },
       "archs[0]"},
      {"archs on host", [](auto& t) { t["archs"] = {"sm_90a"}; }, "archs: only cuda"},
      {"unknown dtype", [](auto& t) { t["inputs"]["x"]["dtype"] = "float7"; }, "inputs.x.dtype: unknown dtype"},
      {"cuda dtype on host", [](auto& t) { t["inputs"]["x"]["dtype"] = "bfloat16"; }, "cuda tasks only"},
      {"unknown axis in shape",
       [](auto& t) {
         t["inputs"]["x"]["shape"] = {"N", "Q"};
       },
       "inputs.x.shape[1]"},
      {"entry misses a tensor",
       [](auto& t) {
         t["entry"]["args"] = {"x", "N"};
       },
       "tensor \"y\" is not passed"},
      {"entry names nothing", [](auto& t) { t["entry"]["args"].push_back("zz"); }, "entry.args[4]"},
      {"missing reference file", [](auto& t) { t["reference"] = "nope.cpp"; }, "reference: no such file"},
      {"reference outside", [](auto& t) { t["reference"] = "../x.cpp"; }, "relative path inside"},
      {"workload misses axis", [](auto& t) { t["workloads"][0]["axes"].erase("N"); }, "missing var axis \"N\""},
      {"workload sets const", [](auto& t) { t["workloads"][0]["axes"]["H"] = 3; }, "const axis"},
      {"workload violates constraint", [](auto& t) { t["constraints"] = {"N % 32 == 0"}; }, "violates constraint"},
      {"no workloads", [](auto& t) { t["workloads"] = nlohmann::json::array(); }, "at least one workload"},
      {"tolerance on input",
       [](auto& t) {
         t["tolerances"] = {{"x", {{"rtol", 1}}}};
       },
       "tolerances.x: not an output"},
      {"default not a value",
       [](auto& t) {
         t["params"] = {{{"name", "T"}, {"values", {1, 2}}, {"default", 3}}};
       },
       "params[0].default"},
      {"param value with spaces",
       [](auto& t) {
         t["params"] = {{{"name", "T"}, {"values", {"a b"}}, {"default", "a b"}}};
       },
       "not a plain token"},
      {"default violates constraint",
       [](auto& t) {
         t["params"] = {{{"name", "T"}, {"values", {1, 2}}, {"default", 1}}};
         t["param_constraints"] = {"T > 1"};
       },
       "default params violate"},
      {"bad static scope",
       [](auto& t) {
         t["static_constraints"] = {{{"scope", "ptx"}, {"forbid", "x"}}};
       },
       "not a scope for target host"},
      {"bad regex",
       [](auto& t) {
         t["static_constraints"] = {{{"scope", "source"}, {"forbid", "("}}};
       },
       "invalid regex"},
      {"archs on a host constraint",
       [](auto& t) {
         t["static_constraints"] = {{{"scope", "disassembly"}, {"require", "x"}, {"archs", {"sm_90a"}}}};
       },
       "static_constraints[0].archs: only cuda tasks scope constraints to archs"},
      {"once adopted forbid",
       [](auto& t) {
         t["static_constraints"] = {{{"scope", "source"}, {"forbid", "x"}, {"once_adopted", true}}};
       },
       "static_constraints[0].once_adopted: only a \"require\""},
      {"constraint name twice",
       [](auto& t) {
         t["static_constraints"] = {{{"name", "a"}, {"scope", "source"}, {"forbid", "x"}},
                                    {{"name", "a"}, {"scope", "symbols"}, {"forbid", "y"}}};
       },
       "static_constraints[1].name: \"a\" is used twice"},
      {"tensor cores on host", [](auto& t) { t["expects_tensor_cores"] = true; },
       "expects_tensor_cores: only cuda tasks"},
      {"library baseline without file",
       [](auto& t) {
         t["baseline"] = {{"kind", "library"}, {"name", "blas"}};
       },
       "baseline.file: missing"},
      {"hook without hooks file", [](auto& t) { t["inputs"]["x"]["generate"] = "hook:idx"; }, "needs \"hooks\""},
      {"empty shape", [](auto& t) { t["inputs"]["x"]["shape"] = nlohmann::json::array(); },
       "inputs.x.shape: must list"},
      {"entry named main", [](auto& t) { t["entry"]["name"] = "main"; }, "entry.name: \"main\" is already defined"},
      {"entry named memcpy", [](auto& t) { t["entry"]["name"] = "memcpy"; },
       "entry.name: \"memcpy\" is already defined"},
      {"param mixing numbers and strings",
       [](auto& t) {
         t["params"] = {{{"name", "T"}, {"values", {8, "16"}}, {"default", 8}}};
       },
       "params[0].values: mixes numbers and strings"},

      // Sizes past what any machine holds, said as numbers (not "9223372036854775808.000000, not a size") and never
      // wrapped into a small or negative count.
      {"extent past 1e15", [](auto& t) { t["workloads"][0]["axes"]["N"] = 9223372036854775807LL; },
       "'N' gives 9.22337e+18, above 1e15: too large for a size"},
      {"elements past 1e15",
       [](auto& t) {
         t["axes"]["H"]["value"] = 100000000;
         t["workloads"][0]["axes"]["N"] = 100000000;
       },
       "tensor x: more than 1e15 elements"},
      {"unsigned past int64", [](auto& t) { t["axes"]["H"]["value"] = 18446744073709551615ULL; },
       "axes.H.value: must be an integer up to 9223372036854775807, got 18446744073709551615"},
  };
  for (const Case& c : cases) {
    nlohmann::json task = minimal_task();
    c.edit(task);
    const std::string message = load_error(task);
    EXPECT_NE(message.find("task.json"), std::string::npos) << c.what << ": " << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.what << ": " << message;
  }
}

// A kernel file that is a link to a file outside the task is refused at load, like a ".." path.
TEST(TaskLoader, RefusesAKernelFileThatIsALinkOutOfTheTask) {
  TempDir dir;
  write_task(dir / "task", minimal_task());
  evoteam::write_file_atomic(dir / "outside.cpp", "// not the task's\n");
  fs::remove(dir / "task" / "kernel.cpp");
  fs::create_symlink(dir / "outside.cpp", dir / "task" / "kernel.cpp");
  try {
    evoteam::load_task(dir / "task");
    FAIL() << "loaded a task whose kernel file links out of it";
  } catch (const InvalidInput& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("kernel.files"), std::string::npos) << message;
    EXPECT_NE(message.find("not a link"), std::string::npos) << message;
  }
}

TEST(TaskLoader, ReadsWorkloadsFromAJsonLinesFile) {
  TempDir dir;
  nlohmann::json task = minimal_task();
  task["workloads"] = "workloads.jsonl";
  write_task(dir.path(), task);
  evoteam::write_file_atomic(dir / "workloads.jsonl",
                             "{\"name\": \"a\", \"axes\": {\"N\": 8}}\n\n{\"axes\": {\"N\": 64}}\n");
  Task loaded = evoteam::load_task(dir.path());
  ASSERT_EQ(loaded.workloads.size(), 2u);
  EXPECT_EQ(loaded.workloads[1].name, "w1");
  EXPECT_EQ(loaded.workloads[1].axes.at("N"), 64);
  evoteam::write_file_atomic(dir / "workloads.jsonl", "{\"axes\": {\"N\": 8}}\nnot json\n");
  try {
    evoteam::load_task(dir.path());
    FAIL() << "a broken workloads line must be rejected";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("workloads.jsonl: line 2"), std::string::npos) << error.what();
  }
}

TEST(TaskLoader, AcceptsACudaTaskWithArchs) {
  nlohmann::json task = minimal_task();
  task["target"] = "cuda";
  task["archs"] = {"sm_90a", "sm_100a"};
  task["inputs"]["x"]["dtype"] = "bfloat16";
  TempDir dir;
  write_task(dir.path(), task);
  fs::rename(dir / "kernel.cpp", dir / "kernel.cu");
  task["kernel"]["files"] = {"kernel.cu"};
  evoteam::write_json_atomic(dir / "task.json", task);
  Task loaded = evoteam::load_task(dir.path());
  EXPECT_EQ(loaded.target, evoteam::Target::cuda);
  EXPECT_EQ(loaded.archs, (std::vector<std::string>{"sm_90a", "sm_100a"}));
}

// A cuda task's constraint may hold for some archs only, and may be kept once adopted; both are checked against
// the rest of the task at load.
TEST(TaskLoader, ReadsPerArchAndOnceAdoptedConstraintsOfACudaTask) {
  nlohmann::json task = minimal_task();
  task["target"] = "cuda";
  task["archs"] = {"sm_90a", "sm_100a"};
  task["kernel"]["files"] = {"kernel.cu"};
  task["expects_tensor_cores"] = true;
  task["static_constraints"] = {{{"name", "wgmma"},
                                 {"scope", "ptx"},
                                 {"require", "wgmma\\.mma_async"},
                                 {"archs", {"sm_90a"}},
                                 {"once_adopted", true},
                                 {"message", "keep wgmma"}},
                                {{"name", "no_printf"}, {"scope", "sass"}, {"forbid", "printf"}}};
  const auto load = [](const nlohmann::json& edited) {
    TempDir dir;
    write_task(dir.path(), edited);
    evoteam::write_file_atomic(dir / "kernel.cu", "// kernel\n");
    return evoteam::load_task(dir.path());
  };
  const Task loaded = load(task);
  ASSERT_EQ(loaded.static_constraints.size(), 2u);
  EXPECT_EQ(loaded.static_constraints[0].archs, std::vector<std::string>{"sm_90a"});
  EXPECT_TRUE(loaded.static_constraints[0].once_adopted);
  EXPECT_TRUE(loaded.static_constraints[0].required);
  EXPECT_TRUE(loaded.static_constraints[1].archs.empty());
  EXPECT_FALSE(loaded.static_constraints[1].once_adopted);
  EXPECT_TRUE(loaded.expects_tensor_cores);
  const std::string described = evoteam::describe_static_constraints(loaded);
  EXPECT_NE(described.find("required once adopted (wgmma) [sm_90a]: keep wgmma"), std::string::npos) << described;

  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> mistakes = {
      {[](auto& t) { t["static_constraints"][0]["archs"] = {"sm_80"}; },
       "static_constraints[0].archs[0]: \"sm_80\" is not one of the task's archs (sm_90a, sm_100a)"},
      {[](auto& t) { t["static_constraints"][0]["archs"] = nlohmann::json::array(); },
       "static_constraints[0].archs: name at least one"},
      {[](auto& t) { t["static_constraints"][0]["scope"] = "source"; }, "archs apply to the ptx and sass scopes only"},
      {[](auto& t) { t["static_constraints"][0]["once_adopted"] = "yes"; }, "static_constraints[0].once_adopted"},
  };
  for (const auto& [edit, expected] : mistakes) {
    nlohmann::json edited = task;
    edit(edited);
    try {
      load(edited);
      ADD_FAILURE() << "loaded despite: " << expected;
    } catch (const InvalidInput& error) {
      EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
    }
  }
}

TEST(TaskExpression, EvaluatesShapeArithmetic) {
  std::map<std::string, double> vars = {{"M", 100}, {"T", 32}};
  EXPECT_DOUBLE_EQ(evoteam::evaluate_expression("cdiv(M, T) * T", vars, "w"), 128);
  EXPECT_DOUBLE_EQ(evoteam::evaluate_expression("M % T", vars, "w"), 4);
  EXPECT_DOUBLE_EQ(evoteam::evaluate_expression("floor(M / T) + ceil(M / T)", vars, "w"), 7);
  EXPECT_DOUBLE_EQ(evoteam::evaluate_expression("M > 64 && T == 32", vars, "w"), 1);
  EXPECT_DOUBLE_EQ(evoteam::evaluate_expression("max(M, T) - min(M, T)", vars, "w"), 68);
  EXPECT_THROW(evoteam::evaluate_expression("M +", vars, "w"), InvalidInput);
  EXPECT_THROW(evoteam::evaluate_expression("Q * 2", vars, "w"), InvalidInput);
  EXPECT_THROW(evoteam::evaluate_expression("M / 0", vars, "w"), InvalidInput);
}

TEST(TaskParams, EnumeratesTheHostMatmulSpaceUnderItsConstraint) {
  Task task = evoteam::load_task(evoteam::install_root() / "kernels" / "host_matmul");
  std::vector<evoteam::ParamAssignment> space = evoteam::param_space(task);
  EXPECT_EQ(space.size(), 60u);
  for (const auto& params : space) {
    EXPECT_FALSE(evoteam::param_error(task, params).has_value()) << evoteam::describe_params(params);
    EXPECT_TRUE(params.at("ACC_IN_REGISTERS") == "1" || params.at("REG_ROWS") == "1");
  }
  evoteam::ParamAssignment defaults = evoteam::default_params(task);
  EXPECT_EQ(defaults.at("ACC_IN_REGISTERS"), "0");
  EXPECT_NE(std::find(space.begin(), space.end(), defaults), space.end());
}

TEST(TaskParams, ExplainsInvalidAssignments) {
  Task task = evoteam::load_task(evoteam::install_root() / "kernels" / "host_matmul");
  EXPECT_NE(evoteam::param_error(task, {{"NOPE", "1"}})->find("unknown param"), std::string::npos);
  EXPECT_NE(evoteam::param_error(task, {{"TILE_N", "100"}})->find("not one of the declared values"), std::string::npos);
  EXPECT_NE(evoteam::param_error(task, {{"REG_ROWS", "4"}})->find("param constraint"), std::string::npos);
  EXPECT_NE(evoteam::param_error(task, {{"ACC_IN_REGISTERS", "1"}})->find("TILE_N >= REG_COLS"), std::string::npos);
  EXPECT_FALSE(
      evoteam::param_error(task, {{"ACC_IN_REGISTERS", "1"}, {"REG_ROWS", "2"}, {"TILE_N", "64"}}).has_value());
  EXPECT_EQ(evoteam::complete_params(task, {{"TILE_N", "256"}}).at("TILE_K"), "32");
}

// A workload's "origin" is "published" or "ours" (the default); a published one names its source.
TEST(TaskWorkloads, ReadsOriginAndSource) {
  TempDir dir;
  nlohmann::json task = minimal_task();
  task["workloads"] = nlohmann::json::parse(R"([
    {"name": "a", "axes": {"N": 8}},
    {"name": "b", "origin": "ours", "axes": {"N": 16}},
    {"name": "c", "origin": "published", "source": "e2142798-a0ce-49dd-9eaa-72727ad69f0f", "axes": {"N": 32}}
  ])");
  write_task(dir.path(), task);
  const Task loaded = evoteam::load_task(dir.path());
  ASSERT_EQ(loaded.workloads.size(), 3u);
  EXPECT_EQ(loaded.workloads[0].origin, evoteam::WorkloadOrigin::ours);
  EXPECT_EQ(loaded.workloads[1].origin, evoteam::WorkloadOrigin::ours);
  EXPECT_EQ(loaded.workloads[2].origin, evoteam::WorkloadOrigin::published);
  EXPECT_EQ(loaded.workloads[2].source, "e2142798-a0ce-49dd-9eaa-72727ad69f0f");
  EXPECT_TRUE(loaded.workloads[0].source.empty());
}

TEST(TaskWorkloads, RefusesABadOriginNamingTheFileAndTheField) {
  struct Case {
    nlohmann::json workload;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {{{"axes", {{"N", 8}}}, {"origin", "theirs"}},
       "workloads[0].origin: \"theirs\" is not one of \"published\", \"ours\""},
      {{{"axes", {{"N", 8}}}, {"origin", 3}}, "workloads[0].origin"},
      {{{"axes", {{"N", 8}}}, {"origin", "published"}}, "workloads[0].source"},
      {{{"axes", {{"N", 8}}}, {"origin", "published"}, {"source", ""}}, "workloads[0].source: must not be empty"},
      {{{"axes", {{"N", 8}}}, {"provenance", "x"}}, "workloads[0].provenance"},
  };
  for (const Case& c : cases) {
    nlohmann::json task = minimal_task();
    task["workloads"] = nlohmann::json::array({c.workload});
    const std::string error = load_error(task);
    EXPECT_NE(error.find("task.json"), std::string::npos) << error;
    EXPECT_NE(error.find(c.expected), std::string::npos) << c.workload.dump() << " -> " << error;
  }
}

TEST(TaskWorkloads, SelectsByOriginAndKeepsSelectionsApartInTheContentHash) {
  TempDir dir;
  nlohmann::json task = minimal_task();
  task["workloads"] = nlohmann::json::parse(R"([
    {"name": "ours", "axes": {"N": 8}},
    {"name": "pub1", "origin": "published", "source": "u1", "axes": {"N": 16}},
    {"name": "pub2", "origin": "published", "source": "u2", "axes": {"N": 32}}
  ])");
  write_task(dir.path(), task);
  const Task loaded = evoteam::load_task(dir.path());
  Task all = loaded, published = loaded, ours = loaded;
  evoteam::select_workloads(all, evoteam::WorkloadSelection::all);
  evoteam::select_workloads(published, evoteam::WorkloadSelection::published);
  evoteam::select_workloads(ours, evoteam::WorkloadSelection::ours);
  EXPECT_EQ(all.workloads.size(), 3u);
  ASSERT_EQ(published.workloads.size(), 2u);
  EXPECT_EQ(published.workloads[0].name, "pub1");
  ASSERT_EQ(ours.workloads.size(), 1u);
  EXPECT_EQ(ours.workloads[0].name, "ours");
  EXPECT_EQ(all.content_hash, loaded.content_hash);
  EXPECT_NE(published.content_hash, loaded.content_hash);
  EXPECT_NE(ours.content_hash, loaded.content_hash);
  EXPECT_NE(ours.content_hash, published.content_hash);

  // Only our workloads: choosing them changes nothing; choosing published ones is refused, naming the task.
  Task only_ours = evoteam::load_task(dir.path());
  only_ours.workloads.resize(1);
  const std::string hash = only_ours.content_hash;
  evoteam::select_workloads(only_ours, evoteam::WorkloadSelection::ours);
  EXPECT_EQ(only_ours.content_hash, hash);
  try {
    evoteam::select_workloads(only_ours, evoteam::WorkloadSelection::published);
    FAIL() << "a task without published workloads cannot run only those";
  } catch (const InvalidInput& error) {
    EXPECT_EQ(error.code(), evoteam::ExitCode::invalid_input);
    EXPECT_NE(std::string(error.what()).find("task t"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("--workloads published"), std::string::npos) << error.what();
  }
  for (const char* text : {"all", "published", "ours"})
    EXPECT_EQ(evoteam::to_string(*evoteam::parse_workload_selection(text)), text);
  EXPECT_FALSE(evoteam::parse_workload_selection("theirs").has_value());
}

// The shipped tasks that follow a FlashInfer-Trace definition carry the workloads published for it, kept
// verbatim in <task>/published/<definition>.jsonl: every published line is a workload of the task with the same
// axes (len_indptr is batch_size + 1 here), none is left out, and each fits in device memory.
struct PublishedTask {
  const char* task;
  const char* definition;
  std::size_t published;
  std::size_t ours;
};

const std::vector<PublishedTask> k_published_tasks = {
    {"gqa_paged_decode_h32_kv8_d128_ps1", "gqa_paged_decode_h32_kv8_d128_ps1", 48, 6},
    {"mla_paged_decode_h16_ckv512_kpe64_ps1", "mla_paged_decode_h16_ckv512_kpe64_ps1", 47, 6},
    {"gemm_bf16", "gemm_n4096_k4096", 43, 6},
    {"gemm_bf16_wgmma", "gemm_n4096_k4096", 43, 6},
};

std::size_t count_origin(const Task& task, evoteam::WorkloadOrigin origin) {
  return static_cast<std::size_t>(std::count_if(task.workloads.begin(), task.workloads.end(),
                                                [&](const evoteam::Workload& w) { return w.origin == origin; }));
}

TEST(TaskPublishedWorkloads, EveryShippedTaskCarriesItsPublishedFileLineForLine) {
  for (const PublishedTask& expected : k_published_tasks) {
    SCOPED_TRACE(expected.task);
    const fs::path dir = evoteam::install_root() / "kernels" / expected.task;
    const Task task = evoteam::load_task(dir);
    const fs::path published_dir = dir / "published";
    EXPECT_TRUE(fs::is_regular_file(published_dir / "LICENSE"));
    EXPECT_TRUE(fs::is_regular_file(published_dir / "README.md"));
    std::map<std::string, const evoteam::Workload*> by_source;
    for (const evoteam::Workload& workload : task.workloads)
      if (workload.origin == evoteam::WorkloadOrigin::published) by_source[workload.source] = &workload;
    std::istringstream lines(evoteam::read_file(published_dir / (std::string(expected.definition) + ".jsonl")));
    std::string line;
    std::size_t count = 0;
    while (std::getline(lines, line)) {
      if (line.empty()) continue;
      ++count;
      const nlohmann::json record = nlohmann::json::parse(line);
      EXPECT_EQ(record["definition"], expected.definition);
      const nlohmann::json& published = record["workload"];
      const std::string uuid = published["uuid"].get<std::string>();
      const auto found = by_source.find(uuid);
      ASSERT_NE(found, by_source.end()) << "published workload " << uuid << " is not in task.json";
      const std::map<std::string, std::int64_t> axes = evoteam::workload_axes(task, *found->second);
      for (const auto& [name, value] : published["axes"].items()) {
        if (name == "len_indptr") {
          EXPECT_EQ(value.get<std::int64_t>(), axes.at("batch_size") + 1) << uuid;
          continue;
        }
        ASSERT_TRUE(axes.count(name)) << uuid << " axis " << name;
        EXPECT_EQ(axes.at(name), value.get<std::int64_t>()) << uuid << " axis " << name;
      }
      EXPECT_FALSE(evoteam::violated_constraint(task, axes).has_value()) << uuid;
      // Inputs and outputs of one workload stay far below the 80 GB of an H100, rotation sets and checks included.
      double bytes = 0;
      for (const evoteam::TensorSpec* tensor : task.tensors())
        bytes += static_cast<double>(evoteam::tensor_elements(*tensor, axes)) *
                 static_cast<double>(evoteam::dtype_size(tensor->dtype));
      EXPECT_LE(bytes, 4.0 * (1ull << 30)) << uuid;
    }
    EXPECT_EQ(count, expected.published);
    EXPECT_EQ(by_source.size(), count) << "every published workload of task.json comes from the published file";
    EXPECT_EQ(count_origin(task, evoteam::WorkloadOrigin::published), expected.published);
    EXPECT_EQ(count_origin(task, evoteam::WorkloadOrigin::ours), expected.ours);
  }
}

TEST(TaskPublishedWorkloads, SelectionCountsPerShippedTask) {
  for (const PublishedTask& expected : k_published_tasks) {
    SCOPED_TRACE(expected.task);
    const Task loaded = evoteam::load_task(evoteam::install_root() / "kernels" / expected.task);
    Task published = loaded, ours = loaded, all = loaded;
    evoteam::select_workloads(published, evoteam::WorkloadSelection::published);
    evoteam::select_workloads(ours, evoteam::WorkloadSelection::ours);
    evoteam::select_workloads(all, evoteam::WorkloadSelection::all);
    EXPECT_EQ(published.workloads.size(), expected.published);
    EXPECT_EQ(ours.workloads.size(), expected.ours);
    EXPECT_EQ(all.workloads.size(), expected.published + expected.ours);
  }
  // Gated Delta Net prefill qk4_v8: FlashInfer-Bench published no workloads for its definition.
  Task gdn = evoteam::load_task(evoteam::install_root() / "kernels" / "gdn_prefill_qk4_v8_d128_k_last");
  EXPECT_EQ(count_origin(gdn, evoteam::WorkloadOrigin::published), 0u);
  EXPECT_THROW(evoteam::select_workloads(gdn, evoteam::WorkloadSelection::published), InvalidInput);
}

}  // namespace
