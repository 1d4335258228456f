#include <evoteam/history/knowledge_kind.hpp>

#include <evoteam/core/error.hpp>
#include <evoteam/core/text.hpp>

namespace evoteam {

namespace {

struct KnowledgeKindName {
  KnowledgeKind kind;
  const char* name;
  const char* file;
  std::vector<const char*> also;  // other spellings models use
};

const std::vector<KnowledgeKindName>& knowledge_kind_table() {
  static const std::vector<KnowledgeKindName> table = {
      {KnowledgeKind::strategy, "strategy", "strategies.md", {"strategies"}},
      {KnowledgeKind::failed_attempt, "failed_attempt", "failed_attempts.md", {"failed_attempts", "failure"}},
      {KnowledgeKind::hardware, "hardware", "hardware.md", {}},
      {KnowledgeKind::constraint, "constraint", "constraints.md", {"constraints"}},
      {KnowledgeKind::action_plan, "action_plan", "action_plan.md", {"plan"}},
      {KnowledgeKind::role_record, "role_record", "roles", {}},
  };
  return table;
}

const KnowledgeKindName& knowledge_kind_row(KnowledgeKind kind) {
  for (const KnowledgeKindName& row : knowledge_kind_table())
    if (row.kind == kind) return row;
  EVOTEAM_CHECK(false, "a knowledge kind without a row in its table");
  return knowledge_kind_table().front();
}

}  // namespace

std::string to_string(KnowledgeKind kind) { return knowledge_kind_row(kind).name; }

std::string file_name(KnowledgeKind kind) { return knowledge_kind_row(kind).file; }

const std::vector<KnowledgeKind>& recordable_knowledge_kinds() {
  static const std::vector<KnowledgeKind> kinds = {KnowledgeKind::strategy, KnowledgeKind::failed_attempt,
                                                   KnowledgeKind::hardware, KnowledgeKind::constraint,
                                                   KnowledgeKind::action_plan};
  return kinds;
}

KnowledgeKind knowledge_kind_from_string(const std::string& text) {
  std::vector<std::string> names;
  for (KnowledgeKind kind : recordable_knowledge_kinds()) {
    const KnowledgeKindName& row = knowledge_kind_row(kind);
    names.push_back(row.name);
    if (text == row.name) return kind;
    for (const char* other : row.also)
      if (text == other) return kind;
  }
  const std::string last = names.back();
  names.pop_back();
  throw InvalidInput("unknown knowledge kind '" + text + "' (expected " + join(names, ", ") + " or " + last + ")");
}

}  // namespace evoteam
