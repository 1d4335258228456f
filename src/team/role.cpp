#include <evoteam/team/role.hpp>

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include <evoteam/agent/tools.hpp>
#include <evoteam/core/config.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>

namespace evoteam {
namespace {

const std::string k_fence = "---";

// Values may be quoted as in YAML; the quotes are not part of the value.
std::string unquote(const std::string& value) {
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
    return value.substr(1, value.size() - 2);
  return value;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    // Files saved with CRLF endings parse the same as LF ones.
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    if (end == text.size()) break;
    start = end + 1;
  }
  return lines;
}

bool valid_role_name(const std::string& name) {
  const auto lower_or_digit = [](unsigned char c) { return std::islower(c) || std::isdigit(c); };
  if (name.empty() || !lower_or_digit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](unsigned char c) { return lower_or_digit(c) || c == '_' || c == '-'; });
}

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'; }

struct PlaceholderMatch {
  std::size_t begin = 0;  // index of the opening "{{"
  std::size_t end = 0;    // one past the closing "}}"
  std::string name;
};

// Finds the next placeholder at or after `from`; braces that do not enclose a name are literal text.
std::optional<PlaceholderMatch> next_placeholder(const std::string& body, std::size_t from) {
  for (std::size_t open = body.find("{{", from); open != std::string::npos; open = body.find("{{", open + 1)) {
    std::size_t pos = open + 2;
    while (pos < body.size() && body[pos] == ' ') ++pos;
    if (pos >= body.size() || !is_name_start(body[pos])) continue;
    const std::size_t name_begin = pos;
    while (pos < body.size() && is_name_char(body[pos])) ++pos;
    const std::size_t name_end = pos;
    while (pos < body.size() && body[pos] == ' ') ++pos;
    if (body.compare(pos, 2, "}}") != 0) continue;
    return PlaceholderMatch{open, pos + 2, body.substr(name_begin, name_end - name_begin)};
  }
  return std::nullopt;
}

bool is_known_placeholder(const std::string& name) {
  const auto& known = known_placeholders();
  return std::find(known.begin(), known.end(), name) != known.end();
}

std::string where(const RoleDefinition& role) {
  return role.source.empty() ? "role '" + role.name + "'" : role.source.string();
}

void check_placeholders(const RoleDefinition& role) {
  for (const std::string& name : placeholders_in(role.body)) {
    if (!is_known_placeholder(name))
      throw InvalidInput(where(role) + ": unknown placeholder {{" + name +
                         "}} (the known ones are listed in roles/README.md)");
  }
}

std::vector<std::string> parse_tools(const std::string& value, const std::string& location) {
  std::string list = value;
  // `tools: [a, b]` is accepted too, since YAML-minded authors write lists that way.
  if (list.size() >= 2 && list.front() == '[' && list.back() == ']') list = list.substr(1, list.size() - 2);
  std::vector<std::string> tools;
  if (trim(list).empty()) return tools;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = list.find(',', start);
    const std::string tool = unquote(trim(list.substr(start, comma - start)));
    if (tool.empty()) throw InvalidInput(location + ": empty entry in 'tools'");
    const std::vector<std::string>& known = tool_names();  // the toolbox's contract, one list
    if (std::find(known.begin(), known.end(), tool) == known.end())
      throw InvalidInput(location + ": unknown tool '" + tool + "' in 'tools' (known: " + join(known, ", ") + ")");
    if (std::find(tools.begin(), tools.end(), tool) != tools.end())
      throw InvalidInput(location + ": tool '" + tool + "' listed twice in 'tools'");
    tools.push_back(tool);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return tools;
}

}  // namespace

const std::vector<std::string>& known_placeholders() {
  static const std::vector<std::string> names = {
      "task_name",  "task_readme",      "target",       "editable_files",  "params",      "constraints",
      "directives", "knowledge_digest", "best_summary", "handoff_note",    "cycle",       "budget",
      "team",       "signals",          "history",      "available_roles", "team_schema",
  };
  return names;
}

std::vector<std::string> placeholders_in(const std::string& body) {
  std::vector<std::string> names;
  for (auto match = next_placeholder(body, 0); match; match = next_placeholder(body, match->end)) {
    if (std::find(names.begin(), names.end(), match->name) == names.end()) names.push_back(match->name);
  }
  return names;
}

RoleDefinition load_role(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) throw InvalidInput(file.string() + ": no such role file");
  std::string text = read_file(file);
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);  // editors on some systems prepend a BOM
  const std::vector<std::string> lines = split_lines(text);
  const std::string name_of_file = file.string();

  if (lines.empty() || trim(lines[0]) != k_fence)
    throw InvalidInput(name_of_file + ": missing front matter (the file must begin with a '---' line)");
  std::size_t close = 1;
  while (close < lines.size() && trim(lines[close]) != k_fence) ++close;
  if (close >= lines.size()) throw InvalidInput(name_of_file + ": unterminated front matter (no closing '---' line)");

  RoleDefinition role;
  role.source = file;
  std::set<std::string> seen;
  for (std::size_t i = 1; i < close; ++i) {
    const std::string line = trim(lines[i]);
    if (line.empty() || line[0] == '#') continue;
    const std::string location = name_of_file + ":" + std::to_string(i + 1);
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0)
      throw InvalidInput(location + ": expected 'key: value' in the front matter, got '" + line + "'");
    const std::string key = trim(line.substr(0, colon));
    const std::string value = unquote(trim(line.substr(colon + 1)));
    if (!seen.insert(key).second) throw InvalidInput(location + ": key '" + key + "' given twice");
    if (key == "name") {
      role.name = value;
    } else if (key == "description") {
      role.description = value;
    } else if (key == "tools") {
      role.tools = parse_tools(value, location);
    } else if (key == "model") {
      role.model = value;
    } else {
      throw InvalidInput(location + ": unknown front-matter key '" + key +
                         "' (known: name, description, tools, model)");
    }
  }
  if (role.name.empty()) throw InvalidInput(name_of_file + ": front matter has no 'name'");
  if (!valid_role_name(role.name))
    throw InvalidInput(name_of_file + ": invalid role name '" + role.name +
                       "' (lower-case letters, digits, '-' and '_', starting with a letter or digit)");
  if (role.description.empty()) throw InvalidInput(name_of_file + ": front matter has no 'description'");

  std::string body;
  for (std::size_t i = close + 1; i < lines.size(); ++i) body += lines[i] + "\n";
  body = trim(body);
  if (body.empty()) throw InvalidInput(name_of_file + ": the prompt body is empty");
  role.body = body + "\n";
  check_placeholders(role);
  return role;
}

std::map<std::string, RoleDefinition> load_roles(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) throw InvalidInput(dir.string() + ": no such roles directory");
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string file_name = entry.path().filename().string();
    if (entry.path().extension() != ".md" || file_name == "README.md" || file_name.front() == '.') continue;
    files.push_back(entry.path());
  }
  if (ec) throw IoError(dir.string() + ": cannot list the roles directory: " + ec.message());
  // Sorted so that which of two duplicates is named first does not depend on the file system's order.
  std::sort(files.begin(), files.end());

  std::map<std::string, RoleDefinition> roles;
  for (const auto& file : files) {
    RoleDefinition role = load_role(file);
    if (auto existing = roles.find(role.name); existing != roles.end())
      throw InvalidInput(file.string() + ": role name '" + role.name + "' is already defined by " +
                         existing->second.source.string());
    roles.emplace(role.name, std::move(role));
  }
  if (roles.empty()) throw InvalidInput(dir.string() + ": no role files (*.md) in the roles directory");
  return roles;
}

std::filesystem::path default_roles_dir() { return install_root() / "roles"; }

std::string render(const RoleDefinition& role, const std::map<std::string, std::string>& values) {
  for (const auto& [name, value] : values) {
    EVOTEAM_CHECK(is_known_placeholder(name), "render() was given an unknown placeholder '" + name + "'");
  }
  check_placeholders(role);
  std::string out;
  std::size_t copied = 0;
  for (auto match = next_placeholder(role.body, 0); match; match = next_placeholder(role.body, match->end)) {
    const auto value = values.find(match->name);
    if (value == values.end())
      throw InvalidInput(where(role) + ": no value supplied for placeholder {{" + match->name + "}}");
    out.append(role.body, copied, match->begin - copied);
    out += value->second;
    copied = match->end;
  }
  out.append(role.body, copied, std::string::npos);
  return out;
}

namespace {

// The architecture a heading names, "sm_90a" in "# Hopper (sm_90a)"; empty for any other heading.
std::string arch_of_heading(const std::string& heading) {
  const std::size_t at = heading.find("(sm_");
  if (at == std::string::npos) return "";
  const std::size_t close = heading.find(')', at);
  return close == std::string::npos ? "" : heading.substr(at + 1, close - at - 1);
}

}  // namespace

std::string fit_prompt(const std::string& prompt, const std::vector<std::string>& archs, const std::string& heading,
                       const std::optional<std::string>& body) {
  std::string out;
  bool skipping = false;
  std::size_t start = 0;
  while (start < prompt.size()) {
    std::size_t end = prompt.find('\n', start);
    end = end == std::string::npos ? prompt.size() : end + 1;
    const std::string line = prompt.substr(start, end - start);
    start = end;
    if (line.rfind("# ", 0) == 0) {
      const std::string title = trim(line.substr(2));
      const std::string arch = arch_of_heading(title);
      skipping = !arch.empty() && std::find(archs.begin(), archs.end(), arch) == archs.end();
      if (body && !heading.empty() && title == heading) {
        out += line + *body + "\n\n";
        skipping = true;
      }
      if (skipping) continue;
    }
    if (!skipping) out += line;
  }
  return out;
}

}  // namespace evoteam
