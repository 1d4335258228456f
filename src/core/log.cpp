#include <evoteam/core/log.hpp>

#include <cstdlib>
#include <mutex>
#include <regex>
#include <set>
#include <vector>

#include <spdlog/sinks/ansicolor_sink.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/basic_file_sink.h>

#include <evoteam/core/config.hpp>

namespace evoteam {

namespace {

// Every log line passes through this sink, which redacts the payload before the real sinks see it.
class RedactingSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  void set_console(spdlog::sink_ptr console) {
    std::lock_guard<std::mutex> lock(mutex_);
    m_console = std::move(console);
  }
  void set_file(spdlog::sink_ptr file) {
    std::lock_guard<std::mutex> lock(mutex_);
    m_file = std::move(file);
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::string clean = redact(std::string_view(msg.payload.data(), msg.payload.size()));
    spdlog::details::log_msg copy = msg;
    copy.payload = clean;
    if (m_console && m_console->should_log(copy.level)) m_console->log(copy);
    if (m_file) m_file->log(copy);
  }
  void flush_() override {
    if (m_console) m_console->flush();
    if (m_file) m_file->flush();
  }

 private:
  spdlog::sink_ptr m_console;
  spdlog::sink_ptr m_file;
};

std::shared_ptr<RedactingSink>& root_sink() {
  static std::shared_ptr<RedactingSink> sink = std::make_shared<RedactingSink>();
  return sink;
}

spdlog::level::level_enum console_level(Verbosity verbosity) {
  switch (verbosity) {
    case Verbosity::quiet: return spdlog::level::warn;
    case Verbosity::normal: return spdlog::level::info;
    case Verbosity::verbose: return spdlog::level::debug;
    case Verbosity::debug: return spdlog::level::trace;
  }
  return spdlog::level::info;
}

// The registered secret variables (add_secret_variables), behind one lock: registration happens as the library
// loads, redaction from any thread.
struct SecretVariables {
  std::mutex mutex;
  std::set<std::string> names;
  std::set<std::string> values;  // add_secret_values
};
SecretVariables& secret_variables_registry() {
  static SecretVariables registry;
  return registry;
}

}  // namespace

void setup_console_logging(Verbosity verbosity) {
  auto console = std::make_shared<spdlog::sinks::ansicolor_stderr_sink_mt>();
  const char* no_color = std::getenv("NO_COLOR");
  // The colour sink already drops colour when stderr is not a TTY; NO_COLOR turns it off everywhere.
  console->set_color_mode(no_color != nullptr && *no_color != '\0' ? spdlog::color_mode::never
                                                                   : spdlog::color_mode::automatic);
  console->set_pattern("evoteam: %^%l%$: %v");
  console->set_level(console_level(verbosity));
  root_sink()->set_console(console);
  auto logger = std::make_shared<spdlog::logger>("evoteam", root_sink());
  logger->set_level(spdlog::level::trace);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

void add_log_file(const std::filesystem::path& path) {
  auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path.string(), /*truncate=*/false);
  file->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l %v");
  file->set_level(spdlog::level::trace);
  root_sink()->set_file(file);
}

void remove_log_file() { root_sink()->set_file(nullptr); }

void add_secret_variables(const std::vector<std::string>& names) {
  SecretVariables& registry = secret_variables_registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.names.insert(names.begin(), names.end());
}

std::vector<std::string> secret_variables() {
  SecretVariables& registry = secret_variables_registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return {registry.names.begin(), registry.names.end()};
}

void add_secret_values(const std::vector<std::string>& values) {
  SecretVariables& registry = secret_variables_registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  for (const std::string& value : values)
    if (value.size() >= 8) registry.values.insert(value);
}

std::string redact(std::string_view text) {
  std::string result(text);
  std::vector<std::string> values;
  for (const std::string& name : secret_variables())
    if (const char* value = std::getenv(name.c_str()); value != nullptr) values.emplace_back(value);
  {
    SecretVariables& registry = secret_variables_registry();
    std::lock_guard<std::mutex> lock(registry.mutex);
    values.insert(values.end(), registry.values.begin(), registry.values.end());
  }
  for (const std::string& value : values) {
    if (value.size() < 8) continue;
    for (std::size_t pos; (pos = result.find(value)) != std::string::npos;)
      result.replace(pos, value.size(), "[REDACTED]");
  }
  // A URL's user information (http://user:password@host) is a secret whatever its length.
  static const std::regex user_information(R"((://)[^/\s@]+@)");
  result = std::regex_replace(result, user_information, "$1[REDACTED]@");
  static const std::regex patterns(
      R"((Bearer\s+)[A-Za-z0-9._~+/=-]+|((?:x-api-key|authorization)\s*[:=]\s*"?(?:Bearer\s+)?)[^\s",]+|sk-[A-Za-z0-9_-]{8,})",
      std::regex::icase);
  return std::regex_replace(result, patterns, "$1$2[REDACTED]");
}

}  // namespace evoteam
