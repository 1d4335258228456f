#include "team/builtin_common.hpp"

#include <algorithm>
#include <sstream>

namespace evoteam::builtin {

std::string fixed(double value, int digits) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(digits);
  out << value;
  return out.str();
}

std::string describe(const ParamValues& params) {
  std::string text;
  for (const auto& [name, value] : params) text += (text.empty() ? "" : ",") + name + "=" + value;
  return text;
}

Move make_move(const ParamValues& from, const ParamValues& to) {
  Move move{to, {}, ""};
  for (const auto& [name, value] : to) {
    auto it = from.find(name);
    std::string before = it == from.end() ? "?" : it->second;
    if (before == value) continue;
    move.changed.push_back(name);
    move.description += (move.description.empty() ? "" : ", ") + name + " " + before + "→" + value;
  }
  return move;
}

std::vector<Move> neighbour_moves(const ParamValues& from, const std::vector<ParamSpec>& space,
                                  const std::vector<std::string>& focus, std::mt19937_64& rng) {
  std::vector<std::pair<int, Move>> ranked;
  for (const ParamSpec& spec : space) {
    auto current = from.find(spec.name);
    auto position = std::find(spec.values.begin(), spec.values.end(),
                              current == from.end() ? spec.default_value : current->second);
    if (position == spec.values.end()) continue;
    std::size_t index = static_cast<std::size_t>(position - spec.values.begin());
    auto rank_it = std::find(focus.begin(), focus.end(), spec.name);
    int rank = rank_it == focus.end() ? static_cast<int>(focus.size()) : static_cast<int>(rank_it - focus.begin());
    for (int step : {-1, 1}) {
      if ((step < 0 && index == 0) || index + step >= spec.values.size()) continue;
      ParamValues to = from;
      to[spec.name] = spec.values[index + step];
      ranked.emplace_back(rank, make_move(from, to));
    }
  }
  std::shuffle(ranked.begin(), ranked.end(), rng);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Move> moves;
  for (auto& [rank, move] : ranked) moves.push_back(std::move(move));
  return moves;
}

ParamValues random_point(const std::vector<ParamSpec>& space, std::mt19937_64& rng) {
  ParamValues point;
  for (const ParamSpec& spec : space) {
    std::uniform_int_distribution<std::size_t> pick(0, spec.values.size() - 1);
    point[spec.name] = spec.values[pick(rng)];
  }
  return point;
}

std::vector<std::string> current_focus(const TurnContext& context) {
  std::string list;
  std::size_t at = context.handoff_note.find("focus=");
  if (at != std::string::npos) {
    list = context.handoff_note.substr(at + 6);
    list = list.substr(0, list.find_first_of(" ;\n"));
  } else if (context.team->knowledge != KnowledgeMode::none) {
    std::vector<KnowledgeEntry> notes = context.knowledge->entries(KnowledgeKind::hardware);
    for (auto it = notes.rbegin(); it != notes.rend() && list.empty(); ++it)
      if (auto focus = it->fields.find("focus"); focus != it->fields.end()) list = focus->second;
  }
  std::vector<std::string> focus;
  std::stringstream stream(list);
  for (std::string name; std::getline(stream, name, ',');)
    if (!name.empty()) focus.push_back(name);
  return focus;
}

std::optional<EvaluationRecord> lineage_head(const TurnContext& context) {
  RunHistory history = context.lab->snapshot();
  if (std::optional<EvaluationRecord> best = history.best()) return best;
  if (!history.evaluations.empty()) return history.evaluations.front();
  return std::nullopt;
}

}  // namespace evoteam::builtin
