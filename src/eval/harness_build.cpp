// The trusted harness builds every target shares (harness_build.hpp).
#include "eval/harness_build.hpp"

#include <future>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

#include "eval/host/host_build.hpp"

namespace evoteam::eval {

namespace fs = std::filesystem;

void publish_build(const fs::path& temporary, const fs::path& final_dir) {
  std::error_code rename_error;
  fs::rename(temporary, final_dir, rename_error);
  if (rename_error) fs::remove_all(temporary, rename_error);  // another process finished first
}

void compile_harness_objects(const fs::path& objects, const std::vector<fs::path>& sources,
                             const std::vector<std::string>& compile, const HarnessTool& run, const std::string& what) {
  evoteam::create_directories(objects.parent_path());
  const fs::path temporary = unique_sibling(objects);
  evoteam::create_directories(temporary);
  std::vector<std::future<ProcessResult>> compiles;
  for (const fs::path& source : sources) {
    std::vector<std::string> argv = compile;
    argv.insert(argv.end(), {"-c", source.string(), "-o", (temporary / (source.stem().string() + ".o")).string()});
    compiles.push_back(std::async(std::launch::async, [&run, argv, temporary] { return run(argv, temporary); }));
  }
  std::string failures;
  for (auto& compiled : compiles) {
    ProcessResult result = compiled.get();
    if (!result.ok()) failures += result.describe() + "\n" + result.err.text + "\n";
  }
  if (!failures.empty()) {
    std::error_code ignored;
    fs::remove_all(temporary, ignored);
    throw Error("cannot build " + what + ": " + failures);
  }
  publish_build(temporary, objects);
}

fs::path link_task_harness(const fs::path& dir, const std::string& glue, const fs::path& hooks_file,
                           const fs::path& objects, const std::vector<std::string>& link,
                           const std::vector<std::string>& libraries, const HarnessTool& run, const std::string& what) {
  evoteam::create_directories(dir.parent_path());
  const fs::path temporary = unique_sibling(dir);
  evoteam::create_directories(temporary);
  write_file_atomic(temporary / "glue.cpp", glue);
  std::vector<std::string> argv = link;
  argv.push_back("glue.cpp");
  if (!hooks_file.empty()) argv.push_back(hooks_file.string());
  for (const auto& entry : fs::directory_iterator(objects)) argv.push_back(entry.path().string());
  argv.insert(argv.end(), {"-o", "harness"});
  argv.insert(argv.end(), libraries.begin(), libraries.end());
  const ProcessResult result = run(argv, temporary);
  if (!result.ok()) {
    std::error_code ignored;
    fs::remove_all(temporary, ignored);
    throw Error("cannot build " + what + ": " + result.describe() + "\n" + result.err.text);
  }
  publish_build(temporary, dir);
  return dir / "harness";
}

}  // namespace evoteam::eval
