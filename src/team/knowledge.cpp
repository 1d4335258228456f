#include <evoteam/team/knowledge.hpp>

#include <sstream>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>

namespace evoteam {

namespace {

const char* heading_of(KnowledgeKind kind) {
  switch (kind) {
    case KnowledgeKind::strategy: return "Validated strategies";
    case KnowledgeKind::failed_attempt: return "Failed attempts";
    case KnowledgeKind::hardware: return "Hardware observations";
    case KnowledgeKind::constraint: return "Constraints";
    case KnowledgeKind::action_plan: return "Action plan";
    case KnowledgeKind::role_record: return "Role record";
  }
  return "";
}

std::string read_if_exists(const std::filesystem::path& path) {
  return std::filesystem::exists(path) ? read_file(path) : std::string();
}

}  // namespace

std::string file_name(KnowledgeKind kind) {
  switch (kind) {
    case KnowledgeKind::strategy: return "strategies.md";
    case KnowledgeKind::failed_attempt: return "failed_attempts.md";
    case KnowledgeKind::hardware: return "hardware.md";
    case KnowledgeKind::constraint: return "constraints.md";
    case KnowledgeKind::action_plan: return "action_plan.md";
    case KnowledgeKind::role_record: return "roles";
  }
  return "";
}

KnowledgeKind knowledge_kind_from_string(const std::string& text) {
  if (text == "strategy" || text == "strategies") return KnowledgeKind::strategy;
  if (text == "failed_attempt" || text == "failed_attempts" || text == "failure") return KnowledgeKind::failed_attempt;
  if (text == "hardware") return KnowledgeKind::hardware;
  if (text == "constraint" || text == "constraints") return KnowledgeKind::constraint;
  if (text == "action_plan" || text == "plan") return KnowledgeKind::action_plan;
  throw InvalidInput("unknown knowledge kind '" + text +
                     "' (expected strategy, failed_attempt, hardware, constraint or action_plan)");
}

std::vector<KnowledgeEntry> parse_knowledge_markdown(const std::string& text) {
  std::vector<KnowledgeEntry> entries;
  std::istringstream stream(text);
  std::string line;
  KnowledgeEntry* current = nullptr;
  bool in_fields = false;
  while (std::getline(stream, line)) {
    if (line.rfind("## ", 0) == 0) {
      entries.push_back(KnowledgeEntry{trim(line.substr(3)), {}, ""});
      current = &entries.back();
      in_fields = true;
      continue;
    }
    if (current == nullptr) continue;  // the file's "# heading" and preamble
    std::size_t colon = line.find(':');
    if (in_fields && line.rfind("- ", 0) == 0 && colon != std::string::npos) {
      current->fields[trim(line.substr(2, colon - 2))] = trim(line.substr(colon + 1));
      continue;
    }
    in_fields = false;
    current->text += line + "\n";
  }
  for (KnowledgeEntry& entry : entries) entry.text = trim(entry.text);
  return entries;
}

bool constraint_matches(const std::string& when, const std::map<std::string, std::string>& params) {
  if (when.empty()) return false;
  std::stringstream stream(when);
  for (std::string term; std::getline(stream, term, ',');) {
    std::size_t eq = term.find('=');
    auto it = params.find(term.substr(0, eq));
    if (eq == std::string::npos || it == params.end() || it->second != term.substr(eq + 1)) return false;
  }
  return true;
}

std::string format_knowledge_entry(const KnowledgeEntry& entry) {
  std::string text = "## " + entry.title + "\n";
  for (const auto& [key, value] : entry.fields) text += "- " + key + ": " + value + "\n";
  if (!entry.text.empty()) text += "\n" + entry.text + "\n";
  return text + "\n";
}

KnowledgeBase::KnowledgeBase(std::filesystem::path dir) : m_dir(std::move(dir)) {
  evoteam::create_directories(m_dir / "roles");
}

std::filesystem::path KnowledgeBase::path_of(KnowledgeKind kind) const { return m_dir / file_name(kind); }

void KnowledgeBase::append_entry(const std::filesystem::path& file, const std::string& heading,
                                 const KnowledgeEntry& entry) {
  std::lock_guard<std::mutex> lock(m_mutex);
  std::string text = read_if_exists(file);
  if (text.empty()) text = "# " + heading + "\n\n";
  // Whole-file atomic rewrite: a crash leaves the old or the new file, never half an entry.
  write_file_atomic(file, text + format_knowledge_entry(entry));
}

void KnowledgeBase::add(KnowledgeKind kind, const KnowledgeEntry& entry) {
  EVOTEAM_CHECK(kind != KnowledgeKind::role_record, "use add_role_record");
  if (kind == KnowledgeKind::action_plan) {
    write_action_plan(format_knowledge_entry(entry));
    return;
  }
  append_entry(path_of(kind), heading_of(kind), entry);
}

void KnowledgeBase::add_role_record(const std::string& role, const KnowledgeEntry& entry) {
  append_entry(m_dir / "roles" / (role + ".md"), "Role record: " + role, entry);
}

void KnowledgeBase::write_action_plan(const std::string& markdown) {
  std::lock_guard<std::mutex> lock(m_mutex);
  write_file_atomic(path_of(KnowledgeKind::action_plan), "# Action plan\n\n" + markdown);
}

std::vector<KnowledgeEntry> KnowledgeBase::entries(KnowledgeKind kind) const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return parse_knowledge_markdown(read_if_exists(path_of(kind)));
}

std::vector<KnowledgeEntry> KnowledgeBase::role_records(const std::string& role) const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return parse_knowledge_markdown(read_if_exists(m_dir / "roles" / (role + ".md")));
}

std::string KnowledgeBase::action_plan() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return read_if_exists(path_of(KnowledgeKind::action_plan));
}

bool KnowledgeBase::has_failure(const std::string& signature) const {
  for (const KnowledgeEntry& entry : entries(KnowledgeKind::failed_attempt)) {
    auto it = entry.fields.find("signature");
    if (it != entry.fields.end() && it->second == signature) return true;
  }
  return false;
}

std::string KnowledgeBase::digest(std::size_t max_chars) const {
  std::string text;
  const std::size_t per_kind = max_chars / 5;
  for (KnowledgeKind kind : {KnowledgeKind::constraint, KnowledgeKind::strategy, KnowledgeKind::failed_attempt,
                             KnowledgeKind::hardware}) {
    std::vector<KnowledgeEntry> list = entries(kind);
    if (list.empty()) continue;
    std::string section = "### " + std::string(heading_of(kind)) + " (" + std::to_string(list.size()) + ")\n";
    // Newest first: later entries supersede earlier ones.
    for (auto it = list.rbegin(); it != list.rend() && section.size() < per_kind; ++it) {
      section += "- " + it->title;
      for (const auto& [key, value] : it->fields) section += "; " + key + "=" + value;
      section += "\n";
    }
    text += section;
  }
  std::string plan = action_plan();
  if (!plan.empty()) text += "### Action plan\n" + plan.substr(0, per_kind) + "\n";
  if (text.size() > max_chars) text = text.substr(0, max_chars) + "\n[... digest cut ...]\n";
  return text.empty() ? "(no knowledge recorded yet)" : text;
}

}  // namespace evoteam
