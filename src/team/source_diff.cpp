#include "team/source_diff.hpp"

#include <algorithm>
#include <set>
#include <sstream>
#include <vector>

#include <evoteam/core/fs.hpp>

namespace evoteam {

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Past this many lines on either side a file counts as one changed region: the table below grows with the product.
constexpr std::size_t k_max_diff_lines = 4000;

// The line edit script from `before` to `after` along a longest common subsequence: '=' kept, '-' deleted,
// '+' inserted.
std::string edit_script(const std::vector<std::string>& before, const std::vector<std::string>& after) {
  const std::size_t n = before.size(), m = after.size();
  std::vector<std::vector<std::uint16_t>> common(n + 1, std::vector<std::uint16_t>(m + 1, 0));
  for (std::size_t i = n; i-- > 0;)
    for (std::size_t j = m; j-- > 0;)
      common[i][j] = before[i] == after[j] ? static_cast<std::uint16_t>(common[i + 1][j + 1] + 1)
                                           : std::max(common[i + 1][j], common[i][j + 1]);
  std::string script;
  std::size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && before[i] == after[j]) {
      script += '=';
      ++i, ++j;
    } else if (j == m || (i < n && common[i + 1][j] >= common[i][j + 1])) {
      script += '-';
      ++i;
    } else {
      script += '+';
      ++j;
    }
  }
  return script;
}

}  // namespace

int changed_regions(const std::string& before_text, const std::string& after_text) {
  if (before_text == after_text) return 0;
  const std::vector<std::string> before = lines_of(before_text), after = lines_of(after_text);
  if (before.size() > k_max_diff_lines || after.size() > k_max_diff_lines) return 1;
  int regions = 0;
  int unchanged_run = k_region_gap_lines;  // a change at the very start opens a region
  for (char op : edit_script(before, after)) {
    if (op == '=') {
      ++unchanged_run;
      continue;
    }
    if (unchanged_run >= k_region_gap_lines) ++regions;
    unchanged_run = 0;
  }
  return std::max(regions, 1);  // texts that differ only in a final newline still differ
}

int changed_regions_between(const std::filesystem::path& before_dir, const std::filesystem::path& after_dir) {
  std::set<std::string> names;
  for (const std::filesystem::path& dir : {before_dir, after_dir})
    for (const std::filesystem::path& file : files_under(dir))
      names.insert(std::filesystem::relative(file, dir).string());
  int regions = 0;
  for (const std::string& name : names) {
    const bool in_before = std::filesystem::is_regular_file(before_dir / name);
    const bool in_after = std::filesystem::is_regular_file(after_dir / name);
    if (in_before != in_after)
      ++regions;
    else
      regions += changed_regions(read_file(before_dir / name), read_file(after_dir / name));
  }
  return regions;
}

}  // namespace evoteam
