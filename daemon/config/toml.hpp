// SPDX-License-Identifier: MIT
//
// toml++ as rdmad uses it: every file of rdmad includes <toml++/toml.h> through this header.
//
// Debian's libtomlplusplus3 (3.3.0) is built with its own checks on: on some invalid inputs
// (`a = 1979-05-27 0`, toml++ parser.inl parse_value()) its parser fails an internal check and
// calls assert(), which aborts rdmad. Built with NDEBUG the same check becomes an optimizer
// assumption (TOML_ASSUME), which is undefined behaviour. So rdmad compiles toml++'s parser
// from Debian's headers into itself (TOML_HEADER_ONLY, toml++'s documented configuration; the
// meson dependency takes the include path only, not the shared library) with TOML_ASSERT
// throwing TomlCheckFailed, which parse_config_text() reports as an error of the file.
#pragma once

#include <stdexcept>

namespace rdmad {

/// toml++ failed one of its internal checks while parsing: the input is not TOML rdmad can
/// read. what() is the check's expression, as toml++'s source writes it.
struct TomlCheckFailed : std::logic_error {
    using std::logic_error::logic_error;
};

} // namespace rdmad

#ifdef TOML_HEADER_ONLY
#undef TOML_HEADER_ONLY
#endif
#define TOML_HEADER_ONLY 1
// toml++ replaces TOML_ASSERT with nothing, and its checks with assumptions, under NDEBUG
// (toml++ impl/preprocessor.h): keep NDEBUG off while its headers are read.
#ifdef NDEBUG
#define RDMAD_TOML_HAD_NDEBUG
#undef NDEBUG
#endif
#define TOML_ASSERT(expr) ((expr) ? static_cast<void>(0) : throw ::rdmad::TomlCheckFailed(#expr))
// A few checks are in noexcept functions of toml++ (the UTF-8 reader's buffer and history,
// path and node accessors): there the throw ends rdmad through std::terminate, as assert()
// did, and GCC says so (-Wterminate). The one an input can reach, stepping back over a value
// longer than the reader's history, is kept from toml++ by neutralise_hazards()
// (config_file.cpp), which cuts such values short before parsing.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wterminate"
#include <toml++/toml.h>
#pragma GCC diagnostic pop
#ifdef RDMAD_TOML_HAD_NDEBUG
#define NDEBUG
#undef RDMAD_TOML_HAD_NDEBUG
#endif
