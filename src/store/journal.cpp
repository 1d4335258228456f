#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/store/store.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <spdlog/spdlog.h>

namespace evoteam {

namespace {

constexpr std::size_t k_max_reported_tail = 1024;  // bytes of a torn tail kept (raw) for the report
constexpr std::size_t k_max_quoted_line = 120;     // bytes of a corrupt middle line quoted in a warning

// What a scan of the journal text found, with the offsets needed to repair the file.
struct JournalScan {
  JournalReplay replay;
  std::size_t valid_end = 0;  // end of the last whole line worth keeping
  std::uint64_t max_seq = 0;  // largest "seq" among the records (0 if none)
  bool version_line_unterminated = false;
};

// A bounded, printable excerpt of a line for warnings and logs: a torn tail can hold NUL bytes or garbage. Bytes
// past ASCII are escaped too: garbage is rarely valid UTF-8, and a warning carried into JSON (`status --json`)
// must be.
std::string quote_prefix(std::string_view text, std::size_t limit) {
  std::string out;
  for (const char c : text.substr(0, limit)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  if (text.size() > limit) out += "...";
  return out;
}

JournalScan scan_journal(const std::string& text, const std::filesystem::path& path) {
  JournalScan scan;
  if (text.empty()) throw InvalidInput(path.string() + " is not an evoteam journal (empty file)");

  const std::size_t first_newline = text.find('\n');
  const std::string_view first_line =
      std::string_view(text).substr(0, first_newline == std::string::npos ? text.size() : first_newline);
  nlohmann::json version = nlohmann::json::parse(first_line, nullptr, /*allow_exceptions=*/false);
  if (version.is_discarded() || !version.is_object() || !version.contains("evoteam_journal") ||
      !version["evoteam_journal"].is_number_integer()) {
    throw InvalidInput(path.string() + " is not an evoteam journal (its first line is not {\"evoteam_journal\": " +
                       std::to_string(k_journal_version) + ", ...})");
  }
  if (version["evoteam_journal"].get<int>() > k_journal_version) {
    throw InvalidInput(path.string() + " is journal version " + version["evoteam_journal"].dump() +
                       ", newer than this evoteam reads (" + std::to_string(k_journal_version) + ")");
  }
  scan.replay.version = std::move(version);
  if (first_newline == std::string::npos) {
    scan.valid_end = text.size();
    scan.version_line_unterminated = true;
    return scan;
  }

  std::size_t start = first_newline + 1;
  scan.valid_end = start;
  std::size_t line_number = 1;
  while (start < text.size()) {
    ++line_number;
    const std::size_t newline = text.find('\n', start);
    if (newline == std::string::npos) {
      // Every append writes its newline in the same write(2): a line without one was never acknowledged.
      scan.replay.torn_tail = true;
      scan.replay.torn_tail_text = std::string(std::string_view(text).substr(start, k_max_reported_tail));
      break;
    }
    const std::string_view line = std::string_view(text).substr(start, newline - start);
    const bool is_last = newline + 1 == text.size();
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
      scan.valid_end = newline + 1;
      start = newline + 1;
      continue;
    }
    nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!record.is_discarded() && record.is_object()) {
      if (const auto seq = record.find("seq"); seq != record.end() && seq->is_number_unsigned()) {
        // The parser reads every non-negative integer as unsigned; negative seqs are not ours.
        scan.max_seq = std::max(scan.max_seq, seq->get<std::uint64_t>());
      }
      scan.replay.records.push_back(std::move(record));
      scan.valid_end = newline + 1;
    } else if (is_last) {
      // A file system may keep the new size of an interrupted write but not its bytes (zeros, garbage).
      scan.replay.torn_tail = true;
      scan.replay.torn_tail_text = std::string(line.substr(0, k_max_reported_tail));
    } else {
      scan.replay.warnings.push_back(path.string() + " line " + std::to_string(line_number) +
                                     ": not a JSON object, skipped: " + quote_prefix(line, k_max_quoted_line));
      scan.valid_end = newline + 1;  // later records follow it, so the line stays in the file
    }
    start = newline + 1;
  }
  return scan;
}

// The version key comes first so `head -1` reads naturally.
std::string version_line() {
  return "{\"evoteam_journal\":" + std::to_string(k_journal_version) + ",\"created\":\"" + utc_iso_timestamp() +
         "\"}\n";
}

}  // namespace

JournalReplay replay_journal(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InvalidInput(path.string() + ": no such journal");
  return scan_journal(read_file(path), path).replay;
}

Journal::Journal(const std::filesystem::path& path) : m_path(path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) write_file_atomic(path, version_line());

  m_fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (m_fd < 0) throw IoError("cannot open journal " + path.string() + ": " + std::strerror(errno));
  try {
    struct stat st {};
    if (::fstat(m_fd, &st) != 0) throw IoError("cannot stat " + path.string() + ": " + std::strerror(errno));
    if (st.st_size == 0) {
      // An empty file (created by hand, or by a crash of an older writer) becomes a new journal.
      const std::string line = version_line();
      if (const int err = write_all(m_fd, line); err != 0 || ::fdatasync(m_fd) != 0) {
        throw IoError("cannot write journal " + path.string() + ": " + std::strerror(err != 0 ? err : errno));
      }
      m_size = line.size();
      return;
    }

    const JournalScan scan = scan_journal(read_file(path), path);
    for (const std::string& warning : scan.replay.warnings) spdlog::warn("{}", warning);
    m_size = scan.valid_end;
    if (scan.replay.torn_tail) {
      spdlog::warn("journal {}: dropping a torn last line left by an interrupted write ({} bytes): {}", path.string(),
                   st.st_size - static_cast<off_t>(scan.valid_end),
                   quote_prefix(scan.replay.torn_tail_text, k_max_quoted_line));
      if (::ftruncate(m_fd, static_cast<off_t>(scan.valid_end)) != 0 || ::fdatasync(m_fd) != 0) {
        throw IoError("cannot repair journal " + path.string() + ": " + std::strerror(errno));
      }
    }
    if (scan.version_line_unterminated) {
      if (const int err = write_all(m_fd, "\n"); err != 0 || ::fdatasync(m_fd) != 0) {
        throw IoError("cannot repair journal " + path.string() + ": " + std::strerror(err != 0 ? err : errno));
      }
      ++m_size;
    }
    m_next_seq = scan.max_seq + 1;
  } catch (...) {
    ::close(m_fd);
    m_fd = -1;
    throw;
  }
}

Journal::~Journal() {
  if (m_fd >= 0) ::close(m_fd);
}

std::uint64_t Journal::next_seq() const {
  std::lock_guard<std::mutex> guard(m_mutex);
  return m_next_seq;
}

std::uint64_t Journal::append(nlohmann::json record) {
  EVOTEAM_CHECK(record.is_object(), "journal records are JSON objects, got " + std::string(record.type_name()));
  std::lock_guard<std::mutex> guard(m_mutex);
  if (m_broken) {
    throw IoError("journal " + m_path.string() + " cannot take more records after a write that could not be undone");
  }

  std::uint64_t seq = m_next_seq;
  if (const auto given = record.find("seq"); given != record.end()) {
    EVOTEAM_CHECK(given->is_number_integer() && given->get<std::int64_t>() >= 0,
                  "journal seq must be a non-negative integer");
    seq = given->get<std::uint64_t>();
    record.erase(given);
  }
  nlohmann::json time = utc_iso_timestamp();
  if (const auto given = record.find("t"); given != record.end()) {
    time = *given;
    record.erase(given);
  }

  // seq and t lead every line so `cat`, `grep` and `sort` read the journal in order; the rest follows.
  const std::string rest = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string line = "{\"seq\":" + std::to_string(seq) +
                     ",\"t\":" + time.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line += rest == "{}" ? std::string("}") : "," + rest.substr(1);
  line += '\n';

  // One write(2) for the whole line; only a full disk or a size limit splits it, and then the partial line
  // is cut off again so the next record does not glue onto it.
  if (const int err = write_all(m_fd, line); err != 0) {
    if (::ftruncate(m_fd, static_cast<off_t>(m_size)) != 0) m_broken = true;
    throw IoError("cannot append to journal " + m_path.string() + ": " + std::strerror(err));
  }
  if (::fdatasync(m_fd) != 0) {
    const int err = errno;
    // After a failed fdatasync the page cache state is unknown; do not pretend later records are safe.
    m_broken = true;
    throw IoError("cannot sync journal " + m_path.string() + ": " + std::strerror(err));
  }
  m_size += line.size();
  m_next_seq = std::max(m_next_seq, seq + 1);
  return seq;
}

}  // namespace evoteam
