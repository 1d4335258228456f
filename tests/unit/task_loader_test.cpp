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
      {"bad arch", [](auto& t) { t["target"] = "cuda"; t["archs"] = {"volta"}; }, "archs[0]"},
      {"archs on host", [](auto& t) { t["archs"] = {"sm_90a"}; }, "archs: only cuda"},
      {"unknown dtype", [](auto& t) { t["inputs"]["x"]["dtype"] = "float7"; }, "inputs.x.dtype: unknown dtype"},
      {"cuda dtype on host", [](auto& t) { t["inputs"]["x"]["dtype"] = "bfloat16"; }, "cuda tasks only"},
      {"unknown axis in shape", [](auto& t) { t["inputs"]["x"]["shape"] = {"N", "Q"}; }, "inputs.x.shape[1]"},
      {"entry misses a tensor", [](auto& t) { t["entry"]["args"] = {"x", "N"}; }, "tensor \"y\" is not passed"},
      {"entry names nothing", [](auto& t) { t["entry"]["args"].push_back("zz"); }, "entry.args[4]"},
      {"missing reference file", [](auto& t) { t["reference"] = "nope.cpp"; }, "reference: no such file"},
      {"reference outside", [](auto& t) { t["reference"] = "../x.cpp"; }, "relative path inside"},
      {"workload misses axis", [](auto& t) { t["workloads"][0]["axes"].erase("N"); }, "missing var axis \"N\""},
      {"workload sets const", [](auto& t) { t["workloads"][0]["axes"]["H"] = 3; }, "const axis"},
      {"workload violates constraint", [](auto& t) { t["constraints"] = {"N % 32 == 0"}; }, "violates constraint"},
      {"no workloads", [](auto& t) { t["workloads"] = nlohmann::json::array(); }, "at least one workload"},
      {"tolerance on input", [](auto& t) { t["tolerances"] = {{"x", {{"rtol", 1}}}}; }, "tolerances.x: not an output"},
      {"default not a value", [](auto& t) { t["params"] = {{{"name", "T"}, {"values", {1, 2}}, {"default", 3}}}; },
       "params[0].default"},
      {"param value with spaces", [](auto& t) { t["params"] = {{{"name", "T"}, {"values", {"a b"}}, {"default", "a b"}}}; },
       "not a plain token"},
      {"default violates constraint",
       [](auto& t) {
         t["params"] = {{{"name", "T"}, {"values", {1, 2}}, {"default", 1}}};
         t["param_constraints"] = {"T > 1"};
       },
       "default params violate"},
      {"bad static scope", [](auto& t) { t["static_constraints"] = {{{"scope", "ptx"}, {"forbid", "x"}}}; }, "not a scope for target host"},
      {"bad regex", [](auto& t) { t["static_constraints"] = {{{"scope", "source"}, {"forbid", "("}}}; }, "invalid regex"},
      {"archs on a host constraint",
       [](auto& t) { t["static_constraints"] = {{{"scope", "disassembly"}, {"require", "x"}, {"archs", {"sm_90a"}}}}; },
       "static_constraints[0].archs: only cuda tasks scope constraints to archs"},
      {"once adopted forbid",
       [](auto& t) { t["static_constraints"] = {{{"scope", "source"}, {"forbid", "x"}, {"once_adopted", true}}}; },
       "static_constraints[0].once_adopted: only a \"require\""},
      {"constraint name twice",
       [](auto& t) {
         t["static_constraints"] = {{{"name", "a"}, {"scope", "source"}, {"forbid", "x"}},
                                    {{"name", "a"}, {"scope", "symbols"}, {"forbid", "y"}}};
       },
       "static_constraints[1].name: \"a\" is used twice"},
      {"tensor cores on host", [](auto& t) { t["expects_tensor_cores"] = true; }, "expects_tensor_cores: only cuda tasks"},
      {"library baseline without file", [](auto& t) { t["baseline"] = {{"kind", "library"}, {"name", "blas"}}; }, "baseline.file: missing"},
      {"hook without hooks file", [](auto& t) { t["inputs"]["x"]["generate"] = "hook:idx"; }, "needs \"hooks\""},
      {"empty shape", [](auto& t) { t["inputs"]["x"]["shape"] = nlohmann::json::array(); }, "inputs.x.shape: must list"},
      {"entry named main", [](auto& t) { t["entry"]["name"] = "main"; }, "entry.name: \"main\" is already defined"},
      {"entry named memcpy", [](auto& t) { t["entry"]["name"] = "memcpy"; }, "entry.name: \"memcpy\" is already defined"},
      {"param mixing numbers and strings", [](auto& t) { t["params"] = {{{"name", "T"}, {"values", {8, "16"}}, {"default", 8}}}; },
       "params[0].values: mixes numbers and strings"},
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
  evoteam::write_file_atomic(dir / "workloads.jsonl", "{\"name\": \"a\", \"axes\": {\"N\": 8}}\n\n{\"axes\": {\"N\": 64}}\n");
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
  task["static_constraints"] = {{{"name", "wgmma"}, {"scope", "ptx"}, {"require", "wgmma\\.mma_async"},
                                 {"archs", {"sm_90a"}}, {"once_adopted", true}, {"message", "keep wgmma"}},
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
      {[](auto& t) { t["static_constraints"][0]["archs"] = nlohmann::json::array(); }, "static_constraints[0].archs: name at least one"},
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
  EXPECT_FALSE(evoteam::param_error(task, {{"ACC_IN_REGISTERS", "1"}, {"REG_ROWS", "2"}, {"TILE_N", "64"}}).has_value());
  EXPECT_EQ(evoteam::complete_params(task, {{"TILE_N", "256"}}).at("TILE_K"), "32");
}

}  // namespace
