#include "team/builtin_common.hpp"

#include <evoteam/core/error.hpp>

namespace evoteam {

namespace builtin {
std::unique_ptr<TeamMember> make_builtin_optimizer();
std::unique_ptr<TeamMember> make_builtin_debugger();
std::unique_ptr<TeamMember> make_builtin_profiling_scientist();
std::unique_ptr<TeamMember> make_builtin_knowledge_integrator();
std::unique_ptr<TeamMember> make_builtin_disciplinarian(double reverify_ratio);
}  // namespace builtin

std::unique_ptr<TeamMember> make_builtin_member(const std::string& role, double reverify_ratio) {
  if (role == "optimizer") return builtin::make_builtin_optimizer();
  if (role == "debugger") return builtin::make_builtin_debugger();
  if (role == "profiling-scientist") return builtin::make_builtin_profiling_scientist();
  if (role == "knowledge-integrator") return builtin::make_builtin_knowledge_integrator();
  if (role == "disciplinarian") return builtin::make_builtin_disciplinarian(reverify_ratio);
  throw InvalidInput("the builtin team has no role '" + role +
                     "' (it has optimizer, debugger, profiling-scientist, "
                     "knowledge-integrator, disciplinarian)");
}

}  // namespace evoteam
