#pragma once
// An in-memory KnowledgeAccess for agent tests: notes kept per kind, read back by topic or all together; an
// unknown topic is the model's mistake (WorkspaceError), as the tool contract says.
#include <algorithm>
#include <map>
#include <string>

#include <evoteam/agent/tools.hpp>
#include <evoteam/agent/workspace.hpp>

namespace evoteam::testing {

class MemoryKnowledge : public KnowledgeAccess {
 public:
  std::string read(const std::string& topic) override {
    if (topic.empty()) {
      std::string all;
      for (const auto& [kind, text] : notes) all += text;
      return all.empty() ? "(no knowledge recorded yet)" : all;
    }
    const std::vector<std::string>& kinds = knowledge_kinds();
    if (std::find(kinds.begin(), kinds.end(), topic) == kinds.end())
      throw WorkspaceError("unknown knowledge topic '" + topic + "'");
    return notes.count(topic) ? notes[topic] : "(no notes on " + topic + " yet)";
  }
  void record(const std::string& kind, const std::string& text) override { notes[kind] += text + "\n"; }

  std::map<std::string, std::string> notes;
};

}  // namespace evoteam::testing
