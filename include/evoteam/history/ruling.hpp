#pragma once
// A ruling on a candidate is data: what kind of judgement it is, and the reviewer's words for people. Decisions
// read the kind; the text is only ever shown.
#include <optional>
#include <string>
#include <string_view>

namespace evoteam {

enum class RulingKind {
  review,                 // a reviewer's judgement in its own words (accepted or rejected)
  several_changes,        // rejected for bundling several changes at once: measured, but the gain is not attributed
  reached_by_one_change,  // a several-changes rejection lifted: one change from its parent reaches the candidate
  slid_back,              // the lab's binding ruling: it dropped a once-adopted constraint the run's best meets
  reverification,         // re-run with fresh seeds (a failure rejects the candidate)
};

// "review", "several_changes", ... as the journal spells them.
std::string to_string(RulingKind kind);
std::optional<RulingKind> parse_ruling_kind(std::string_view text);
// The kind of a ruling journaled before kinds were recorded, read once from the words it was written with.
RulingKind ruling_kind_of_text(std::string_view text);

struct Ruling {
  RulingKind kind = RulingKind::review;
  std::string text;
};

}  // namespace evoteam
