// `evoteam import` against the published FlashInfer-Trace definitions our CUDA tasks follow: importing each gives
// the axes, tensors, dtypes, shape expressions, scalars and constraints of our task.json, except for the
// differences listed below with their reasons; any other difference fails. Findings name file and field.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/task/task.hpp>
#include <evoteam/trace/trace_import.hpp>

#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

namespace fs = std::filesystem;

const fs::path k_source = EVOTEAM_SOURCE_DIR;
const fs::path k_data = k_source / "tests" / "data" / "flashinfer_trace";

std::string squeeze(const std::string& text) {
  std::string result;
  for (char c : text)
    if (c != ' ') result += c;
  return result;
}

std::string shape_text(const std::vector<std::string>& shape) {
  std::string text;
  for (const std::string& dim : shape) text += (text.empty() ? "" : ",") + squeeze(dim);
  return "[" + text + "]";
}

void compare_tensors(const std::string& section, const std::vector<TensorSpec>& ours,
                     const std::vector<TensorSpec>& imported, std::set<std::string>& differences) {
  for (const TensorSpec& tensor : ours) {
    const auto other =
        std::find_if(imported.begin(), imported.end(), [&](const TensorSpec& t) { return t.name == tensor.name; });
    if (other == imported.end()) {
      differences.insert(section + "." + tensor.name + ": only in ours");
      continue;
    }
    if (tensor.dtype != other->dtype)
      differences.insert(section + "." + tensor.name + ".dtype: " + to_string(tensor.dtype) + " (ours) vs " +
                         to_string(other->dtype));
    if (shape_text(tensor.shape) != shape_text(other->shape))
      differences.insert(section + "." + tensor.name + ".shape: " + shape_text(tensor.shape) + " (ours) vs " +
                         shape_text(other->shape));
  }
  for (const TensorSpec& tensor : imported)
    if (std::none_of(ours.begin(), ours.end(), [&](const TensorSpec& t) { return t.name == tensor.name; }))
      differences.insert(section + "." + tensor.name + ": only in the import");
}

// What differs between our task and the imported one, one line per difference.
std::set<std::string> differences(const Task& ours, const Task& imported) {
  std::set<std::string> result;
  for (const Axis& axis : ours.axes) {
    const Axis* other = imported.find_axis(axis.name);
    if (other == nullptr)
      result.insert("axes." + axis.name + ": only in ours");
    else if (axis.is_const != other->is_const || (axis.is_const && axis.value != other->value))
      result.insert("axes." + axis.name + ": " + (axis.is_const ? std::to_string(axis.value) : "var") + " (ours) vs " +
                    (other->is_const ? std::to_string(other->value) : "var"));
  }
  for (const Axis& axis : imported.axes)
    if (ours.find_axis(axis.name) == nullptr) result.insert("axes." + axis.name + ": only in the import");
  compare_tensors("inputs", ours.inputs, imported.inputs, result);
  compare_tensors("outputs", ours.outputs, imported.outputs, result);
  for (const ScalarSpec& scalar : ours.scalars) {
    const ScalarSpec* other = imported.find_scalar(scalar.name);
    if (other == nullptr)
      result.insert("scalars." + scalar.name + ": only in ours");
    else if (scalar.dtype != other->dtype)
      result.insert("scalars." + scalar.name + ".dtype differs");
    else if (std::fabs(scalar.value - other->value) > 1e-6 * std::fabs(scalar.value))
      result.insert("scalars." + scalar.name + ".value: " + scalar.expression + " (ours) vs " + other->expression);
  }
  for (const ScalarSpec& scalar : imported.scalars)
    if (ours.find_scalar(scalar.name) == nullptr) result.insert("scalars." + scalar.name + ": only in the import");
  std::set<std::string> our_constraints, imported_constraints;
  for (const std::string& c : ours.constraints) our_constraints.insert(squeeze(c));
  for (const std::string& c : imported.constraints) imported_constraints.insert(squeeze(c));
  for (const std::string& c : our_constraints)
    if (!imported_constraints.count(c)) result.insert("constraints: " + c + " only in ours");
  for (const std::string& c : imported_constraints)
    if (!our_constraints.count(c)) result.insert("constraints: " + c + " only in the import");
  return result;
}

struct RoundTrip {
  std::string definition;
  std::string workloads;                        // empty: none published
  std::string task;                             // kernels/<task>
  std::map<std::string, std::string> expected;  // difference -> why it is there
};

const std::vector<RoundTrip> k_round_trips = {
    {"gqa_paged_decode_h32_kv8_d128_ps1",
     "gqa_paged_decode_h32_kv8_d128_ps1.jsonl",
     "gqa_paged_decode_h32_kv8_d128_ps1",
     {{"outputs.workspace: only in ours", "our split-KV scratch output, never compared; the definition has no scratch"},
      {"constraints: num_pages>=num_kv_indices only in ours",
       "our hooks draw distinct pages; the definition's num_kv_indices == kv_indptr[-1] reads a tensor and is not "
       "carried"}}},
    {"mla_paged_decode_h16_ckv512_kpe64_ps1",
     "mla_paged_decode_h16_ckv512_kpe64_ps1.jsonl",
     "mla_paged_decode_h16_ckv512_kpe64_ps1",
     {{"outputs.workspace: only in ours", "our split-KV scratch output, never compared; the definition has no scratch"},
      {"scalars.sm_scale.value: 1 / sqrt(192) (ours) vs 0.13523377478122711",
       "the published workloads carry DeepSeek-V3's YaRN-scaled softmax scale, mscale^2 / sqrt(192) with mscale = "
       "1 + 0.1 ln 40; ours takes the default the definition's description states, 1 / sqrt(192)"},
      {"constraints: num_pages>=num_kv_indices only in ours",
       "our hooks draw distinct pages; the definition's num_kv_indices == kv_indptr[-1] reads a tensor and is not "
       "carried"}}},
    {"gdn_prefill_qk4_v8_d128_k_last",
     "",
     "gdn_prefill_qk4_v8_d128_k_last",
     {{"constraints: total_seq_len>=1 only in ours",
       "ours states the non-empty batch our hooks need; the definition leaves it implicit"},
      {"constraints: num_seqs>=1 only in ours",
       "ours states the non-empty batch our hooks need; the definition leaves it implicit"},
      {"scalars.scale.value: 1 / sqrt(head_size) (ours) vs 1",
       "a scalar's value comes with the workloads, and none are published for this definition: the import sets 1 and "
       "says so"}}},
    {"gemm_n4096_k4096",
     "gemm_n4096_k4096.jsonl",
     "gemm_bf16",
     {{"inputs.A.dtype: bfloat16 (ours) vs float16",
       "gemm_bf16 is the bfloat16 variant of this float16 definition (its README)"},
      {"inputs.B.dtype: bfloat16 (ours) vs float16",
       "gemm_bf16 is the bfloat16 variant of this float16 definition (its README)"},
      {"outputs.C.dtype: bfloat16 (ours) vs float16",
       "gemm_bf16 is the bfloat16 variant of this float16 definition (its README)"},
      {"constraints: M>=1 only in ours",
       "ours states it; FlashInfer-Trace axes are non-negative and workloads give M >= 1"}}},
};

TEST(TraceImport, PublishedDefinitionsGiveOurTasksUpToTheListedDifferences) {
  for (const RoundTrip& trip : k_round_trips) {
    SCOPED_TRACE(trip.definition);
    testing::TempDir dir;
    const fs::path out = dir / trip.task;
    std::optional<fs::path> workloads;
    if (!trip.workloads.empty()) workloads = k_data / "workloads" / trip.workloads;
    const ImportedTask imported =
        import_definition(k_data / "definitions" / (trip.definition + ".json"), workloads, out, false);
    for (const TraceFinding& finding : imported.findings)
      EXPECT_EQ(finding.message.find("task loader refuses"), std::string::npos) << describe(finding);
    const Task ours = load_task(k_source / "kernels" / trip.task);
    const Task theirs = load_task(out);
    EXPECT_EQ(theirs.name, trip.definition);
    const std::set<std::string> found = differences(ours, theirs);
    for (const std::string& difference : found)
      EXPECT_TRUE(trip.expected.count(difference)) << "unexpected difference: " << difference;
    for (const auto& [difference, reason] : trip.expected)
      EXPECT_TRUE(found.count(difference))
          << "listed difference no longer found: " << difference << " (" << reason << ")";
    EXPECT_EQ(read_file(out / "reference.py"),
              read_json_file(k_data / "definitions" / (trip.definition + ".json"))["reference"].get<std::string>());
    ASSERT_TRUE(theirs.python_reference.has_value());
    EXPECT_EQ(theirs.python_reference->file, "reference.py");
    EXPECT_EQ(theirs.python_reference->framework, PythonFramework::torch);
    EXPECT_NE(read_file(out / "README.md").find("## Still to write"), std::string::npos);
    EXPECT_EQ(
        read_file(out / "task.json").rfind("// Imported from the FlashInfer-Trace definition " + trip.definition, 0),
        0u);
  }
}

bool has_finding(const ImportedTask& imported, const std::string& file_end, const std::string& field, bool blocking) {
  for (const TraceFinding& finding : imported.findings)
    if (finding.field == field && finding.blocking == blocking && finding.file.size() >= file_end.size() &&
        finding.file.compare(finding.file.size() - file_end.size(), file_end.size(), file_end) == 0)
      return true;
  return false;
}

TEST(TraceImport, ReportsWhatItCannotCarryWithFileAndField) {
  testing::TempDir dir;
  const ImportedTask gqa =
      import_definition(k_data / "definitions" / "gqa_paged_decode_h32_kv8_d128_ps1.json",
                        k_data / "workloads" / "gqa_paged_decode_h32_kv8_d128_ps1.jsonl", dir / "gqa", false);
  EXPECT_TRUE(has_finding(gqa, "gqa_paged_decode_h32_kv8_d128_ps1.jsonl", "workload.inputs.kv_indptr", true));
  EXPECT_TRUE(has_finding(gqa, "gqa_paged_decode_h32_kv8_d128_ps1.jsonl", "workload.inputs.kv_indices", true));
  EXPECT_TRUE(has_finding(gqa, "gqa_paged_decode_h32_kv8_d128_ps1.json",
                          "constraints: \"num_kv_indices == kv_indptr[-1].item()\"", true));
  EXPECT_TRUE(
      has_finding(gqa, "gqa_paged_decode_h32_kv8_d128_ps1.json", "constraints[0]", false));  // len_indptr substituted
  const Task task = load_task(dir / "gqa");
  ASSERT_EQ(task.workloads.size(), 3u);
  EXPECT_EQ(task.workloads[0].name, "e2142798");
  EXPECT_EQ(task.workloads[0].axes.count("len_indptr"), 0u);
  EXPECT_EQ(task.workloads[0].origin, WorkloadOrigin::published) << "imported workloads are the published ones";
  EXPECT_EQ(task.workloads[0].source.substr(0, 8), "e2142798") << "the source is the workload's uuid";
  EXPECT_EQ(task.entry.args.front(), "q");
  EXPECT_EQ(task.entry.args.back(), "num_kv_indices");

  const ImportedTask gdn = import_definition(k_data / "definitions" / "gdn_prefill_qk4_v8_d128_k_last.json",
                                             std::nullopt, dir / "gdn", false);
  EXPECT_TRUE(has_finding(gdn, "gdn_prefill_qk4_v8_d128_k_last.json", "inputs.state.optional", true));
  EXPECT_TRUE(has_finding(gdn, "gdn_prefill_qk4_v8_d128_k_last.json", "inputs.scale", true));
  EXPECT_TRUE(has_finding(gdn, "gdn_prefill_qk4_v8_d128_k_last.json", "workloads", true));
}

TEST(TraceImport, UnknownFieldsAndInputKindsAreFindingsAndStrictRefuses) {
  testing::TempDir dir;
  write_file_atomic(dir / "def.json", R"({"name": "toy_add", "op_type": "add", "flavour": "extra",
    "axes": {"n": {"type": "var", "unit": "elements"}, "len": {"type": "var"}},
    "inputs": {"x": {"shape": ["n"], "dtype": "float32"}, "idx": {"shape": ["len"], "dtype": "int64"},
               "alpha": {"shape": null, "dtype": "float32"}},
    "outputs": {"y": {"shape": ["n"], "dtype": "float32"}},
    "constraints": ["len == n * 2", "n >= 1 and n <= 4096"],
    "reference": "def run(x, idx, alpha):\n    return x * alpha\n"})");
  write_file_atomic(
      dir / "w.jsonl",
      "{\"definition\": \"toy_add\", \"workload\": {\"uuid\": \"aaaa1111-x\", \"axes\": {\"n\": 8, \"len\": 16}, "
      "\"inputs\": {\"x\": {\"type\": \"random\"}, \"idx\": {\"type\": \"custom\"}, \"alpha\": {\"type\": \"scalar\", "
      "\"value\": 0.5}}}}\n"
      "{\"definition\": \"toy_add\", \"workload\": {\"uuid\": \"bbbb2222-x\", \"axes\": {\"n\": 4, \"len\": 9}, "
      "\"inputs\": {}}}\n");
  const ImportedTask imported = import_definition(dir / "def.json", dir / "w.jsonl", dir / "toy", false);
  EXPECT_TRUE(has_finding(imported, "def.json", "flavour", true));
  EXPECT_TRUE(has_finding(imported, "def.json", "axes.n.unit", true));
  EXPECT_TRUE(has_finding(imported, "w.jsonl", "line 1: workload.inputs.idx", true));  // unsupported kind
  EXPECT_TRUE(has_finding(imported, "w.jsonl", "line 2: workload.axes.len", true));    // len is not n * 2
  const Task task = load_task(dir / "toy");
  ASSERT_EQ(task.workloads.size(), 1u);
  EXPECT_EQ(task.workloads[0].name, "aaaa1111");
  EXPECT_EQ(task.constraints, std::vector<std::string>{"n >= 1 && n <= 4096"});
  EXPECT_EQ(shape_text(task.find_tensor("idx")->shape), "[n*2]");
  ASSERT_NE(task.find_scalar("alpha"), nullptr);
  EXPECT_DOUBLE_EQ(task.find_scalar("alpha")->value, 0.5);

  EXPECT_THROW(import_definition(dir / "def.json", dir / "w.jsonl", dir / "strict", true), InvalidInput);
  EXPECT_FALSE(fs::exists(dir / "strict"));
  EXPECT_THROW(import_definition(dir / "def.json", dir / "w.jsonl", dir / "toy", false), InvalidInput);  // not empty
}

std::string import_error(const fs::path& definition, const std::optional<fs::path>& workloads, const fs::path& out,
                         bool strict) {
  try {
    import_definition(definition, workloads, out, strict);
  } catch (const InvalidInput& error) {
    return error.what();
  }
  return "";
}

// A number task.json cannot hold is refused naming the field, never written wrapped (18446744073709551615 as -1).
TEST(TraceImport, AConstAxisOutsideAnExtentIsRefusedNotWrapped) {
  testing::TempDir dir;
  for (const char* value : {"18446744073709551615", "-1", "0"}) {
    write_file_atomic(dir / "def.json", std::string(R"({"name": "toy", "axes": {"n": {"type": "var"},
      "k": {"type": "const", "value": )") + value +
                                            R"(}},
      "inputs": {"x": {"shape": ["n", "k"], "dtype": "float32"}}, "outputs": {"y": {"shape": ["n"], "dtype": "float32"}},
      "reference": "def run(x):\n    return x.sum(1)\n"})");
    const std::string message = import_error(dir / "def.json", std::nullopt, dir / "toy", false);
    EXPECT_NE(message.find("axes.k.value"), std::string::npos) << value << ": " << message;
    EXPECT_FALSE(fs::exists(dir / "toy" / "task.json")) << value << " was written";
  }
}

// What the import writes is loaded by the task loader: a task it refuses fails the import (exit 3), under --strict
// with nothing written, otherwise kept for editing; a workload extent that is no size is skipped and said.
TEST(TraceImport, ATaskTheLoaderRefusesIsNotAnImport) {
  testing::TempDir dir;
  write_file_atomic(dir / "def.json", R"({"name": "toy", "axes": {"M": {"type": "var"}},
    "inputs": {"x": {"shape": ["M"], "dtype": "float32"}}, "outputs": {"y": {"shape": ["M"], "dtype": "float32"}},
    "reference": "def run(x):\n    return x\n"})");
  write_file_atomic(dir / "huge.jsonl",
                    "{\"definition\": \"toy\", \"workload\": {\"uuid\": \"aaaa1111\", \"axes\": {\"M\": "
                    "9223372036854775807}, \"inputs\": {}}}\n");
  // --strict refuses a family without a starting-kernel generator before anything is written, so the strict case
  // takes a published definition whose family has one (rmsnorm), with a workload too large to be a size.
  const fs::path rmsnorm =
      fs::path(EVOTEAM_SOURCE_DIR) / "kernels/flashinfer_trace/published/definitions/rmsnorm/rmsnorm_h4096.json";
  write_file_atomic(dir / "huge_rmsnorm.jsonl",
                    "{\"definition\": \"rmsnorm_h4096\", \"workload\": {\"uuid\": \"dddd4444\", \"axes\": "
                    "{\"batch_size\": 9223372036854775807}, \"inputs\": {}}}\n");
  std::string message = import_error(rmsnorm, dir / "huge_rmsnorm.jsonl", dir / "strict", true);
  EXPECT_NE(message.find("too large"), std::string::npos) << message;
  EXPECT_NE(message.find("task loader refuses"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(dir / "strict")) << "--strict wrote a task its loader refuses";
  message = import_error(dir / "def.json", dir / "huge.jsonl", dir / "kept", false);
  EXPECT_NE(message.find("the task loader refuses"), std::string::npos) << message;
  EXPECT_TRUE(fs::exists(dir / "kept" / "task.json")) << "the directory stays for editing";

  write_file_atomic(dir / "negative.jsonl",
                    "{\"definition\": \"toy\", \"workload\": {\"uuid\": \"bbbb2222\", \"axes\": {\"M\": -5}, "
                    "\"inputs\": {}}}\n"
                    "{\"definition\": \"toy\", \"workload\": {\"uuid\": \"cccc3333\", \"axes\": {\"M\": 8}, "
                    "\"inputs\": {}}}\n");
  const ImportedTask imported = import_definition(dir / "def.json", dir / "negative.jsonl", dir / "toy", false);
  EXPECT_TRUE(has_finding(imported, "negative.jsonl", "line 1: workload.axes.M", true));
  EXPECT_EQ(load_task(dir / "toy").workloads.size(), 1u);
}

// A dtype that is no name is said as what it is, not as an empty name (dtype "").
TEST(TraceImport, ADtypeThatIsNoNameIsSaidAsItIs) {
  testing::TempDir dir;
  write_file_atomic(dir / "def.json", R"({"name": "toy", "axes": {"n": {"type": "var"}},
    "inputs": {"x": {"shape": ["n"], "dtype": 16}}, "outputs": {"y": {"shape": ["n"], "dtype": "float32"}},
    "reference": "def run(x):\n    return x\n"})");
  const std::string message = import_error(dir / "def.json", std::nullopt, dir / "toy", false);
  EXPECT_NE(message.find("inputs.x.dtype: a dtype is a name such as \"float32\", got 16"), std::string::npos)
      << message;
  EXPECT_EQ(message.find("dtype \"\""), std::string::npos) << message;
}

TEST(TraceImport, DtypesWithoutAnEquivalentAreRefused) {
  testing::TempDir dir;
  write_file_atomic(dir / "def.json", R"({"name": "toy", "axes": {"n": {"type": "var"}},
    "inputs": {"x": {"shape": ["n"], "dtype": "float4_e2m1"}}, "outputs": {"y": {"shape": ["n"], "dtype": "float32"}},
    "reference": "def run(x):\n    return x\n"})");
  try {
    import_definition(dir / "def.json", std::nullopt, dir / "toy", false);
    FAIL() << "no error";
  } catch (const InvalidInput& error) {
    EXPECT_NE(std::string(error.what()).find("inputs.x.dtype"), std::string::npos) << error.what();
  }
}

// The published gemm definition with one change: malformed tables are refused naming the field (exit 3), never a
// crash in the family's generator, with or without --strict.
nlohmann::ordered_json published_gemm() {
  return nlohmann::ordered_json::parse(read_file(k_data / "definitions" / "gemm_n4096_k4096.json"));
}

std::string import_changed(const testing::TempDir& dir, const nlohmann::ordered_json& definition, bool strict) {
  write_file_atomic(dir / "changed.json", definition.dump(2));
  fs::remove_all(dir / "out");
  return import_error(dir / "changed.json", std::nullopt, dir / "out", strict);
}

TEST(TraceImport, EmptyTensorTablesAreRefusedNamingTheField) {
  testing::TempDir dir;
  for (const char* section : {"inputs", "outputs"})
    for (bool strict : {false, true}) {
      nlohmann::ordered_json definition = published_gemm();
      definition[section] = nlohmann::ordered_json::object();
      const std::string message = import_changed(dir, definition, strict);
      EXPECT_NE(message.find(std::string(section) + ": at least one tensor"), std::string::npos)
          << section << ": " << message;
      EXPECT_FALSE(fs::exists(dir / "out" / "task.json")) << section;
    }
}

// An input the reference's run() calls A but the table calls Z is refused naming both; with the reference renamed
// too the definition is well formed, and the gemm generator, which writes code for A, leaves the stubs and says why.
TEST(TraceImport, AReferenceThatNamesOtherInputsThanItsTableIsRefused) {
  testing::TempDir dir;
  nlohmann::ordered_json renamed = published_gemm();
  nlohmann::ordered_json inputs = nlohmann::ordered_json::object();
  inputs["Z"] = renamed["inputs"]["A"];
  inputs["B"] = renamed["inputs"]["B"];
  renamed["inputs"] = inputs;
  for (bool strict : {false, true}) {
    const std::string message = import_changed(dir, renamed, strict);
    EXPECT_NE(message.find("reference: run() takes A, which inputs does not list (inputs: B, Z)"), std::string::npos)
        << message;
  }
  renamed["reference"] = "import torch\n\ndef run(Z, B):\n    return torch.matmul(Z, B.T)";
  write_file_atomic(dir / "both.json", renamed.dump(2));
  const ImportedTask imported = import_definition(dir / "both.json", std::nullopt, dir / "both", false);
  EXPECT_FALSE(imported.starting_kernel);
  EXPECT_TRUE(has_finding(imported, "gemm_n4096_k4096", "kernel.cu", true));
  EXPECT_NE(imported.kernel_stub.find('Z'), std::string::npos);
  const std::string strict = import_error(dir / "both.json", std::nullopt, dir / "both_strict", true);
  EXPECT_NE(strict.find("no input A"), std::string::npos) << strict;

  nlohmann::ordered_json extra = published_gemm();
  extra["reference"] = "def run(A):\n    return A";
  EXPECT_NE(import_changed(dir, extra, false).find("inputs.B: not a parameter of the reference's run(A)"),
            std::string::npos);
}

// Names become C parameters, file names and task.json keys: one that is no identifier, or one name given to two
// things, is refused naming the field.
TEST(TraceImport, NamesThatAreNoIdentifiersOrNameTwoThingsAreRefused) {
  testing::TempDir dir;
  for (const char* name : {"..", "", "a b", "1x", "x/y"}) {
    nlohmann::ordered_json definition = published_gemm();
    definition["inputs"][name] = definition["inputs"]["B"];
    definition["inputs"].erase("B");
    definition["reference"] = std::string("def run(A, B):\n    return A");
    const std::string message = import_changed(dir, definition, false);
    EXPECT_NE(message.find(std::string("inputs.") + name + ": \"" + name + "\" is not a name"), std::string::npos)
        << name << ": " << message;
  }
  nlohmann::ordered_json axis = published_gemm();
  axis["axes"][".."] = {{"type", "var"}};
  const std::string axis_message = import_changed(dir, axis, true);
  EXPECT_NE(axis_message.find("axes...: \"..\" is not a name"), std::string::npos) << axis_message;
  nlohmann::ordered_json twice = published_gemm();
  twice["outputs"]["A"] = twice["outputs"]["C"];
  EXPECT_NE(import_changed(dir, twice, false).find("outputs.A: \"A\" names another"), std::string::npos);
  nlohmann::ordered_json named = published_gemm();
  named["name"] = "../escape";
  EXPECT_NE(import_changed(dir, named, false).find("name: \"../escape\" is not a name"), std::string::npos);
}

}  // namespace
}  // namespace evoteam
