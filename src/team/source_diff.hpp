#pragma once
// How many separate places a candidate's code changed relative to its parent: the code half of its change count
// (the other half is its changed params). Both teams' candidates are counted the same way, so the
// changes_per_candidate signal reads one fact whichever team wrote them.
#include <filesystem>
#include <string>

namespace evoteam {

// Changed regions between two texts, by lines: runs of inserted, deleted or replaced lines, where runs closer than
// k_region_gap_lines unchanged lines count as one region (one edit often touches a line and its neighbours).
inline constexpr int k_region_gap_lines = 3;
int changed_regions(const std::string& before, const std::string& after);

// The sum over every file in either directory; a file only one side has is one region.
int changed_regions_between(const std::filesystem::path& before_dir, const std::filesystem::path& after_dir);

}  // namespace evoteam
