#include "eval/result_cache.hpp"

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

namespace evoteam::eval {

std::optional<EvalResult> ResultCache::get(const std::string& key) const {
  const std::filesystem::path file = m_dir / (key + ".json");
  if (!std::filesystem::is_regular_file(file)) return std::nullopt;
  try {
    return EvalResult::from_json(read_json_file(file));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void ResultCache::put(const std::string& key, const EvalResult& result) const {
  evoteam::create_directories(m_dir);
  write_json_atomic(m_dir / (key + ".json"), result.to_json());
}

}  // namespace evoteam::eval
