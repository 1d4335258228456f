// The price table (configs/models.json): per-token prices and context windows, and cost from usage.
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/llm/llm.hpp>

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

namespace evoteam {

namespace {

const std::set<std::string>& text_fields() {
  static const std::set<std::string> fields = {"provider", "source_url", "effective_date", "notes"};
  return fields;
}

ModelInfo parse_model(const std::string& name, const nlohmann::json& entry, const std::string& where) {
  if (!entry.is_object()) throw InvalidInput(where + ": must be an object");
  ModelInfo info;
  info.name = name;
  const std::map<std::string, double*> prices = {
      {"input_cost_per_token", &info.input_cost_per_token},
      {"output_cost_per_token", &info.output_cost_per_token},
      {"cache_read_input_token_cost", &info.cache_read_input_token_cost},
      {"cache_creation_input_token_cost", &info.cache_creation_input_token_cost},
      {"input_cost_per_token_above_200k_tokens", &info.input_cost_per_token_above_200k_tokens},
      {"output_cost_per_token_above_200k_tokens", &info.output_cost_per_token_above_200k_tokens},
      {"cache_read_input_token_cost_above_200k_tokens", &info.cache_read_input_token_cost_above_200k_tokens},
      {"cache_creation_input_token_cost_above_200k_tokens", &info.cache_creation_input_token_cost_above_200k_tokens},
  };
  const std::map<std::string, std::uint64_t*> sizes = {{"max_input_tokens", &info.max_input_tokens},
                                                       {"max_output_tokens", &info.max_output_tokens}};
  for (const auto& [key, value] : entry.items()) {
    const std::string field = where + "." + key;
    if (auto price = prices.find(key); price != prices.end()) {
      if (!value.is_number() || value.get<double>() < 0) throw InvalidInput(field + ": must be a non-negative number");
      *price->second = value.get<double>();
    } else if (auto size = sizes.find(key); size != sizes.end()) {
      if (!value.is_number_integer() || value.get<std::int64_t>() < 0)
        throw InvalidInput(field + ": must be a non-negative integer");
      *size->second = value.get<std::uint64_t>();
    } else if (text_fields().count(key) != 0) {
      if (!value.is_string()) throw InvalidInput(field + ": must be a string");
      if (key == "provider") info.provider = value.get<std::string>();
    } else {
      throw InvalidInput(field + ": unknown field");
    }
  }
  return info;
}

// The price above the long-context threshold when the table gives one, else the base price.
double tier(double base, double above, bool long_context) { return long_context && above > 0 ? above : base; }

}  // namespace

PriceTable PriceTable::load(const std::filesystem::path& path) {
  const nlohmann::json root = read_json_file(path);
  const std::string file = path.string();
  if (!root.is_object()) throw InvalidInput(file + ": must be a JSON object");
  PriceTable table;
  table.m_source = path;
  if (!root.contains("version") || !root.at("version").is_number_integer())
    throw InvalidInput(file + ": 'version' must be an integer");
  table.m_version = root.at("version").get<int>();
  if (root.contains("defaults")) {
    const nlohmann::json& defaults = root.at("defaults");
    if (!defaults.is_object()) throw InvalidInput(file + ": 'defaults' must be an object");
    for (const auto& [provider, model] : defaults.items()) {
      if (!model.is_string()) throw InvalidInput(file + ": defaults." + provider + " must be a string");
      table.m_default_models[provider] = model.get<std::string>();
    }
  }
  if (!root.contains("models") || !root.at("models").is_object())
    throw InvalidInput(file + ": 'models' must be an object");
  for (const auto& [name, entry] : root.at("models").items())
    table.m_models[name] = parse_model(name, entry, file + ": models." + name);
  return table;
}

namespace {

// What may follow a priced name and still be that model: a dated snapshot ("-20250929", "-2025-08-07"), "-latest",
// or a provider's version tag ("@20250929"). Anything else is another model: gpt-5.5 is not gpt-5, and
// claude-sonnet-4-5 is not claude-sonnet-4.
bool is_snapshot_suffix(std::string_view rest) {
  if (rest == "-latest") return true;
  if (rest.size() < 2 || (rest.front() != '-' && rest.front() != '@')) return false;
  const std::string_view date = rest.substr(1);
  auto digits = [](std::string_view text) {
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
  };
  if (date.size() == 8) return digits(date);  // 20250929
  return date.size() == 10 && date[4] == '-' && date[7] == '-' && digits(date.substr(0, 4)) &&
         digits(date.substr(5, 2)) && digits(date.substr(8, 2));  // 2025-08-07
}

}  // namespace

const ModelInfo* PriceTable::find(const std::string& model) const {
  if (auto exact = m_models.find(model); exact != m_models.end()) return &exact->second;
  for (const auto& [name, info] : m_models)
    if (model.size() > name.size() && model.rfind(name, 0) == 0 &&
        is_snapshot_suffix(std::string_view(model).substr(name.size())))
      return &info;
  return nullptr;
}

std::string PriceTable::default_model(const std::string& provider) const {
  auto found = m_default_models.find(provider);
  return found == m_default_models.end() ? std::string() : found->second;
}

double PriceTable::cost(const std::string& model, const Usage& usage) const {
  const ModelInfo* info = find(model);
  if (info == nullptr) {
    if (m_allow_unpriced) return 0;
    throw InvalidInput(m_source.string() + ": no price for model '" + model +
                       "' (add it, or set llm.allow_unpriced_models to true for a local server)");
  }
  const bool long_context = usage.prompt() > 200'000;
  const ModelInfo& p = *info;
  return static_cast<double>(usage.input) *
             tier(p.input_cost_per_token, p.input_cost_per_token_above_200k_tokens, long_context) +
         static_cast<double>(usage.output) *
             tier(p.output_cost_per_token, p.output_cost_per_token_above_200k_tokens, long_context) +
         static_cast<double>(usage.cache_read) *
             tier(p.cache_read_input_token_cost, p.cache_read_input_token_cost_above_200k_tokens, long_context) +
         static_cast<double>(usage.cache_write) *
             tier(p.cache_creation_input_token_cost, p.cache_creation_input_token_cost_above_200k_tokens, long_context);
}

}  // namespace evoteam
