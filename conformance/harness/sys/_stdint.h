// Conformance harness: newlib's internal <sys/_stdint.h>, which the LLK includes directly and which
// the RISC-V toolchain ships but a host's glibc does not; the fixed-width integer types it defines
// are <stdint.h>'s.
#pragma once
#include <stdint.h>
