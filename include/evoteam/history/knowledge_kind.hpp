#pragma once
// The kinds of the persistent knowledge record (knowledge/): one file each, one name each. The agents' tools and
// the knowledge base read the kinds from this table; nothing else lists them.
#include <string>
#include <vector>

namespace evoteam {

enum class KnowledgeKind { strategy, failed_attempt, hardware, constraint, action_plan, role_record };

// "strategy", "failed_attempt", "hardware", "constraint", "action_plan", "role_record".
std::string to_string(KnowledgeKind kind);
std::string file_name(KnowledgeKind kind);  // "strategies.md", ...
// The kinds agents may read and record by name (every kind but the role records, which are per role).
const std::vector<KnowledgeKind>& recordable_knowledge_kinds();
// Parses "strategy", "failed_attempt", ... (the agents' record_knowledge kinds, and the plural spellings models
// use); throws InvalidInput naming the kinds.
KnowledgeKind knowledge_kind_from_string(const std::string& text);

}  // namespace evoteam
