// `evoteam import` of a FlashInfer-Trace Definition and its workloads, written to a task directory and loaded back.
// Input that starts with '{' (or blank) is a Definition's text, then after a NUL its workload lines. Any other input
// is structure-aware: its first byte picks a published definition (with its workloads where we keep them), and each
// following pair of bytes is one edit of it — a table emptied, a tensor or axis renamed (to another name, "..", "",
// a name the reference's run() does not take), the reference's signature changed, a field dropped, an axis or dtype
// given an odd value — so the shapes a byte-level mutator rarely writes are reached at once.
#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/trace/trace_import.hpp>

#include "fuzz/fuzz_support.hpp"

namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

struct Seed {
  const char* definition;  // under the source tree
  const char* workloads;   // "" when none is kept
};

const std::array<Seed, 5> k_seeds = {{
    {"tests/data/flashinfer_trace/definitions/gemm_n4096_k4096.json",
     "tests/data/flashinfer_trace/workloads/gemm_n4096_k4096.jsonl"},
    {"tests/data/flashinfer_trace/definitions/gqa_paged_decode_h32_kv8_d128_ps1.json",
     "tests/data/flashinfer_trace/workloads/gqa_paged_decode_h32_kv8_d128_ps1.jsonl"},
    {"tests/data/flashinfer_trace/definitions/mla_paged_decode_h16_ckv512_kpe64_ps1.json", ""},
    {"tests/data/flashinfer_trace/definitions/gdn_prefill_qk4_v8_d128_k_last.json", ""},
    {"kernels/flashinfer_trace/published/definitions/rmsnorm/fused_add_rmsnorm_h2048.json", ""},
}};

const std::array<const char*, 10> k_names = {"Z", "..", "", "a b", "1x", "x/y", "A", "M", "output", "hidden_states"};
const std::array<const char*, 6> k_dtypes = {"float16", "int8", "float4_e2m1", "", "bfloat16", "float8_e4m3fn"};

std::string source_text(const std::string& relative) {
  return relative.empty() ? std::string() : evoteam::read_file(fs::path(EVOTEAM_SOURCE_DIR) / relative);
}

// The key at position `index` (modulo its size) of an object; "" for an empty one.
std::string key_at(const ojson& object, std::uint8_t index) {
  if (!object.is_object() || object.empty()) return "";
  auto it = object.begin();
  std::advance(it, index % object.size());
  return it.key();
}

// The object with `from` renamed `to`, its order kept (the order is the entry point's).
ojson renamed(const ojson& object, const std::string& from, const std::string& to) {
  ojson result = ojson::object();
  for (const auto& [key, value] : object.items()) result[key == from ? to : key] = value;
  return result;
}

void edit(ojson& definition, std::uint8_t op, std::uint8_t arg) {
  static const std::array<const char*, 3> k_tables = {"inputs", "outputs", "axes"};
  const char* table = k_tables[arg % k_tables.size()];
  const std::string name = k_names[arg % k_names.size()];
  switch (op % 9) {
    case 0: definition[table] = ojson::object(); break;
    case 1:
      if (definition.contains(table) && definition[table].is_object())
        definition[table] = renamed(definition[table], key_at(definition[table], arg / 3), name);
      break;
    case 2: {  // the reference's run() takes other names, or none
      std::string parameters;
      if (definition.contains("inputs") && definition["inputs"].is_object())
        for (const auto& [key, value] : definition["inputs"].items())
          parameters += (parameters.empty() ? "" : ", ") + (arg % 4 == 0 && parameters.empty() ? name : key);
      definition["reference"] =
          arg % 5 == 1 ? std::string("import torch\n") : "def run(" + parameters + "):\n    pass\n";
      break;
    }
    case 3: {
      static const std::array<const char*, 6> k_fields = {"name",    "axes",      "inputs",
                                                          "outputs", "reference", "constraints"};
      definition.erase(k_fields[arg % k_fields.size()]);
      break;
    }
    case 4: {  // an axis const with an odd value, or var
      if (!definition.contains("axes") || !definition["axes"].is_object() || definition["axes"].empty()) break;
      static const std::array<long long, 5> k_values = {0, -1, 1, 3, 9223372036854775807LL};
      ojson& axis = definition["axes"][key_at(definition["axes"], arg / 5)];
      axis =
          arg % 6 == 0 ? ojson{{"type", "var"}} : ojson{{"type", "const"}, {"value", k_values[arg % k_values.size()]}};
      break;
    }
    case 5: {  // a dtype another name, or no name
      if (!definition.contains("inputs") || !definition["inputs"].is_object() || definition["inputs"].empty()) break;
      ojson& tensor = definition["inputs"][key_at(definition["inputs"], arg / 6)];
      if (tensor.is_object()) tensor["dtype"] = arg % 7 == 0 ? ojson(16) : ojson(k_dtypes[arg % k_dtypes.size()]);
      break;
    }
    case 6: {  // a shape naming another axis, or no list
      if (!definition.contains("outputs") || !definition["outputs"].is_object() || definition["outputs"].empty()) break;
      ojson& tensor = definition["outputs"][key_at(definition["outputs"], arg / 2)];
      if (tensor.is_object()) tensor["shape"] = arg % 2 == 0 ? ojson(nullptr) : ojson::array({name});
      break;
    }
    case 7: definition["name"] = name; break;
    case 8: definition["constraints"] = ojson::array({name + " == M + 1", "M >= 1 and M <= 8"}); break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = evoteam::fuzz::as_text(data, size);
  std::string definition_text;
  std::string workloads_text;
  if (text.empty() || text[0] == '{' || text[0] == ' ' || text[0] == '\n') {
    const std::vector<std::string> parts = evoteam::fuzz::split_at_nul(text);
    definition_text = parts[0];
    if (parts.size() > 1) workloads_text = parts[1];
  } else {
    const Seed& seed = k_seeds[static_cast<std::uint8_t>(text[0]) % k_seeds.size()];
    static std::array<std::string, k_seeds.size()> definitions, workloads;
    const std::size_t index = static_cast<std::uint8_t>(text[0]) % k_seeds.size();
    if (definitions[index].empty()) {
      definitions[index] = source_text(seed.definition);
      workloads[index] = source_text(seed.workloads);
    }
    ojson definition = ojson::parse(definitions[index]);
    for (std::size_t i = 1; i + 1 < text.size(); i += 2)
      edit(definition, static_cast<std::uint8_t>(text[i]), static_cast<std::uint8_t>(text[i + 1]));
    definition_text = definition.dump(-1, ' ', false, ojson::error_handler_t::replace);
    workloads_text = workloads[index];
  }
  const fs::path dir = evoteam::fuzz::scratch_dir() / "import";
  std::error_code error;
  fs::remove_all(dir, error);
  fs::create_directories(dir);
  evoteam::fuzz::write_text(dir / "definition.json", definition_text);
  evoteam::fuzz::write_text(dir / "workloads.jsonl", workloads_text);
  const bool strict = size % 2 == 1;
  evoteam::fuzz::expect_clean_outcome(
      [&] { evoteam::import_definition(dir / "definition.json", dir / "workloads.jsonl", dir / "task", strict); });
  return 0;
}
