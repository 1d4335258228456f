#include <evoteam/core/error.hpp>

#include <system_error>

namespace evoteam {

std::string errno_text(int err) { return std::system_category().message(err); }

void throw_check_failure(const char* file, int line, const std::string& message) {
  throw Error(std::string("internal check failed at ") + file + ":" + std::to_string(line) + ": " + message,
              ExitCode::internal);
}

}  // namespace evoteam
