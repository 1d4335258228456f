#include "report/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <tuple>

#include <evoteam/core/text.hpp>

namespace evoteam {

namespace {

// The drawing area, in SVG units; the page scales the whole chart to its width.
constexpr double k_width = 900;
constexpr double k_height = 330;
constexpr double k_left = 58;
constexpr double k_right = 14;
constexpr double k_top = 64;          // room for the team-change labels
constexpr double k_bottom = 62;       // axis labels and the failure row
constexpr double k_failure_gap = 14;  // the failure row sits this far under the x axis
constexpr std::size_t k_label_rows = 3;
constexpr double k_label_char_width = 6.4;  // of the 11-unit label font, near enough to plan room

struct Scale {
  double x_min = 0, x_max = 1, y_max = 1;

  double px(double x) const { return k_left + (x - x_min) / (x_max - x_min) * (k_width - k_left - k_right); }
  double py(std::optional<double> y) const {
    const double axis = k_height - k_bottom;
    if (!y) return axis + k_failure_gap;
    return axis - *y / y_max * (axis - k_top);
  }
};

Scale scale_of(const Chart& chart) {
  Scale scale;
  bool any_x = false;
  double y_max = 0;
  const auto see_x = [&](double x) {
    scale.x_min = any_x ? std::min(scale.x_min, x) : x;
    scale.x_max = any_x ? std::max(scale.x_max, x) : x;
    any_x = true;
  };
  for (const ChartPoint& point : chart.points) {
    see_x(point.x);
    if (point.y) y_max = std::max(y_max, *point.y);
  }
  for (const ChartLine& line : chart.lines)
    for (const auto& [x, y] : line.steps) {
      see_x(x);
      if (y) y_max = std::max(y_max, *y);
    }
  if (!any_x) scale.x_min = 0, scale.x_max = 1;
  if (scale.x_max <= scale.x_min) scale.x_max = scale.x_min + 1;
  scale.y_max = y_max > 0 ? y_max * 1.08 : 1;
  return scale;
}

// At most `limit` characters (counting a UTF-8 sequence as one), with an ellipsis when cut.
std::string shortened(const std::string& text, std::size_t limit) {
  std::size_t characters = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (++characters >= limit && i + 1 < text.size()) return text.substr(0, i) + "\u2026";
  }
  return text;
}

// SVG coordinates with one decimal: finer is invisible and costs bytes at ten thousand points.
std::string coord(double value) { return fixed(value, 1); }

// Round tick steps (1, 2, 5 × 10^k) giving about `count` ticks over [low, high].
std::vector<double> ticks(double low, double high, int count) {
  const double raw = (high - low) / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double factor : {1.0, 2.0, 5.0, 10.0})
    if (raw <= factor * magnitude) {
      step = factor * magnitude;
      break;
    }
  std::vector<double> values;
  for (double value = std::ceil(low / step) * step; value <= high + step * 1e-9; value += step) values.push_back(value);
  return values;
}

std::string tick_text(double value) {
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e6) return fixed(value / 1e6, magnitude >= 1e7 ? 0 : 1) + "M";
  if (magnitude >= 1e4) return fixed(value / 1e3, 0) + "k";
  if (magnitude >= 10 || value == std::floor(value)) return fixed(value, 0);
  return fixed(value, magnitude >= 1 ? 1 : 2);
}

// The indices of the points drawn: all of them up to the cap, else one per (cell, colour), with the cell
// growing until the cap holds. Later points win a cell: they sit on top in SVG order anyway.
std::vector<std::size_t> thinned(const Chart& chart, const Scale& scale, std::size_t max_points) {
  std::vector<std::size_t> kept;
  if (chart.points.size() <= max_points) {
    for (std::size_t i = 0; i < chart.points.size(); ++i) kept.push_back(i);
    return kept;
  }
  for (double cell = 1.5;; cell *= 1.5) {
    kept.clear();
    std::set<std::tuple<long, long, std::string>> cells;
    for (std::size_t i = chart.points.size(); i-- > 0;) {
      const ChartPoint& point = chart.points[i];
      const auto key =
          std::make_tuple(std::lround(scale.px(point.x) / cell), std::lround(scale.py(point.y) / cell), point.css);
      if (cells.insert(key).second) kept.push_back(i);
    }
    if (kept.size() <= max_points) break;
  }
  std::reverse(kept.begin(), kept.end());
  return kept;
}

void draw_axes(std::ostringstream& out, const Chart& chart, const Scale& scale) {
  const double axis = k_height - k_bottom;
  out << "<g class=\"axes\">";
  for (double value : ticks(0, scale.y_max, 5)) {
    const std::string y = coord(scale.py(value));
    out << "<line class=\"grid\" x1=\"" << coord(k_left) << "\" x2=\"" << coord(k_width - k_right) << "\" y1=\"" << y
        << "\" y2=\"" << y << "\"/><text class=\"tick\" x=\"" << coord(k_left - 6) << "\" y=\"" << y
        << "\" text-anchor=\"end\" dominant-baseline=\"middle\">" << tick_text(value) << "</text>";
  }
  for (double value : ticks(scale.x_min, scale.x_max, 8)) {
    const std::string x = coord(scale.px(value));
    out << "<line class=\"tickmark\" x1=\"" << x << "\" x2=\"" << x << "\" y1=\"" << coord(axis) << "\" y2=\""
        << coord(axis + 4) << "\"/><text class=\"tick\" x=\"" << x << "\" y=\"" << coord(axis + 30)
        << "\" text-anchor=\"middle\">" << tick_text(value) << "</text>";
  }
  out << "<line class=\"axis\" x1=\"" << coord(k_left) << "\" x2=\"" << coord(k_width - k_right) << "\" y1=\""
      << coord(axis) << "\" y2=\"" << coord(axis) << "\"/>";
  if (!chart.failure_label.empty())
    out << "<text class=\"tick\" x=\"" << coord(k_left - 6) << "\" y=\"" << coord(axis + k_failure_gap)
        << "\" text-anchor=\"end\" dominant-baseline=\"middle\">" << html_escape(chart.failure_label) << "</text>";
  out << "<text class=\"label\" x=\"" << coord((k_left + k_width - k_right) / 2) << "\" y=\"" << coord(k_height - 8)
      << "\" text-anchor=\"middle\">" << html_escape(chart.x_label) << "</text>";
  out << "<text class=\"label\" transform=\"translate(14," << coord((k_top + axis) / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">" << html_escape(chart.y_label) << "</text></g>";
}

void draw_marks(std::ostringstream& out, const Chart& chart, const Scale& scale) {
  const double axis = k_height - k_bottom;
  // Labels take turns over three rows so that changes a few cycles apart stay legible; the whole text is
  // in the hover title.
  for (std::size_t i = 0; i < chart.marks.size(); ++i) {
    const ChartMark& mark = chart.marks[i];
    const double x = scale.px(mark.x);
    const double label_y = k_top - 8 - static_cast<double>(i % k_label_rows) * 17;
    // As much of the label as fits before the next label in its row: at least the cycle ("c11").
    const double room =
        (i + k_label_rows < chart.marks.size() ? scale.px(chart.marks[i + k_label_rows].x) : k_width) - x - 8;
    const std::size_t fits = static_cast<std::size_t>(std::max(3.0, room / k_label_char_width));
    out << "<g class=\"team-change\" data-cycle=\"" << mark.cycle << "\"><title>" << html_escape(mark.detail)
        << "</title><line x1=\"" << coord(x) << "\" x2=\"" << coord(x) << "\" y1=\"" << coord(label_y - 10)
        << "\" y2=\"" << coord(axis) << "\"/><text x=\"" << coord(x + 3) << "\" y=\"" << coord(label_y) << "\">"
        << html_escape(shortened(mark.label, fits)) << "</text></g>";
  }
}

void draw_line(std::ostringstream& out, const ChartLine& line, const Scale& scale) {
  std::ostringstream path;
  std::optional<double> last;
  for (const auto& [x, y] : line.steps) {
    if (!y) continue;
    if (!last)
      path << "M" << coord(scale.px(x)) << ' ' << coord(scale.py(y));
    else if (*y != *last)
      path << "H" << coord(scale.px(x)) << "V" << coord(scale.py(y));
    last = y;
  }
  if (!last) return;
  path << "H" << coord(scale.px(line.steps.back().first));
  out << "<path class=\"line " << line.css << "\" d=\"" << path.str() << "\"><title>" << html_escape(line.name)
      << "</title></path>";
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': escaped += "&amp;"; break;
      case '<': escaped += "&lt;"; break;
      case '>': escaped += "&gt;"; break;
      case '"': escaped += "&quot;"; break;
      case '\'': escaped += "&#39;"; break;
      default: escaped += c;
    }
  }
  return escaped;
}

std::size_t plotted_points(const Chart& chart, std::size_t max_points) {
  return thinned(chart, scale_of(chart), max_points).size();
}

std::string render_chart_svg(const Chart& chart, std::size_t max_points) {
  const Scale scale = scale_of(chart);
  const std::vector<std::size_t> kept = thinned(chart, scale, max_points);
  std::ostringstream out;
  out << "<svg class=\"chart\" id=\"" << html_escape(chart.id) << "\" viewBox=\"0 0 " << k_width << ' ' << k_height
      << "\" data-candidates=\"" << chart.points.size() << "\" data-plotted=\"" << kept.size()
      << "\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">";
  draw_axes(out, chart, scale);
  draw_marks(out, chart, scale);
  out << "<g class=\"points\">";
  for (std::size_t i : kept) {
    const ChartPoint& point = chart.points[i];
    out << "<circle class=\"cand " << point.css << "\" cx=\"" << coord(scale.px(point.x)) << "\" cy=\""
        << coord(scale.py(point.y)) << "\" r=\"3\"><title>" << html_escape(point.label) << "</title></circle>";
  }
  out << "</g>";
  for (const ChartLine& line : chart.lines) draw_line(out, line, scale);
  out << "</svg>";
  return out.str();
}

}  // namespace evoteam
