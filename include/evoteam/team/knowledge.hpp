#pragma once
// The persistent cross-team record (knowledge/): structured Markdown that people read and the daemon parses.
// Files: strategies.md, failed_attempts.md, hardware.md, constraints.md, action_plan.md, roles/<role>.md.
// Each entry is a "## title" heading, "- key: value" field lines, then free text. Writes are atomic and
// serialised, so parallel agents may record at once; --knowledge DIR shares one directory across runs.
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace evoteam {

enum class KnowledgeKind { strategy, failed_attempt, hardware, constraint, action_plan, role_record };

std::string file_name(KnowledgeKind kind);  // "strategies.md", ...
// Parses "strategy", "failed_attempt", ... (the agents' record_knowledge kinds); throws InvalidInput.
KnowledgeKind knowledge_kind_from_string(const std::string& text);

struct KnowledgeEntry {
  std::string title;
  std::map<std::string, std::string> fields;  // e.g. candidate, speedup, signature, param, task
  std::string text;
};

class KnowledgeBase {
 public:
  explicit KnowledgeBase(std::filesystem::path dir);

  const std::filesystem::path& dir() const { return m_dir; }
  void add(KnowledgeKind kind, const KnowledgeEntry& entry);
  // Records what a role did; `role` names the file roles/<role>.md.
  void add_role_record(const std::string& role, const KnowledgeEntry& entry);
  // Replaces the action plan (one document, rewritten by the Knowledge Integrator each cycle).
  void write_action_plan(const std::string& markdown);

  std::vector<KnowledgeEntry> entries(KnowledgeKind kind) const;
  std::vector<KnowledgeEntry> role_records(const std::string& role) const;
  std::string action_plan() const;

  // True when a failed attempt with this signature field ("signature") is already recorded.
  bool has_failure(const std::string& signature) const;
  // A condensed view for prompts: the newest entries of each kind, cut to about max_chars.
  std::string digest(std::size_t max_chars) const;

 private:
  std::filesystem::path path_of(KnowledgeKind kind) const;
  void append_entry(const std::filesystem::path& file, const std::string& heading, const KnowledgeEntry& entry);

  std::filesystem::path m_dir;
  mutable std::mutex m_mutex;
};

std::vector<KnowledgeEntry> parse_knowledge_markdown(const std::string& text);

// True when every "name=value" term of a constraint's comma-separated `when` field holds in `params`.
bool constraint_matches(const std::string& when, const std::map<std::string, std::string>& params);
std::string format_knowledge_entry(const KnowledgeEntry& entry);

}  // namespace evoteam
