// The `bulwark-lab` binary (attacks and evaluations beside every `bulwark` command): all logic
// lives in src/cli.
#include <iostream>

#include "cli/lab.h"

int main(int argc, char** argv) { return bulwark::cli::RunLab(argc, argv, std::cout, std::cerr); }
