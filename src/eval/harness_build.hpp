#pragma once
// The two builds of a trusted harness, the same for every target: its shared objects (every source compiled at
// once) and a task's harness linked from the task's glue and hooks and those objects. Each is built in a fresh
// temporary sibling and published with one rename, so another builder (another process) only ever sees a finished
// directory. The target says which compiler and flags, and how long one compile may take.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <evoteam/core/process.hpp>

namespace evoteam::eval {

// Runs one compiler command in `dir` (its working directory and the only writable one) under the target's harness
// build deadline.
using HarnessTool =
    std::function<ProcessResult(const std::vector<std::string>& argv, const std::filesystem::path& dir)>;

// Compiles each source with `compile` + {-c SOURCE -o STEM.o} into a temporary sibling of `objects`, all at once,
// and publishes it as `objects`. Throws Error "cannot build <what>: ..." naming every failed compile.
void compile_harness_objects(const std::filesystem::path& objects, const std::vector<std::filesystem::path>& sources,
                             const std::vector<std::string>& compile, const HarnessTool& run, const std::string& what);

// A task's harness: `link` + {glue.cpp [HOOKS] OBJECTS... -o harness} + `libraries`, built in a temporary sibling of
// `dir` and published as `dir`; returns dir/harness. Throws Error "cannot build <what>: ...".
std::filesystem::path link_task_harness(const std::filesystem::path& dir, const std::string& glue,
                                        const std::filesystem::path& hooks_file, const std::filesystem::path& objects,
                                        const std::vector<std::string>& link, const std::vector<std::string>& libraries,
                                        const HarnessTool& run, const std::string& what);

// Moves a finished temporary directory to its final name; when another builder finished first, drops it.
void publish_build(const std::filesystem::path& temporary, const std::filesystem::path& final_dir);

}  // namespace evoteam::eval
