// The "agent" section of the configuration (and the reply settings of the "llm" section an agent uses): the
// only reader of agent.* keys, into the structs the loop, the workspace and the toolbox take.
#include <evoteam/agent/agent.hpp>
#include <evoteam/agent/agent_cli.hpp>
#include <evoteam/agent/tools.hpp>
#include <evoteam/agent/workspace.hpp>
#include <evoteam/core/config.hpp>

namespace evoteam {

AgentSettings agent_settings_from_config(const Config& config) {
  AgentSettings settings;
  settings.max_reply_tokens = config.get<int>("llm.max_tokens");
  if (double temperature = config.get<double>("llm.temperature"); temperature >= 0) settings.temperature = temperature;
  settings.limits.max_steps = config.get<int>("agent.max_steps");
  settings.limits.max_tokens = config.get<std::uint64_t>("agent.max_tokens");
  settings.limits.max_cost_usd = config.get<double>("agent.max_cost_usd");
  settings.limits.max_wall_s = config.get<double>("agent.max_wall_s");
  settings.limits.max_consecutive_malformed = config.get<int>("agent.max_consecutive_malformed");
  settings.context_clear_fraction = config.get<double>("agent.context_clear_fraction");
  return settings;
}

WorkspaceLimits workspace_limits_from_config(const Config& config) {
  WorkspaceLimits limits;
  limits.max_write_bytes = config.get<std::size_t>("agent.max_write_bytes");
  limits.max_read_bytes = config.get<std::size_t>("agent.max_read_bytes");
  limits.max_list_entries = config.get<std::size_t>("agent.max_list_entries");
  return limits;
}

ToolSettings tool_settings_from_config(const Config& config) {
  ToolSettings settings;
  settings.max_output_chars = config.get<std::size_t>("agent.tool_output_max_chars");
  return settings;
}

AgentMemberSettings agent_member_settings_from_config(const Config& config) {
  AgentMemberSettings settings;
  settings.member = config.get<std::string>("agent.member");
  for (const auto& item : config.at("agent.members").items())
    if (std::string member = config.get<std::string>("agent.members." + item.key()); !member.empty())
      settings.by_role[item.key()] = member;
  settings.model = config.get<std::string>("agent.cli.model");
  settings.max_turns = config.get<int>("agent.cli.max_turns");
  settings.turn_timeout_s = config.get<double>("agent.cli.turn_timeout_s");
  settings.sandbox = parse_sandbox_mode(config.get<std::string>("agent.cli.sandbox")).value_or(SandboxMode::automatic);
  for (const auto& path : config.at("agent.cli.readable")) settings.readable.emplace_back(path.get<std::string>());
  for (const auto& entry : config.at("agent.cli.env")) settings.env.push_back(entry.get<std::string>());
  for (const std::string& member : named_agent_clis())
    if (std::string file = config.get<std::string>("agent.cli.config." + member); !file.empty())
      settings.config_files[member] = file;
  // The run's model endpoint (--base-url) is the CLI members' too; credentials in it are the transport's alone.
  settings.base_url = config.get<std::string>("llm.base_url");
  return settings;
}

}  // namespace evoteam
