#pragma once
// Roles: one Markdown file per role (roles/*.md) with a small front matter and the system prompt as its body.
// Files are read at run time, so users edit or add roles without rebuilding. See roles/README.md for the format
// and the placeholders. Every problem with a role file is an InvalidInput error naming the file.
//
//   ---
//   name: optimizer
//   description: One line: what the role does and when the supervisor adds it.
//   tools: read_file, edit_file, compile, submit
//   model:
//   ---
//   The prompt, with {{placeholders}}.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace evoteam {

struct RoleDefinition {
  std::string name;         // [a-z0-9][a-z0-9_-]*, unique within a roles directory
  std::string description;  // one line, shown to the supervisor in `available_roles`
  std::vector<std::string>
      tools;                     // a subset of tool_names() (agent/tools.hpp), in file order, no repeats; may be empty
  std::string model;             // model override; empty = the run's model
  std::string body;              // the prompt template, ending with one newline
  std::filesystem::path source;  // the file it came from (empty for roles built in code)
};

// Parses one role file. Throws InvalidInput naming the file: missing or unterminated front matter, a line
// that is not `key: value`, an unknown or repeated key, a missing name or description, an invalid name, an
// unknown or repeated tool, an empty body, or an unknown placeholder in the body. IoError if unreadable.
RoleDefinition load_role(const std::filesystem::path& file);

// Loads every `*.md` in `dir` (not recursive; README.md and hidden files skipped), keyed by role name.
// Throws InvalidInput when the directory does not exist, holds no role, or two files declare the same name.
std::map<std::string, RoleDefinition> load_roles(const std::filesystem::path& dir);

// The shipped roles: install_root() / "roles" (EVOTEAM_HOME moves it; callers may pass another directory).
std::filesystem::path default_roles_dir();

// The closed set of placeholder names a role body may use, in documentation order.
const std::vector<std::string>& known_placeholders();

// The placeholder names used in a template, in order of first use, each once. A placeholder is `{{name}}`
// (spaces inside the braces allowed) where name starts with a letter or '_' and continues with letters,
// digits, '_', '-' or '.'; other text with braces (e.g. `{{1, 2}}`) is literal.
std::vector<std::string> placeholders_in(const std::string& body);

// Substitutes every placeholder in one pass (values are not re-scanned). Throws InvalidInput naming the role
// file and placeholder when the body uses an unknown placeholder or one without a value in `values`; pass ""
// explicitly for an empty value. A key in `values` that is not a known placeholder is a caller bug (Error).
std::string render(const RoleDefinition& role, const std::map<std::string, std::string>& values);

// A rendered prompt's "# Heading" sections, kept or replaced: an architecture's section (its heading names it, as
// "# Hopper (sm_90a)") only when `archs` holds that architecture — none for a host task — and the section named
// `heading` (e.g. "Tools") replaced by `body` when `body` is given, so a member reads of the tools it has.
std::string fit_prompt(const std::string& prompt, const std::vector<std::string>& archs,
                       const std::string& heading = "", const std::optional<std::string>& body = std::nullopt);

}  // namespace evoteam
