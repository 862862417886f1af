// The compiled kernels of the mix (KEYBLEND_KERNELS_LIBRARY, baseline flags), defined in this file
// as a program of one's own would (KEYBLEND_KERNELS_IMPLEMENTATION, before any keyblend header):
// with the test hook, so that the mix sees which ran.
#define KEYBLEND_KERNELS_IMPLEMENTATION
#include "record.hpp"

#include <keyblend/kernels.hpp>
