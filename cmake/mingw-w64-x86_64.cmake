# CMake toolchain file: 64-bit Windows programs from Linux with Debian's mingw-w64 (package
# g++-mingw-w64-x86-64-posix), for the Direct3D 9 adapter's tests and for your own D3D9 programs:
#
#     cmake -S my_app -B build-win -DCMAKE_TOOLCHAIN_FILE=<keyblend>/cmake/mingw-w64-x86_64.cmake
#
# The posix thread variant of the compiler (the win32 one has no std::thread). Programs link
# statically: an .exe that needs the MinGW runtime DLLs exits silently under wine (code 53).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static -static-libgcc -static-libstdc++")

# Libraries and headers come from the mingw-w64 tree only (never /usr/include: glibc's headers
# break the build); programs (wine, code generators) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
