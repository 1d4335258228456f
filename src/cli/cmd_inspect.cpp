// `evoteam doctor`, `evoteam runs`, `evoteam show`: read-only inspection commands.
#include <iomanip>
#include <iostream>
#include <memory>

#include <evoteam/agent/agent_cli.hpp>
#include <evoteam/campaign/campaign.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/inventory.hpp>
#include <evoteam/eval/oracle.hpp>
#include <evoteam/eval/vendor_sources.hpp>
#include <evoteam/llm/endpoint.hpp>
#include <evoteam/llm/provider_table.hpp>
#include <evoteam/report/report.hpp>

#include "cli/command.hpp"

namespace evoteam::cli {
namespace {

// The Python oracle's rows: the configured Python, and numpy and torch as it imports them. Never required: the
// oracle is an extra check that says it was skipped when its framework is missing.
std::vector<ToolProbe> oracle_rows(const PythonProbe& python) {
  const std::string fix = "set eval.oracle.python (EVOTEAM_EVAL__ORACLE__PYTHON) to a Python with it installed";
  if (!python.runs) return {{"python (oracle)", false, python.problem, "install python3, or " + fix, false}};
  std::vector<ToolProbe> rows = {{"python (oracle)", true, python.executable + " " + python.version, "", false}};
  auto row = [&](const std::string& name, const std::optional<std::string>& version, const std::string& extra) {
    rows.push_back({name + " (oracle)", version.has_value(),
                    version ? *version + extra : "not importable by " + python.python,
                    version ? "" : "pip install " + name + ", or " + fix, false});
  };
  row("numpy", python.numpy, "");
  row("torch", python.torch, python.torch_cuda ? ", CUDA available" : ", no CUDA");
  return rows;
}

// FlashInfer's sources, for the tasks measured against it. Never required: those tasks say it is unavailable.
ToolProbe flashinfer_row(const EvalSettings& settings) {
  std::string why;
  if (const std::optional<VendorSources> found = find_flashinfer(settings.cuda.flashinfer, &why))
    return {"flashinfer", true, found->version + " at " + found->root.string() + " (vendor baselines)", "", false};
  return {"flashinfer", false, "not installed (the FlashInfer tasks are measured without it)", why, false};
}

// What `doctor --provider/--base-url` asks of a model server.
struct EndpointFlags {
  std::string provider;
  std::string base_url;
  std::string model;
};

// `doctor --provider openai --base-url URL [--model NAME]`: the server's models (GET /models), whether it serves
// the model (the first one it lists when none is named), its context window, and whether it accepts tool calls.
// Exit 1 when it does not answer, does not serve the model, or refuses tools.
int doctor_endpoint(const Config& base_config, const EndpointFlags& flags, bool json) {
  Config config = base_config;
  if (!flags.base_url.empty()) config.overlay({{"llm", {{"base_url", flags.base_url}}}}, "--base-url");
  const std::string provider = flags.provider.empty() ? "openai" : flags.provider;
  const ProviderInfo* row = find_provider(provider);
  if (row == nullptr || row->protocol != ProviderProtocol::openai_chat_completions)
    throw Error("doctor --provider: only openai-compatible servers are asked (got '" + provider + "')",
                ExitCode::usage);
  ProviderSettings settings = provider_settings_for(provider, config, current_environment());
  if (!flags.model.empty()) settings.model = flags.model;
  const ServedModels served = list_served_models(settings);
  if (settings.model.empty() && !served.models.empty()) settings.model = served.models.front();
  const bool serves = served.answered && served.serves(settings.model);
  std::optional<std::uint64_t> window;
  ToolsProbe tools;
  if (serves) {
    window = served_context_window(settings, served, settings.model);
    tools = probe_tool_calls(settings);
  }
  const bool ok = serves && tools.accepted;
  if (json) {
    print_json({{"url", served.url},
                {"answered", served.answered},
                {"problem", served.problem},
                {"models", served.models},
                {"model", settings.model},
                {"serves_model", serves},
                {"context_window", window ? nlohmann::json(*window) : nlohmann::json(nullptr)},
                {"local", settings.local_endpoint},
                {"tools_accepted", tools.accepted},
                {"tools_called", tools.called},
                {"tools_detail", tools.detail},
                {"ok", ok}});
    return ok ? 0 : 1;
  }
  auto line = [](bool good, const std::string& name, const std::string& detail) {
    std::cout << (good ? "  ok   " : "  FAIL ") << std::left << std::setw(20) << name << detail << "\n";
  };
  line(served.answered, "endpoint", served.url + (served.answered ? " answered" : ": " + served.problem));
  if (!served.answered) return 1;
  line(true, "models", served.models_text());
  line(serves, "model", settings.model + (serves ? " is served" : " is not served"));
  if (!serves) return 1;
  line(true, "context window",
       window ? std::to_string(*window) + " tokens (reported by the server)" : "not reported (llm.context_window)");
  line(true, "pricing",
       settings.local_endpoint ? "local endpoint: a model without a price costs 0" : "the price table's");
  line(tools.accepted, "tool calls",
       tools.accepted ? (tools.called ? "accepted; the model called the tool" : "accepted; the model did not call it")
                      : "refused: " + tools.detail);
  return ok ? 0 : 1;
}

}  // namespace

void add_doctor(CLI::App& sub, CommandContext& context) {
  auto json = std::make_shared<bool>(false);
  auto endpoint = std::make_shared<EndpointFlags>();
  sub.add_flag("--json", *json, "Print one JSON object");
  sub.add_option("--provider", endpoint->provider, "Ask this provider's server instead (openai)");
  sub.add_option("--base-url", endpoint->base_url,
                 "Ask the model server at this URL (e.g. http://127.0.0.1:8080/v1) for its models and tool calls");
  sub.add_option("--model", endpoint->model, "The model it should serve (default: llm.model, else its first)");
  sub.callback([&context, json, endpoint] {
    context.action = [&context, json, endpoint] {
      if (!endpoint->provider.empty() || !endpoint->base_url.empty())
        return doctor_endpoint(context.config, *endpoint, *json);
      std::vector<ToolProbe> probes = probe_inventory(system_runner(), provider_key_variables());
      const PythonProbe python = probe_python(system_runner(), eval_settings(context.config).oracle);
      for (ToolProbe& row : oracle_rows(python)) probes.push_back(std::move(row));
      probes.push_back(flashinfer_row(eval_settings(context.config)));
      for (ToolProbe& row : probe_agent_clis(system_runner())) probes.push_back(std::move(row));
      bool missing_required = false;
      for (const ToolProbe& probe : probes) missing_required |= probe.required && !probe.usable;
      if (*json) {
        print_json({{"tools", to_json(probes)}, {"python_oracle", python.to_json()}, {"ok", !missing_required}});
      } else {
        for (const ToolProbe& probe : probes) {
          std::cout << (probe.usable ? "  ok   " : (probe.required ? "  FAIL " : "  --   ")) << std::left
                    << std::setw(20) << probe.name << probe.detail << "\n";
          if (!probe.fix.empty())
            std::cout << "         " << std::setw(20) << ""
                      << "fix: " << probe.fix << "\n";
        }
      }
      return missing_required ? 1 : 0;
    };
  });
}

void add_runs(CLI::App& sub, CommandContext& context) {
  auto runs_dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  sub.add_option("--runs-dir", *runs_dir, "Directory holding run directories (default: store.runs_dir)");
  sub.add_flag("--json", *json, "Print a JSON array");
  sub.callback([&context, runs_dir, json] {
    context.action = [&context, runs_dir, json] {
      const std::filesystem::path dir = context.runs_dir(*runs_dir);
      std::vector<RunSummary> runs = summarize_runs(dir);
      // Campaigns keep their runs in their own directories: each is one line with its runs under it.
      const std::vector<std::filesystem::path> campaigns = list_campaigns(dir);
      if (*json) {
        nlohmann::json items = nlohmann::json::array();
        for (const RunSummary& run : runs) items.push_back(to_json(run));
        for (const std::filesystem::path& campaign : campaigns) items.push_back(campaign_summary_json(campaign));
        print_json(items);
      } else {
        std::cout << format_runs_table(runs);
        if (!campaigns.empty()) std::cout << "\ncampaigns:\n" << format_campaign_lines(campaigns);
      }
      return 0;
    };
  });
}

void add_show(CLI::App& sub, CommandContext& context) {
  auto run = std::make_shared<std::string>();
  auto runs_dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  sub.add_option("RUN", *run, "Run directory, or a run id under --runs-dir")->required();
  sub.add_option("--runs-dir", *runs_dir, "Directory holding run directories (default: store.runs_dir)");
  sub.add_flag("--json", *json, "Print one JSON object");
  sub.callback([&context, run, runs_dir, json] {
    context.action = [&context, run, runs_dir, json] {
      const std::filesystem::path dir = context.runs_dir(*runs_dir);
      nlohmann::json description = describe_run(resolve_run(*run, dir));
      if (*json)
        print_json(description);
      else
        std::cout << format_run_description(description);
      return 0;
    };
  });
}

}  // namespace evoteam::cli
