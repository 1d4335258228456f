// The default knowledge access: one Markdown file per kind in a directory.
#include <evoteam/fs.hpp>
#include <evoteam/store.hpp>
#include <evoteam/tools.hpp>

#include <algorithm>
#include <mutex>

namespace evoteam {

namespace {

// Agents may run in parallel threads; one mutex keeps their read-modify-write appends whole.
std::mutex& knowledge_mutex() {
  static std::mutex mutex;
  return mutex;
}

const std::vector<std::pair<std::string, std::string>>& kind_files() {
  static const std::vector<std::pair<std::string, std::string>> files = {
      {"strategy", "strategies.md"}, {"failed_attempt", "failed_attempts.md"}, {"hardware", "hardware.md"},
      {"constraint", "constraints.md"}, {"action_plan", "action_plan.md"}};
  return files;
}

// "strategy", "strategies" and "strategies.md" all name one topic.
std::string kind_of_topic(const std::string& topic) {
  for (const auto& [kind, file] : kind_files())
    if (topic == kind || topic == file || topic + ".md" == file) return kind;
  return "";
}

std::string trimmed(const std::string& text) {
  std::size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
}

}  // namespace

const std::vector<std::string>& knowledge_kinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> result;
    for (const auto& entry : kind_files()) result.push_back(entry.first);
    return result;
  }();
  return kinds;
}

std::string knowledge_file_name(const std::string& kind) {
  for (const auto& [known, file] : kind_files())
    if (kind == known) return file;
  throw InvalidInput("unknown knowledge kind '" + kind + "'");
}

DirectoryKnowledge::DirectoryKnowledge(std::filesystem::path dir, std::string author)
    : m_dir(std::move(dir)), m_author(std::move(author)) {}

std::string DirectoryKnowledge::read(const std::string& topic) {
  std::lock_guard<std::mutex> lock(knowledge_mutex());
  const std::string wanted = kind_of_topic(topic);
  if (!topic.empty() && wanted.empty())
    throw WorkspaceError("unknown knowledge topic '" + topic +
                         "'; topics: strategy, failed_attempt, hardware, constraint, action_plan");
  std::string text;
  for (const auto& [kind, file_name] : kind_files()) {
    if (!wanted.empty() && kind != wanted) continue;
    const std::filesystem::path file = m_dir / file_name;
    if (!std::filesystem::is_regular_file(file)) continue;
    text += read_file(file);
    if (!text.empty() && text.back() != '\n') text += '\n';
  }
  if (text.empty()) return wanted.empty() ? "(no knowledge recorded yet)" : "(no notes on " + wanted + " yet)";
  return text;
}

void DirectoryKnowledge::record(const std::string& kind, const std::string& text) {
  std::lock_guard<std::mutex> lock(knowledge_mutex());
  const std::filesystem::path file = m_dir / knowledge_file_name(kind);
  evoteam::create_directories(m_dir);
  std::string content = std::filesystem::is_regular_file(file) ? read_file(file) : "";
  if (!content.empty() && content.back() != '\n') content += '\n';
  if (!content.empty()) content += '\n';
  const std::string note = trimmed(text);
  const std::size_t line_end = note.find('\n');
  const std::string title = trimmed(note.substr(0, line_end));
  const std::string body = line_end == std::string::npos ? "" : trimmed(note.substr(line_end + 1));
  content += "## " + (title.empty() ? std::string("note") : title) + "\n- author: " + m_author +
             "\n- recorded: " + utc_iso_timestamp() + "\n";
  if (!body.empty()) content += "\n" + body + "\n";
  write_file_atomic(file, content);
}

}  // namespace evoteam
