#pragma once
// The command-line entry point: parses arguments, runs one subcommand, maps errors to exit codes.

namespace evoteam {

int cli_main(int argc, char** argv);

}  // namespace evoteam
