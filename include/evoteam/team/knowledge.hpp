#pragma once
// The persistent cross-team record (knowledge/): structured Markdown that people read and the daemon parses.
// Files: strategies.md, failed_attempts.md, hardware.md, constraints.md, action_plan.md, roles/<role>.md, and
// best/<task>/<run>/ (the best kernel each run found: its files, params.json and meta.json).
// Each entry is a "## title" heading, "- key: value" field lines, then free text. Writes are atomic and
// serialised, so parallel agents may record at once; --knowledge DIR shares one directory across runs and tasks,
// which is why every entry carries its provenance (task, target, run, candidate) and is de-duplicated by content.
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <evoteam/history/knowledge_kind.hpp>

namespace evoteam {

struct Task;

struct KnowledgeEntry {
  std::string title;
  std::map<std::string, std::string> fields;  // e.g. candidate, speedup, signature, param, task
  std::string text;
};

// Where a run's knowledge comes from. The knowledge base writes it into every entry the run adds, as the fields
// named below, so entries from many runs and tasks in one directory can be told apart. (Tasks declare no
// operation kind, so there is no field for one.)
struct Provenance {
  std::string task;    // the task's name; empty: no provenance (tools and tests without a run)
  std::string target;  // "host", or the CUDA archs the task builds for ("sm_90a,sm_100a")
  std::string run;     // the run id
};
Provenance provenance_of(const Task& task, std::string run_id);

inline constexpr const char* k_field_task = "task";
inline constexpr const char* k_field_target = "target";
inline constexpr const char* k_field_run = "run";
inline constexpr const char* k_field_candidate = "candidate";  // filled by the writer that knows the candidate
// "- scope: general" marks an entry that holds for every task (people write it; no run infers it).
inline constexpr const char* k_field_scope = "scope";
inline constexpr const char* k_scope_general = "general";

// True for task, target, run and candidate: who recorded an entry, not what it says.
bool is_provenance_field(const std::string& key);
// The entry's fields with the provenance filled in where the writer left it out.
KnowledgeEntry with_provenance(KnowledgeEntry entry, const Provenance& provenance);
// What an entry says, independent of where it was recorded: its title, text and every non-provenance field,
// whitespace normalised, hashed. Two entries of one kind and task with equal content are one entry.
std::string content_hash(const KnowledgeEntry& entry);
// True when the entry speaks about `task`: its own task's entries, general ones, and legacy entries written
// before entries carried a task (they applied everywhere then and still do). An empty `task` takes everything.
bool applies_to_task(const KnowledgeEntry& entry, const std::string& task);

// The best kernel of a run, as kept under best/<task>/<run>/.
struct KeptKernel {
  std::filesystem::path sources_dir;  // the candidate's editable files
  std::map<std::string, std::string> params;
  std::string candidate;
  std::optional<double> speedup;
};

class KnowledgeBase {
 public:
  explicit KnowledgeBase(std::filesystem::path dir, Provenance provenance = {});

  const std::filesystem::path& dir() const { return m_dir; }
  const Provenance& provenance() const { return m_provenance; }
  // Adds the entry with this base's provenance; false (nothing written) when an entry of the same kind and task
  // with the same content is recorded already, whichever run or candidate recorded it.
  bool add(KnowledgeKind kind, const KnowledgeEntry& entry);
  // Records what a role did; `role` names the file roles/<role>.md. A log, stamped but never de-duplicated.
  void add_role_record(const std::string& role, const KnowledgeEntry& entry);
  // Replaces the action plan (one document, rewritten by the Knowledge Integrator each cycle).
  void write_action_plan(const std::string& markdown);

  // Every entry of the kind, whatever its task.
  std::vector<KnowledgeEntry> entries(KnowledgeKind kind) const;
  // The entries of the kind that apply to this base's task (applies_to_task): what screens and advises a run.
  std::vector<KnowledgeEntry> entries_for_task(KnowledgeKind kind) const;
  std::vector<KnowledgeEntry> role_records(const std::string& role) const;
  std::string action_plan() const;

  // True when a failed attempt with this signature field ("signature") is already recorded for this task.
  bool has_failure(const std::string& signature) const;
  // The `when` conditions of the constraints that apply to this task, oldest first.
  std::vector<std::string> constraint_conditions() const;
  // The first constraint of this task whose `when` holds for `params` (constraint_matches), if any.
  std::optional<KnowledgeEntry> blocking_constraint(const std::map<std::string, std::string>& params) const;
  // A condensed view for prompts: the newest entries of each kind that apply to this task, cut to about max_chars.
  std::string digest(std::size_t max_chars) const;

  // Keeps a copy of the run's best kernel under best/<task>/<run>/ (files, params.json, meta.json), replaced
  // atomically when the best changes; nothing is written when that candidate is kept already.
  void keep_best_kernel(const KeptKernel& kernel);
  std::filesystem::path kept_kernel_dir() const;  // best/<task>/<run>/

 private:
  std::filesystem::path path_of(KnowledgeKind kind) const;
  // Appends under the lock; with `unique`, not when an entry of the same task and content is in the file.
  bool append_entry(const std::filesystem::path& file, const std::string& heading, const KnowledgeEntry& entry,
                    bool unique);

  std::filesystem::path m_dir;
  Provenance m_provenance;
  mutable std::mutex m_mutex;
};

std::vector<KnowledgeEntry> parse_knowledge_markdown(const std::string& text);

// True when every "name=value" term of a constraint's comma-separated `when` field holds in `params`.
bool constraint_matches(const std::string& when, const std::map<std::string, std::string>& params);
std::string format_knowledge_entry(const KnowledgeEntry& entry);

}  // namespace evoteam
