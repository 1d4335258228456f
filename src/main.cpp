#include <evoteam/cli/cli.hpp>

int main(int argc, char** argv) { return evoteam::cli_main(argc, argv); }
