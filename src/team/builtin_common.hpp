#pragma once
// Helpers shared by the builtin rule-based roles: moves in the param space and the profile-guided focus.
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <evoteam/team.hpp>

namespace evoteam::builtin {

struct Move {
  ParamValues params;
  std::vector<std::string> changed;  // names of the params that differ from the parent
  std::string description;           // "tile_m 16→32, unroll 1→4"
};

// Single-param moves to adjacent values of each param, in `focus` order first, random within equal rank.
std::vector<Move> neighbour_moves(const ParamValues& from, const std::vector<ParamSpec>& space,
                                  const std::vector<std::string>& focus, std::mt19937_64& rng);
// A uniformly random point of the space.
ParamValues random_point(const std::vector<ParamSpec>& space, std::mt19937_64& rng);
Move make_move(const ParamValues& from, const ParamValues& to);

// The params ranked by measured effect, as the Profiling Scientist last recorded them ("focus=a,b,c" in its
// hand-off note, else the newest hardware observation with a focus field).
std::vector<std::string> current_focus(const TurnContext& context);

// Passing, not rejected; the record the lineage continues from.
std::optional<EvaluationRecord> lineage_head(const TurnContext& context);

std::string fixed(double value, int digits = 2);
std::string describe(const ParamValues& params);

}  // namespace evoteam::builtin
