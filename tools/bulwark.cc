// The `bulwark` binary: all logic lives in src/cli.
#include <iostream>

#include "cli/cli.h"

int main(int argc, char** argv) { return bulwark::cli::Run(argc, argv, std::cout, std::cerr); }
