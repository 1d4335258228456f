#include <evoteam/core/json_fields.hpp>

namespace evoteam {

std::string text_or(const nlohmann::json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object.at(key).is_string()) return "";
  return object.at(key).get<std::string>();
}

}  // namespace evoteam
