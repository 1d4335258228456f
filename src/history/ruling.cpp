#include <evoteam/history/ruling.hpp>

#include <utility>

namespace evoteam {

namespace {

constexpr std::pair<RulingKind, const char*> k_ruling_kind_names[] = {
    {RulingKind::review, "review"},
    {RulingKind::several_changes, "several_changes"},
    {RulingKind::reached_by_one_change, "reached_by_one_change"},
    {RulingKind::slid_back, "slid_back"},
    {RulingKind::reverification, "reverification"},
};

// How the rulings of each kind began when only their text was journaled (builtin_disciplinarian.cpp and lab.cpp
// wrote them so).
constexpr std::pair<RulingKind, std::string_view> k_legacy_ruling_openings[] = {
    {RulingKind::several_changes, "several changes"},
    {RulingKind::reached_by_one_change, "reached by one change from "},
    {RulingKind::reached_by_one_change, "accepted: reached by one change from "},
    {RulingKind::slid_back, "slid back from "},
    {RulingKind::reverification, "re-verified with fresh seeds"},
    {RulingKind::reverification, "re-verification with fresh seeds"},
};

}  // namespace

std::string to_string(RulingKind kind) {
  for (const auto& [known, name] : k_ruling_kind_names)
    if (known == kind) return name;
  return "review";
}

std::optional<RulingKind> parse_ruling_kind(std::string_view text) {
  for (const auto& [kind, name] : k_ruling_kind_names)
    if (text == name) return kind;
  return std::nullopt;
}

RulingKind ruling_kind_of_text(std::string_view text) {
  for (const auto& [kind, opening] : k_legacy_ruling_openings)
    if (text.substr(0, opening.size()) == opening) return kind;
  return RulingKind::review;
}

}  // namespace evoteam
