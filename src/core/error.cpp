#include <evoteam/core/error.hpp>

namespace evoteam {

void throw_check_failure(const char* file, int line, const std::string& message) {
  throw Error(std::string("internal check failed at ") + file + ":" + std::to_string(line) + ": " + message,
              ExitCode::internal);
}

}  // namespace evoteam
