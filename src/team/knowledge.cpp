#include <evoteam/team/knowledge.hpp>

#include <cctype>
#include <sstream>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/task/task.hpp>

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

// Runs of whitespace become one space, ends trimmed: a re-wrapped paragraph says the same thing.
std::string normalised(const std::string& text) {
  std::string result;
  bool space = false;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !result.empty();
      continue;
    }
    if (space) result += ' ';
    space = false;
    result += c;
  }
  return result;
}

std::string field_or_empty(const KnowledgeEntry& entry, const char* key) {
  auto it = entry.fields.find(key);
  return it == entry.fields.end() ? std::string() : it->second;
}

}  // namespace

Provenance provenance_of(const Task& task, std::string run_id) {
  return Provenance{task.name, task.target == Target::host ? "host" : join(task.archs, ","), std::move(run_id)};
}

bool is_provenance_field(const std::string& key) {
  return key == k_field_task || key == k_field_target || key == k_field_run || key == k_field_candidate;
}

KnowledgeEntry with_provenance(KnowledgeEntry entry, const Provenance& provenance) {
  // emplace keeps what the writer said: a writer may know better (e.g. an entry imported from another run).
  if (!provenance.task.empty()) entry.fields.emplace(k_field_task, provenance.task);
  if (!provenance.target.empty()) entry.fields.emplace(k_field_target, provenance.target);
  if (!provenance.run.empty()) entry.fields.emplace(k_field_run, provenance.run);
  return entry;
}

std::string content_hash(const KnowledgeEntry& entry) {
  std::string content = normalised(entry.title) + "\n";
  for (const auto& [key, value] : entry.fields)  // a map: in key order, however the writer listed them
    if (!is_provenance_field(key)) content += key + "=" + normalised(value) + "\n";
  content += normalised(entry.text);
  return sha256_hex(content);
}

bool applies_to_task(const KnowledgeEntry& entry, const std::string& task) {
  const std::string own = field_or_empty(entry, k_field_task);
  return task.empty() || own.empty() || own == task || field_or_empty(entry, k_field_scope) == k_scope_general;
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

KnowledgeBase::KnowledgeBase(std::filesystem::path dir, Provenance provenance)
    : m_dir(std::move(dir)), m_provenance(std::move(provenance)) {
  evoteam::create_directories(m_dir / "roles");
}

std::filesystem::path KnowledgeBase::path_of(KnowledgeKind kind) const { return m_dir / file_name(kind); }

bool KnowledgeBase::append_entry(const std::filesystem::path& file, const std::string& heading,
                                 const KnowledgeEntry& entry, bool unique) {
  const KnowledgeEntry stamped = with_provenance(entry, m_provenance);
  std::lock_guard<std::mutex> lock(m_mutex);
  std::string text = read_if_exists(file);
  if (unique) {
    // Candidate ids restart at c0001 in every run, so only what an entry says can tell a repeat in a shared
    // directory; the same finding about another task is another finding.
    const std::string task = field_or_empty(stamped, k_field_task);
    const std::string hash = content_hash(stamped);
    for (const KnowledgeEntry& recorded : parse_knowledge_markdown(text))
      if (field_or_empty(recorded, k_field_task) == task && content_hash(recorded) == hash) return false;
  }
  if (text.empty()) text = "# " + heading + "\n\n";
  // Whole-file atomic rewrite: a crash leaves the old or the new file, never half an entry.
  write_file_atomic(file, text + format_knowledge_entry(stamped));
  return true;
}

bool KnowledgeBase::add(KnowledgeKind kind, const KnowledgeEntry& entry) {
  EVOTEAM_CHECK(kind != KnowledgeKind::role_record, "use add_role_record");
  if (kind == KnowledgeKind::action_plan) {
    write_action_plan(format_knowledge_entry(entry));
    return true;
  }
  return append_entry(path_of(kind), heading_of(kind), entry, true);
}

void KnowledgeBase::add_role_record(const std::string& role, const KnowledgeEntry& entry) {
  append_entry(m_dir / "roles" / (role + ".md"), "Role record: " + role, entry, false);
}

void KnowledgeBase::write_action_plan(const std::string& markdown) {
  // One plan per directory: in a shared one, its provenance says whose plan a reader is looking at.
  std::string stamp;
  if (!m_provenance.task.empty()) stamp += "- " + std::string(k_field_task) + ": " + m_provenance.task + "\n";
  if (!m_provenance.run.empty()) stamp += "- " + std::string(k_field_run) + ": " + m_provenance.run + "\n";
  std::lock_guard<std::mutex> lock(m_mutex);
  write_file_atomic(path_of(KnowledgeKind::action_plan), "# Action plan\n\n" + stamp + markdown);
}

std::vector<KnowledgeEntry> KnowledgeBase::entries(KnowledgeKind kind) const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return parse_knowledge_markdown(read_if_exists(path_of(kind)));
}

std::vector<KnowledgeEntry> KnowledgeBase::entries_for_task(KnowledgeKind kind) const {
  std::vector<KnowledgeEntry> list = entries(kind);
  std::erase_if(list, [this](const KnowledgeEntry& entry) { return !applies_to_task(entry, m_provenance.task); });
  return list;
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
  for (const KnowledgeEntry& entry : entries_for_task(KnowledgeKind::failed_attempt)) {
    auto it = entry.fields.find("signature");
    if (it != entry.fields.end() && it->second == signature) return true;
  }
  return false;
}

std::vector<std::string> KnowledgeBase::constraint_conditions() const {
  std::vector<std::string> conditions;
  for (const KnowledgeEntry& entry : entries_for_task(KnowledgeKind::constraint))
    if (auto when = entry.fields.find("when"); when != entry.fields.end()) conditions.push_back(when->second);
  return conditions;
}

std::optional<KnowledgeEntry> KnowledgeBase::blocking_constraint(
    const std::map<std::string, std::string>& params) const {
  // Another task's params may share these names and mean something else: only this task's constraints count.
  for (const KnowledgeEntry& entry : entries_for_task(KnowledgeKind::constraint))
    if (auto when = entry.fields.find("when"); when != entry.fields.end() && constraint_matches(when->second, params))
      return entry;
  return std::nullopt;
}

std::string KnowledgeBase::digest(std::size_t max_chars) const {
  std::string text;
  const std::size_t per_kind = max_chars / 5;
  for (KnowledgeKind kind :
       {KnowledgeKind::constraint, KnowledgeKind::strategy, KnowledgeKind::failed_attempt, KnowledgeKind::hardware}) {
    std::vector<KnowledgeEntry> list = entries_for_task(kind);
    if (list.empty()) continue;
    std::string section = "### " + std::string(heading_of(kind)) + " (" + std::to_string(list.size()) + ")\n";
    // Newest first: later entries supersede earlier ones.
    for (auto it = list.rbegin(); it != list.rend() && section.size() < per_kind; ++it) {
      section += "- " + it->title;
      for (const auto& [key, value] : it->fields) {
        // Every entry here is of this task: its task and target say nothing; an earlier run is worth naming.
        if (key == k_field_task || key == k_field_target) continue;
        if (key == k_field_run && value == m_provenance.run) continue;
        section += "; " + key + "=" + value;
      }
      section += "\n";
    }
    text += section;
  }
  std::string plan = action_plan();
  if (!plan.empty()) text += "### Action plan\n" + plan.substr(0, per_kind) + "\n";
  if (text.size() > max_chars) text = text.substr(0, max_chars) + "\n[... digest cut ...]\n";
  return text.empty() ? "(no knowledge recorded yet)" : text;
}

std::filesystem::path KnowledgeBase::kept_kernel_dir() const {
  EVOTEAM_CHECK(!m_provenance.task.empty() && !m_provenance.run.empty(), "a kept kernel needs a task and a run");
  return m_dir / "best" / m_provenance.task / m_provenance.run;
}

void KnowledgeBase::keep_best_kernel(const KeptKernel& kernel) {
  const std::filesystem::path dir = kept_kernel_dir();
  std::lock_guard<std::mutex> lock(m_mutex);
  if (std::filesystem::is_regular_file(dir / "meta.json") &&
      read_json_file(dir / "meta.json").value(k_field_candidate, "") == kernel.candidate)
    return;
  // Staged beside its place and renamed in: a reader sees the old kernel or the new one, never a mix.
  std::filesystem::path staging = dir;
  staging += ".new";
  std::error_code ignored;
  std::filesystem::remove_all(staging, ignored);
  evoteam::create_directories(staging);
  copy_tree(kernel.sources_dir, staging / "src");
  write_json_atomic(staging / "params.json", kernel.params);
  nlohmann::json meta = {{k_field_task, m_provenance.task},
                         {k_field_target, m_provenance.target},
                         {k_field_run, m_provenance.run},
                         {k_field_candidate, kernel.candidate},
                         {"speedup", nullptr},
                         {"params", kernel.params}};
  if (kernel.speedup) meta["speedup"] = *kernel.speedup;
  write_json_atomic(staging / "meta.json", meta);
  std::filesystem::remove_all(dir, ignored);
  std::filesystem::rename(staging, dir);
  fsync_directory(dir.parent_path());
}

}  // namespace evoteam
