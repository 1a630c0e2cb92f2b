# SPDX-License-Identifier: MIT
# Compiler flags of every C target, for the main project and the fuzz
# targets' own project (tests/fuzz/) alike.
set(CMAKE_C_STANDARD 11)
set(CMAKE_C_STANDARD_REQUIRED ON)
set(CMAKE_C_EXTENSIONS ON)
add_compile_options(-Wall -Wextra -Werror -Wshadow -Wmissing-prototypes
                    -Wstrict-prototypes -Wno-unused-parameter)
add_compile_definitions(_GNU_SOURCE)
