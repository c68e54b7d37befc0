// Conformance harness: declarations of SFPI's lltt.h (the replay-buffer helpers of Tenstorrent's
// RISC-V toolchain, which a host compiler does not have). Only what the Blackhole LLK reaches
// from the API headers: declared, never defined, so they serve a syntax check and nothing else.
#pragma once

#include <cstdint>

namespace lltt {
enum ExecBool : bool { NoExec = false, Exec = true };
template <ExecBool E = NoExec>
void record(std::uint32_t start, std::uint32_t len);
void replay(std::uint32_t start, std::uint32_t len);
std::uint32_t replay_insn(std::uint32_t start, std::uint32_t len);
}  // namespace lltt
