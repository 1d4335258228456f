#pragma once
// One chart as inline SVG, drawn by hand: a scatter of candidates, step lines (best so far) and vertical
// marks (team changes). Hand-written because the report must open from file:// with no network and no
// script library, and a scatter with a step line is a few hundred lines of SVG, not a plotting package.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace evoteam {

struct ChartPoint {
  double x = 0;
  std::optional<double> y;  // none: it failed, drawn on the failure row under the axis
  std::string css;          // its colour class (v-pass, v-build ...)
  std::string label;        // the hover text
};

// A step line through (x, y) pairs in x order, stepping up where y changes; y none before it starts.
struct ChartLine {
  std::string name;
  std::string css;
  std::vector<std::pair<double, std::optional<double>>> steps;
};

struct ChartMark {
  double x = 0;
  int cycle = 0;
  std::string label;   // short, drawn beside the line
  std::string detail;  // the hover text: what changed and the signals that caused it
};

struct Chart {
  std::string id;
  std::string x_label;
  std::string y_label;
  std::vector<ChartPoint> points;
  std::vector<ChartLine> lines;
  std::vector<ChartMark> marks;
  // The row under the axis where points without a y sit; empty: a chart with no such points draws no row label.
  std::string failure_label = "failed";
};

// The chart as an <svg class="chart" id=... data-candidates=N data-plotted=M>. Above max_points the points
// are thinned to one per small cell and colour (points hidden under others go first); lines and marks never
// are. Each drawn point is a <circle class="cand ...">, each mark a <g class="team-change" data-cycle=N>.
std::string render_chart_svg(const Chart& chart, std::size_t max_points);

// How many points render_chart_svg draws of this chart at this cap.
std::size_t plotted_points(const Chart& chart, std::size_t max_points);

// Text made safe for HTML element content and attribute values.
std::string html_escape(std::string_view text);

}  // namespace evoteam
