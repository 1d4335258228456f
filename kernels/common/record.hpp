#pragma once
// The harness's result record: JSON lines written on a dedicated file descriptor that the evaluator opened
// for it (never stdout or stderr, which the candidate can print to). One line per event; the evaluator reads
// them in order, so a crash or a kill still leaves every event before it.
#include <cstdint>
#include <string>
#include <vector>

namespace evoteam_harness {

class JsonLine {
 public:
  JsonLine& field(const char* key, const std::string& value);
  JsonLine& field(const char* key, const char* value);
  JsonLine& field(const char* key, double value);  // non-finite values become null
  JsonLine& field(const char* key, std::int64_t value);
  JsonLine& field(const char* key, int value) { return field(key, static_cast<std::int64_t>(value)); }
  JsonLine& field(const char* key, std::uint64_t value);
  JsonLine& field(const char* key, bool value);
  JsonLine& array(const char* key, const std::vector<double>& values);
  // `json` must already be valid JSON.
  JsonLine& raw(const char* key, const std::string& json);
  std::string str() const { return "{" + m_body + "}\n"; }
  bool empty() const { return m_body.empty(); }

 private:
  void key(const char* name);
  std::string m_body;
};

std::string json_quote(const std::string& text);

// Where records go. open() is called once at start-up with the fd from --result-fd.
void open_record_channel(int fd);
int record_fd();
void emit(const JsonLine& line);

// Builds one record line in a fixed buffer with async-signal-safe calls only, for the fault and watchdog
// handlers.
class EmergencyLine {
 public:
  EmergencyLine& text(const char* raw);
  EmergencyLine& number(std::uint64_t value);
  EmergencyLine& signed_number(std::int64_t value);
  EmergencyLine& hex(std::uint64_t value);
  void write_out() const;  // appends "\n" and writes to the record channel

 private:
  char m_buffer[1024];
  std::size_t m_size = 0;
};

}  // namespace evoteam_harness
