#include "record.hpp"

#include <unistd.h>
#include <cerrno>
#include <cmath>
#include <cstdio>

namespace evoteam_harness {
namespace {

int g_record_fd = -1;

void write_all(int fd, const char* data, std::size_t size) {
  while (size > 0 && fd >= 0) {
    ssize_t written = ::write(fd, data, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      return;  // the evaluator went away; nothing useful left to do
    }
    data += written;
    size -= static_cast<std::size_t>(written);
  }
}

}  // namespace

std::string json_quote(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c >= 0x7F) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          out += escaped;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

void JsonLine::key(const char* name) {
  if (!m_body.empty()) m_body += ",";
  m_body += json_quote(name) + ":";
}

JsonLine& JsonLine::field(const char* name, const std::string& value) {
  key(name);
  m_body += json_quote(value);
  return *this;
}

JsonLine& JsonLine::field(const char* name, const char* value) { return field(name, std::string(value)); }

JsonLine& JsonLine::field(const char* name, double value) {
  key(name);
  if (!std::isfinite(value)) {
    m_body += "null";
  } else {
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", value);
    m_body += text;
  }
  return *this;
}

JsonLine& JsonLine::field(const char* name, std::int64_t value) {
  key(name);
  m_body += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::field(const char* name, std::uint64_t value) {
  key(name);
  m_body += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::field(const char* name, bool value) {
  key(name);
  m_body += value ? "true" : "false";
  return *this;
}

JsonLine& JsonLine::array(const char* name, const std::vector<double>& values) {
  key(name);
  m_body += "[";
  char text[40];
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) m_body += ",";
    if (std::isfinite(values[i])) {
      std::snprintf(text, sizeof text, "%.9g", values[i]);
      m_body += text;
    } else {
      m_body += "null";
    }
  }
  m_body += "]";
  return *this;
}

JsonLine& JsonLine::raw(const char* name, const std::string& json) {
  key(name);
  m_body += json;
  return *this;
}

void open_record_channel(int fd) { g_record_fd = fd; }
int record_fd() { return g_record_fd; }

void emit(const JsonLine& line) {
  const std::string text = line.str();
  write_all(g_record_fd, text.data(), text.size());
}

EmergencyLine& EmergencyLine::text(const char* raw) {
  while (*raw != 0 && m_size + 2 < sizeof m_buffer) m_buffer[m_size++] = *raw++;
  return *this;
}

EmergencyLine& EmergencyLine::number(std::uint64_t value) {
  char digits[24];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  while (count > 0 && m_size + 2 < sizeof m_buffer) m_buffer[m_size++] = digits[--count];
  return *this;
}

EmergencyLine& EmergencyLine::signed_number(std::int64_t value) {
  if (value < 0) {
    text("-");
    return number(static_cast<std::uint64_t>(-(value + 1)) + 1);
  }
  return number(static_cast<std::uint64_t>(value));
}

EmergencyLine& EmergencyLine::hex(std::uint64_t value) {
  static const char k_digits[] = "0123456789abcdef";
  text("\"0x");
  char digits[17];
  int count = 0;
  do {
    digits[count++] = k_digits[value & 15];
    value >>= 4;
  } while (value != 0);
  while (count > 0 && m_size + 2 < sizeof m_buffer) m_buffer[m_size++] = digits[--count];
  return text("\"");
}

void EmergencyLine::write_out() const {
  char line[sizeof m_buffer];
  std::size_t size = 0;
  for (; size < m_size; ++size) line[size] = m_buffer[size];
  line[size++] = '\n';
  write_all(g_record_fd, line, size);
}

}  // namespace evoteam_harness
