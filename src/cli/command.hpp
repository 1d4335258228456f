#pragma once
// One subcommand of the CLI table: how it adds its options and what it runs. Commands parse and call; the
// logic lives in the modules (report, eval, supervisor ...).
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <evoteam/core/config.hpp>

namespace evoteam::cli {

// Options every subcommand shares, filled by the top-level parser.
struct GlobalOptions {
  int verbose = 0;
  bool quiet = false;
  std::string config_file;
  std::vector<std::string> assignments;  // --set key=value
};

struct CommandContext {
  GlobalOptions globals;
  std::function<int()> action;  // set by the chosen subcommand's callback
  // The layered configuration, loaded and checked once by cli_main before the action runs.
  Config config;

  // The command line as given, without the program name: `optimize --detach` runs it again as the daemon.
  std::vector<std::string> arguments;

  // The --runs-dir flag when given, else store.runs_dir.
  std::filesystem::path runs_dir(const std::string& flag) const;
};

struct Subcommand {
  const char* name;
  const char* description;
  const char* example;
  void (*add)(CLI::App& sub, CommandContext& context);
};

// Prints a JSON value on stdout (the --json output of every command).
void print_json(const nlohmann::json& value);
// `--detach` (optimize, campaign, resume): the same command line without --detach, run as a daemon in its own
// session. Whatever it finds wrong before its directory exists comes back here with its exit code; once it exists,
// the directory is printed (`--json`: {dir_key, "pid"}) and the caller is free.
int start_detached_daemon(const std::vector<std::string>& arguments, bool json, const char* dir_key);

void add_doctor(CLI::App& sub, CommandContext& context);
void add_runs(CLI::App& sub, CommandContext& context);
void add_show(CLI::App& sub, CommandContext& context);
void add_report(CLI::App& sub, CommandContext& context);
void add_compare(CLI::App& sub, CommandContext& context);
void add_eval(CLI::App& sub, CommandContext& context);
void add_optimize(CLI::App& sub, CommandContext& context);
void add_resume(CLI::App& sub, CommandContext& context);
void add_stop(CLI::App& sub, CommandContext& context);
void add_worker(CLI::App& sub, CommandContext& context);
void add_status(CLI::App& sub, CommandContext& context);
void add_wait(CLI::App& sub, CommandContext& context);
void add_import(CLI::App& sub, CommandContext& context);
void add_import_solution(CLI::App& sub, CommandContext& context);
void add_export(CLI::App& sub, CommandContext& context);
void add_mcp(CLI::App& sub, CommandContext& context);
void add_campaign(CLI::App& sub, CommandContext& context);

// `resume CAMPAIGN [--detach]` (cmd_campaign): continues a campaign as `resume RUN` continues a run.
int resume_campaign_command(CommandContext& context, const std::filesystem::path& dir, bool detach, bool json);

}  // namespace evoteam::cli
