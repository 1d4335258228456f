// task.json's "python_reference": what the loader accepts, what it refuses (naming the field), and that the file
// is part of the task's content hash.
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/task/task.hpp>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

// Named, not anonymous: unity builds compile several test files as one, and helper names here repeat elsewhere.
namespace task_python_reference_test {

namespace fs = std::filesystem;
using evoteam::InvalidInput;
using evoteam::testing::TempDir;

nlohmann::json task_with(const nlohmann::json& python_reference, const std::string& dtype = "float32",
                         const std::string& target = "host") {
  nlohmann::json task = nlohmann::json::parse(R"json({
    "name": "t",
    "axes": {"N": {"type": "var"}},
    "inputs": {"x": {"shape": ["N"]}},
    "outputs": {"y": {"dtype": "float32", "shape": ["N"]}},
    "entry": {"name": "copy", "args": ["x", "y", "N"]},
    "reference": "reference.cpp",
    "kernel": {"files": ["kernel.cpp"]},
    "workloads": [{"name": "w", "axes": {"N": 16}}]
  })json");
  task["target"] = target;
  if (target == "cuda") {
    task["archs"] = {"sm_90a"};
    task["reference"] = "reference.cu";
    task["kernel"]["files"] = {"kernel.cu"};
  }
  task["inputs"]["x"]["dtype"] = dtype;
  task["python_reference"] = python_reference;
  return task;
}

void write_task(const fs::path& dir, const nlohmann::json& task) {
  fs::create_directories(dir);
  for (const char* file : {"reference.cpp", "kernel.cpp", "reference.cu", "kernel.cu"})
    evoteam::write_file_atomic(dir / file, "//\n");
  evoteam::write_file_atomic(dir / "reference.py", "def run(x):\n    return x\n");
  evoteam::write_file_atomic(dir / "notes.txt", "not python\n");
  evoteam::write_json_atomic(dir / "task.json", task);
}

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

TEST(TaskPythonReference, LoadsFileFrameworkAndFunction) {
  TempDir dir;
  write_task(dir.path(), task_with({{"file", "reference.py"}, {"framework", "torch"}, {"function", "forward"}}));
  const evoteam::Task task = evoteam::load_task(dir.path());
  ASSERT_TRUE(task.python_reference.has_value());
  EXPECT_EQ(task.python_reference->file, "reference.py");
  EXPECT_EQ(task.python_reference->framework, evoteam::PythonFramework::torch);
  EXPECT_EQ(task.python_reference->function, "forward");

  write_task(dir.path(), task_with({{"file", "reference.py"}, {"framework", "numpy"}}));
  EXPECT_EQ(evoteam::load_task(dir.path()).python_reference->function, "run");
}

TEST(TaskPythonReference, RefusesEachMistakeNamingTheField) {
  const std::vector<std::pair<nlohmann::json, std::string>> cases = {
      {task_with({{"file", "missing.py"}, {"framework", "numpy"}}), "python_reference.file: no such file"},
      {task_with({{"file", "notes.txt"}, {"framework", "numpy"}}),
       "python_reference.file: \"notes.txt\" is not a .py file"},
      {task_with({{"file", "../reference.py"}, {"framework", "numpy"}}), "python_reference.file"},
      {task_with({{"file", "reference.py"}, {"framework", "jax"}}),
       "python_reference.framework: must be \"numpy\" or \"torch\""},
      {task_with({{"file", "reference.py"}}), "python_reference"},
      {task_with({{"file", "reference.py"}, {"framework", "numpy"}, {"function", "not valid"}}),
       "python_reference.function"},
      {task_with({{"file", "reference.py"}, {"framework", "numpy"}, {"module", "x"}}), "module"},
      {task_with("reference.py"), "python_reference"},
      {task_with({{"file", "reference.py"}, {"framework", "numpy"}}, "bfloat16", "cuda"),
       "python_reference.framework: numpy has no bfloat16 (tensor \"x\"); use \"torch\""},
  };
  for (const auto& [task, expected] : cases) {
    const std::string message = load_error(task);
    EXPECT_NE(message.find(expected), std::string::npos) << "expected \"" << expected << "\" in: " << message;
    EXPECT_NE(message.find("task.json"), std::string::npos) << message;
  }
  EXPECT_EQ(load_error(task_with({{"file", "reference.py"}, {"framework", "torch"}}, "bfloat16", "cuda")), "");
}

TEST(TaskPythonReference, IsPartOfTheContentHash) {
  TempDir dir;
  write_task(dir.path(), task_with({{"file", "reference.py"}, {"framework", "numpy"}}));
  const std::string before = evoteam::load_task(dir.path()).content_hash;
  evoteam::write_file_atomic(dir / "reference.py", "def run(x):\n    return x * 1\n");
  EXPECT_NE(evoteam::load_task(dir.path()).content_hash, before);
}

}  // namespace task_python_reference_test
