#pragma once
// Static checks of a host candidate: its sources (includes), its objects (undefined symbols against an
// allowlist, symbols that would interpose runtime or harness functions, writable data, static constructors,
// forbidden instructions) and the task's own constraints. Pure functions over text, so tests need no compiler.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/task/task.hpp>

namespace evoteam::eval {

struct StaticFinding {
  std::string reason;  // one line: "forbidden symbol fopen (file I/O)"
  nlohmann::json evidence = nlohmann::json::object();
};

// What `objdump -h -t -d --no-show-raw-insn` says about one object.
struct ObjectScan {
  std::string object;  // file name, for evidence
  std::vector<std::string> undefined;
  std::vector<std::string> defined_global;        // global and weak definitions
  std::map<std::string, std::uint64_t> sections;  // name -> size
  // Sections the loader maps writable, by their flags (ALLOC without READONLY or CODE), whatever their name.
  std::set<std::string> writable_sections;
  std::vector<std::string> indirect_functions;  // GNU IFUNC symbols: their resolvers run when the object loads
  std::map<std::string, int> instructions;      // mnemonic -> count
  std::string disassembly;                      // raw text, for task constraints
};
ObjectScan parse_objdump(const std::string& object, const std::string& text);

struct StaticPolicy {
  std::vector<std::string> allowed_symbols;  // glob patterns
  std::vector<std::string> forbidden_instructions;
  bool forbid_writable_data = true;
};

// '*' matches any run of characters, '?' one character.
bool glob_match(const std::string& pattern, const std::string& text);
// Why a symbol is dangerous ("file I/O", "threads", ...), or "" when it is in no known category.
std::string symbol_category(const std::string& symbol);

// Includes by absolute path, through "..", of a task file (reference, hooks, baseline) or computed includes.
std::optional<StaticFinding> check_sources(const Task& task, const std::map<std::string, std::string>& files);
std::optional<StaticFinding> check_object(const Task& task, const ObjectScan& scan, const StaticPolicy& policy);
// The task's static_constraints over all the candidate's sources and objects: the first hard one broken, if any.
// The once-adopted constraints the candidate meets are appended to `adopted` (they never reject).
std::optional<StaticFinding> check_task_constraints(const Task& task, const std::map<std::string, std::string>& files,
                                                    const std::vector<ObjectScan>& scans,
                                                    std::vector<std::string>* adopted);
// Advice for agents, never a rejection: literals equal to workload dimensions, and so on.
std::vector<std::string> source_warnings(const Task& task, const std::map<std::string, std::string>& files);

}  // namespace evoteam::eval
