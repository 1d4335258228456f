// Append-only JSONL transcripts, one fdatasync'd record per message.
#include <evoteam/agent/transcript.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/log.hpp>
#include <evoteam/core/timestamp.hpp>

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <sstream>

namespace evoteam {

namespace {

// Tool outputs may hold bytes that are not UTF-8 (a binary read, a compiler's locale); keep them readable.
// Every string of a record with its secrets redacted (a key a CLI echoes, one given in a template member's words),
// string by string so that the line stays valid JSON.
void redact_strings(nlohmann::json& value) {
  if (value.is_string()) {
    value = redact(value.get_ref<const std::string&>());
  } else if (value.is_structured()) {
    for (auto& item : value) redact_strings(item);
  }
}

std::string dump_line(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::filesystem::path agent_transcript_path(const std::filesystem::path& cycle_dir, const std::string& role) {
  return cycle_dir / "agents" / role / "transcript.jsonl";
}

Transcript::Transcript(std::filesystem::path path) : m_path(std::move(path)) {
  evoteam::create_directories(m_path.parent_path());
  std::string existing;
  if (std::filesystem::exists(m_path)) existing = read_file(m_path);
  m_fd = ::open(m_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (m_fd < 0) throw IoError("transcript " + m_path.string() + ": cannot open: " + errno_text(errno));
  // A crash mid-write leaves a line without its newline: cut it so the next record starts clean.
  if (!existing.empty() && existing.back() != '\n') {
    const std::size_t keep = existing.rfind('\n') == std::string::npos ? 0 : existing.rfind('\n') + 1;
    if (::ftruncate(m_fd, static_cast<off_t>(keep)) != 0) {
      ::close(m_fd);
      throw IoError("transcript " + m_path.string() + ": cannot cut a torn last line: " + errno_text(errno));
    }
    existing.resize(keep);
  }
  std::istringstream lines(existing);
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_object() && record.contains("seq") && record.at("seq").is_number_unsigned())
      m_next_seq = std::max(m_next_seq, record.at("seq").get<std::uint64_t>() + 1);
  }
}

Transcript::~Transcript() {
  if (m_fd >= 0) ::close(m_fd);
}

void Transcript::append(nlohmann::json record) {
  // seq and t lead the line so the file reads in order with plain tools.
  nlohmann::json head = {{"seq", m_next_seq}, {"t", utc_iso_timestamp()}};
  record.erase("seq");
  record.erase("t");
  redact_strings(record);
  std::string line = dump_line(head);
  const std::string rest = dump_line(record);
  if (rest.size() > 2) {
    line.pop_back();
    line += "," + rest.substr(1);
  }
  line += '\n';
  if (const int err = write_all(m_fd, line); err != 0)
    throw IoError("transcript " + m_path.string() + ": write failed: " + errno_text(err));
  if (::fdatasync(m_fd) != 0)
    throw IoError("transcript " + m_path.string() + ": fdatasync failed: " + errno_text(errno));
  ++m_next_seq;
}

std::vector<nlohmann::json> read_transcript(const std::filesystem::path& path) {
  std::vector<nlohmann::json> records;
  if (!std::filesystem::exists(path)) return records;
  const std::string text = read_file(path);
  std::size_t start = 0;
  int number = 0;
  while (start < text.size()) {
    ++number;
    const std::size_t end = text.find('\n', start);
    const bool last = end == std::string::npos || end + 1 >= text.size();
    const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? text.size() : end + 1;
    if (end == std::string::npos) break;  // torn: no newline yet
    if (line.empty()) continue;
    nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_discarded() || !record.is_object()) {
      if (last) break;
      throw InvalidInput(path.string() + ":" + std::to_string(number) + ": not a JSON record");
    }
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace evoteam
