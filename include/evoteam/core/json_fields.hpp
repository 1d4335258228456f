#pragma once
// Tolerant reading of JSON that is untrusted or may be damaged (a provider's reply, a run's files being written):
// a field that is absent or of another type reads as empty instead of throwing nlohmann's library exception.
#include <string>

#include <nlohmann/json.hpp>

namespace evoteam {

// The string field `key` of `object`, or "" when `object` is no object, or the field is absent or not a string.
std::string text_or(const nlohmann::json& object, const char* key);

}  // namespace evoteam
