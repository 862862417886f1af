# CMake toolchain file: 64-bit ARM (AArch64) Linux programs from an x86-64 Debian machine with
# Debian's cross compiler (package g++-aarch64-linux-gnu), run by ctest under qemu's user-mode
# emulator (package qemu-user). For keyblend's own ARM build (.ci/aarch64) and for yours:
#
#     cmake -S my_app -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=<keyblend>/cmake/aarch64-linux-gnu.cmake
#
# Libraries for the target come from the cross compiler's sysroot (/usr/aarch64-linux-gnu: libc,
# libstdc++) and from Debian's multiarch packages for arm64 (`dpkg --add-architecture arm64`, then
# e.g. zlib1g-dev:arm64), which install into /usr/lib/aarch64-linux-gnu: CMake searches that folder
# for this CMAKE_LIBRARY_ARCHITECTURE, never the host's /usr/lib/x86_64-linux-gnu. Header-only and
# architecture-independent packages (libglm-dev, doctest-dev) serve both.
#
# The emulator runs the sysroot's dynamic loader explicitly, with the sysroot's and the multiarch
# libraries on its path. (qemu 7.2 started as `qemu-aarch64 -L <sysroot>` instead can leave a
# fork()ed child that never exits; the tests fork.) Set KEYBLEND_AARCH64_SYSROOT for another
# sysroot, or CMAKE_CROSSCOMPILING_EMULATOR yourself for another emulator (or none, on an ARM
# machine that runs the programs itself).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

if(NOT KEYBLEND_AARCH64_SYSROOT)
  set(KEYBLEND_AARCH64_SYSROOT /usr/aarch64-linux-gnu)
endif()
# (Toolchain files are read again for each try_compile: pass the setting on.)
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES KEYBLEND_AARCH64_SYSROOT)

# Target libraries and headers: the sysroot first, then the host's folders, where only the
# multiarch arm64 folders and architecture-independent files match this architecture. Programs
# (code generators, the emulator) are the host's.
set(CMAKE_FIND_ROOT_PATH ${KEYBLEND_AARCH64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

if(NOT DEFINED CMAKE_CROSSCOMPILING_EMULATOR)
  find_program(KEYBLEND_QEMU_AARCH64 qemu-aarch64)
  if(KEYBLEND_QEMU_AARCH64)
    set(CMAKE_CROSSCOMPILING_EMULATOR
        ${KEYBLEND_QEMU_AARCH64} ${KEYBLEND_AARCH64_SYSROOT}/lib/ld-linux-aarch64.so.1
        --library-path ${KEYBLEND_AARCH64_SYSROOT}/lib:/lib/aarch64-linux-gnu:/usr/lib/aarch64-linux-gnu)
  else()
    get_property(said GLOBAL PROPERTY KEYBLEND_QEMU_MISSING_SAID) # (this file is read several times)
    if(NOT said AND NOT CMAKE_IN_TRY_COMPILE)
      set_property(GLOBAL PROPERTY KEYBLEND_QEMU_MISSING_SAID TRUE)
      message(WARNING "qemu-aarch64 not found (Debian: qemu-user): the ARM programs cannot run here, and "
                      "building tests fails where ctest's discovery runs them (KEYBLEND_BUILD_TESTS=OFF "
                      "builds the libraries alone)")
    endif()
  endif()
endif()
