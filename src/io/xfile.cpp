// keyblend — the compiled part of keyblend::io: the .X loader's definitions, built once with the
// inflate library CMake chose (ISA-L: KEYBLEND_IO_ISAL, or zlib), so that files including
// keyblend/io/xfile.hpp see neither library's header (see xfile.hpp).
//
// SPDX-License-Identifier: MIT
#define KEYBLEND_IO_IMPLEMENTATION
#include <keyblend/io/xfile.hpp>
