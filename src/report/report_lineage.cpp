// The lineage tree of a run report. A run of hundreds of candidates is a wide, deep tree; drawn as nested
// lists it would be unreadable. So from each root the path to its best descendant is one flat list (the
// run's best path is the first), every other child starts a folded branch drawn the same way, and the
// failed leaves of a node — most of a long run's candidates — fold into one counted line.
#include <algorithm>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>

#include <evoteam/core/text.hpp>

#include "report/report_sections.hpp"
#include "report/svg_chart.hpp"

namespace evoteam {

namespace {

constexpr double k_no_speedup = -std::numeric_limits<double>::infinity();

class LineageTree {
 public:
  explicit LineageTree(const RunReport& report) : m_report(report), m_children(report.candidates.size()) {
    const std::vector<ReportCandidate>& candidates = report.candidates;
    std::unordered_map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < candidates.size(); ++i) index.emplace(candidates[i].id, i);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const auto parent = index.find(candidates[i].parent);
      // A parent recorded after its child (a damaged journal) would make a cycle: the child is a root then.
      if (parent != index.end() && parent->second < i)
        m_children[parent->second].push_back(i);
      else if (index.at(candidates[i].id) == i)
        m_roots.push_back(i);
    }
    // Children come after their parents, so one backward pass sums every subtree.
    m_best.assign(candidates.size(), k_no_speedup);
    m_size.assign(candidates.size(), 1);
    for (std::size_t i = candidates.size(); i-- > 0;) {
      if (candidates[i].counts()) m_best[i] = std::max(m_best[i], *candidates[i].speedup);
      for (std::size_t child : m_children[i]) {
        m_best[i] = std::max(m_best[i], m_best[child]);
        m_size[i] += m_size[child];
      }
    }
    for (const std::string& id : report.best_path()) m_best_path.insert(id);
  }

  // The root holding the run's best first and open; other roots fold as branches, and candidates with no
  // parent and no children (fresh starts that went nowhere) share one folded line.
  std::string render() const {
    std::ostringstream out;
    std::vector<std::size_t> roots = m_roots;
    std::stable_sort(roots.begin(), roots.end(),
                     [this](std::size_t a, std::size_t b) { return m_best[a] > m_best[b]; });
    std::vector<std::size_t> lone;
    for (std::size_t i = 0; i < roots.size(); ++i) {
      if (i == 0)
        render_from(roots[i], out);
      else if (m_children[roots[i]].empty())
        lone.push_back(roots[i]);
      else
        render_branch(roots[i], "start", out);
    }
    if (!lone.empty()) {
      out << "<details class=\"branch\"><summary>" << lone.size() << " more candidate" << (lone.size() == 1 ? "" : "s")
          << " with no parent and no children</summary>";
      for (std::size_t i = 0; i < lone.size(); ++i)
        out << (i ? ", " : "") << html_escape(m_report.candidates[lone[i]].id) << ' '
            << html_escape(verdict_text(m_report.candidates[lone[i]]));
      out << "</details>";
    }
    return out.str();
  }

 private:
  bool failed_leaf(std::size_t i) const { return m_children[i].empty() && !m_report.candidates[i].counts(); }

  std::string label(std::size_t i) const {
    const ReportCandidate& candidate = m_report.candidates[i];
    return "<b>" + html_escape(candidate.id) + "</b> " + html_escape(candidate.role) + " c" +
           std::to_string(candidate.cycle) + " \u00b7 " + html_escape(verdict_text(candidate));
  }

  // The child to continue the flat path with: the one whose subtree holds a better candidate than this node,
  // so the path ends at its best descendant; a failed node goes on to its largest subtree.
  std::optional<std::size_t> next_on_path(std::size_t node, const std::vector<std::size_t>& children) const {
    std::optional<std::size_t> next;
    for (std::size_t child : children) {
      if (!next || m_best[child] > m_best[*next] || (m_best[child] == m_best[*next] && m_size[child] > m_size[*next]))
        next = child;
    }
    const ReportCandidate& candidate = m_report.candidates[node];
    if (next && candidate.counts() && m_best[*next] <= *candidate.speedup) return std::nullopt;
    return next;
  }

  void render_branch(std::size_t branch, const char* kind, std::ostringstream& out) const {
    out << "<details class=\"branch\"><summary>" << kind << ' ' << html_escape(m_report.candidates[branch].id) << ": "
        << m_size[branch] << " candidate" << (m_size[branch] == 1 ? "" : "s") << ", best "
        << (m_best[branch] == k_no_speedup ? "none passed" : fixed(m_best[branch], 2) + "x") << "</summary>";
    render_from(branch, out);
    out << "</details>";
  }

  void render_from(std::size_t root, std::ostringstream& out) const {
    out << "<ol class=\"path\">";
    for (std::optional<std::size_t> node = root; node;) {
      const ReportCandidate& candidate = m_report.candidates[*node];
      out << "<li class=\"n " << verdict_css_class(candidate) << (m_best_path.count(candidate.id) ? " best" : "")
          << "\">" << label(*node);
      std::vector<std::size_t> failed, others;
      for (std::size_t child : m_children[*node]) (failed_leaf(child) ? failed : others).push_back(child);
      const std::optional<std::size_t> next = next_on_path(*node, others);
      if (!failed.empty()) {
        out << "<details class=\"failed\"><summary>" << failed.size() << " failed leaf"
            << (failed.size() == 1 ? "" : "s") << "</summary>";
        for (std::size_t i = 0; i < failed.size(); ++i)
          out << (i ? ", " : "") << html_escape(m_report.candidates[failed[i]].id) << ' '
              << html_escape(verdict_text(m_report.candidates[failed[i]]));
        out << "</details>";
      }
      for (std::size_t branch : others) {
        if (next && branch == *next) continue;
        render_branch(branch, "branch", out);
      }
      out << "</li>";
      node = next;
    }
    out << "</ol>";
  }

  const RunReport& m_report;
  std::vector<std::vector<std::size_t>> m_children;
  std::vector<std::size_t> m_roots;
  std::vector<double> m_best;       // best counting speedup in each subtree
  std::vector<std::size_t> m_size;  // candidates in each subtree
  std::set<std::string> m_best_path;
};

}  // namespace

std::string render_lineage_html(const RunReport& report) {
  if (report.candidates.empty()) return "<p>No candidate was evaluated.</p>";
  return LineageTree(report).render();
}

}  // namespace evoteam
