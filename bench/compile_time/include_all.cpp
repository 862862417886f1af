// Compile-time probe: the umbrella header, nothing used.
#include <keyblend/keyblend.hpp>

int probe() { return 0; }
