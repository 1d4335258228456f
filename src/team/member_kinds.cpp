// The member kinds: who acts for a role in a turn, by name, with the maker of its member (team.hpp).
#include <evoteam/core/error.hpp>
#include <evoteam/llm/provider_table.hpp>
#include <evoteam/team/cli_team.hpp>
#include <evoteam/team/llm_team.hpp>
#include <evoteam/team/team.hpp>

namespace evoteam {

namespace {

std::unique_ptr<TeamMember> make_builtin_kind_member(const RoleAssignment& role, const MemberSupport& support) {
  return make_builtin_member(role.name, support.reverify_ratio);
}

std::unique_ptr<TeamMember> make_llm_kind_member(const RoleAssignment& role, const MemberSupport& support) {
  EVOTEAM_CHECK(support.llm != nullptr, "LLM members need the run's LLM team");
  return support.llm->make_member(role);
}

std::unique_ptr<TeamMember> make_cli_kind_member(const RoleAssignment& role, const MemberSupport& support) {
  EVOTEAM_CHECK(support.cli != nullptr, "CLI members need the run's CLI team");
  return support.cli->make_member(role);
}

}  // namespace

const std::vector<MemberKindInfo>& member_kinds() {
  static const std::vector<MemberKindInfo> table = {
      {MemberKind::builtin, "builtin", make_builtin_kind_member},
      {MemberKind::llm, "llm", make_llm_kind_member},
      {MemberKind::cli, "cli", make_cli_kind_member},
  };
  return table;
}

MemberKind member_kind_of_provider(const std::string& provider) {
  // An unknown name is left to the LLM team, whose provider settings refuse it naming the known ones.
  const ProviderInfo* info = find_provider(provider);
  return info != nullptr && info->protocol == ProviderProtocol::none ? MemberKind::builtin : MemberKind::llm;
}

namespace {

const MemberKindInfo& kind_info(MemberKind kind) {
  for (const MemberKindInfo& info : member_kinds())
    if (info.kind == kind) return info;
  throw_check_failure(__FILE__, __LINE__, "a member kind without a row in the member kind table");
}

}  // namespace

std::string to_string(MemberKind kind) { return std::string(kind_info(kind).name); }

MemberFactory member_factory(MemberKind kind, MemberSupport support) {
  const MemberKindInfo& run_kind = kind_info(kind);
  return [&run_kind, support](const RoleAssignment& role) {
    const MemberKindInfo& info =
        support.cli != nullptr && support.cli->serves(role.name) ? kind_info(MemberKind::cli) : run_kind;
    return info.make(role, support);
  };
}

}  // namespace evoteam
