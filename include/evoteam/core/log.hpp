#pragma once
// Logging on spdlog: human console output on stderr (colour only on a TTY without NO_COLOR), optionally a
// log file inside the run directory. Every message passes through redact() so provider keys and
// Authorization headers never reach a log.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/spdlog.h>

namespace evoteam {

enum class Verbosity { quiet, normal, verbose, debug };
class Config;
// log.verbosity: the console level when no -q/-v flag is given.
Verbosity configured_verbosity(const Config& config);

void setup_console_logging(Verbosity verbosity);
// Adds (or replaces) a file sink writing everything at debug level to `path`.
void add_log_file(const std::filesystem::path& path);
void remove_log_file();

// The environment variables whose values are secrets. Core knows no provider: the module that reads a secret
// registers its variable (the LLM provider table registers every provider's key as the library loads). A name
// registered twice counts once.
void add_secret_variables(const std::vector<std::string>& names);
std::vector<std::string> secret_variables();
// Secrets that live in no variable of the daemon's own (a value given as agent.cli.env NAME=VALUE, a password in a
// URL): redacted like the variables' values. Values shorter than 8 characters are ignored, as for variables.
void add_secret_values(const std::vector<std::string>& values);

// Replaces secrets in text: values of the registered secret variables present in the environment and the
// registered secret values, a URL's user information (://user:password@), "Bearer ..." tokens, x-api-key /
// Authorization header values, and sk-... shaped keys.
std::string redact(std::string_view text);

}  // namespace evoteam
