// What keyblend's fuzz targets share: a broken promise traps, and each input is loaded in both
// modes, every result checked.
#pragma once

#include <keyblend/io/model.hpp>

namespace kbfuzz {

inline void require(bool promise) {
    if (!promise) __builtin_trap();
}

/// Loads the input in strict and in lenient mode (`options` otherwise as given): `load(options)`
/// returns a result; a value must pass `check(value, options)`, an error must have a message of
/// bounded length (names from the file are quoted as bounded excerpts).
template <class Load, class Check>
void each_mode(keyblend::io::load_options options, Load&& load, Check&& check) {
    for (keyblend::io::parse_mode mode : {keyblend::io::parse_mode::strict, keyblend::io::parse_mode::lenient}) {
        options.mode = mode;
        const auto r = load(options);
        if (r)
            check(*r, options);
        else
            require(!r.error().message.empty() && r.error().message.size() < 2000);
    }
}

} // namespace kbfuzz
