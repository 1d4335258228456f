#include "team/builtin_common.hpp"

#include <string_view>

#include <evoteam/core/error.hpp>
#include <evoteam/core/text.hpp>

namespace evoteam {

namespace builtin {
std::unique_ptr<TeamMember> make_builtin_optimizer();
std::unique_ptr<TeamMember> make_builtin_debugger();
std::unique_ptr<TeamMember> make_builtin_profiling_scientist();
std::unique_ptr<TeamMember> make_builtin_knowledge_integrator();
std::unique_ptr<TeamMember> make_builtin_disciplinarian(double reverify_ratio);
}  // namespace builtin

namespace {

// The builtin roles by name; a new one is a row here (and its role file under roles/ for LLM teams).
struct BuiltinRole {
  std::string_view name;
  std::unique_ptr<TeamMember> (*make)(double reverify_ratio);
};
const BuiltinRole k_builtin_roles[] = {
    {"optimizer", [](double) { return builtin::make_builtin_optimizer(); }},
    {"debugger", [](double) { return builtin::make_builtin_debugger(); }},
    {"profiling-scientist", [](double) { return builtin::make_builtin_profiling_scientist(); }},
    {"knowledge-integrator", [](double) { return builtin::make_builtin_knowledge_integrator(); }},
    {"disciplinarian", [](double reverify_ratio) { return builtin::make_builtin_disciplinarian(reverify_ratio); }},
};

}  // namespace

std::unique_ptr<TeamMember> make_builtin_member(const std::string& role, double reverify_ratio) {
  for (const BuiltinRole& builtin_role : k_builtin_roles)
    if (builtin_role.name == role) return builtin_role.make(reverify_ratio);
  throw InvalidInput("the builtin team has no role '" + role + "' (it has " +
                     join(k_builtin_roles, ", ", [](const BuiltinRole& known) { return known.name; }) + ")");
}

}  // namespace evoteam
