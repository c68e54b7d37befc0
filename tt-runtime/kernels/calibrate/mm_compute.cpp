// Calibration matmul compute, blocked like tt-metal's with packer L1 accumulation (the published
// runs set packer_l1_acc): per K block (kb tiles), each sh x sw output subblock adds the block's kb
// K steps in DST and packs them to cb 24, the first block plainly, the later ones onto the partial
// sums already there (pack_reconfig_l1_acc), so no block reloads them; such a block first rewinds
// cb 24 (pops what the block before pushed) to pack onto the same tiles. The last block does
// not accumulate in L1: cb 16 (the writer's) is separate memory here, where tt-metal shares one
// buffer between its partial and output CBs, so each subblock reloads its partial sums from cb 24
// into DST first. Compile-time args: rt, ct, kb, nb, sh, sw.
#include "api/compute/matmul.h"
#include "api/compute/pack.h"
#include "api/compute/tile_move_copy.h"

void kernel_main() {
    constexpr uint32_t rt = get_compile_time_arg_val(0);
    constexpr uint32_t ct = get_compile_time_arg_val(1);
    constexpr uint32_t kb = get_compile_time_arg_val(2);
    constexpr uint32_t nb = get_compile_time_arg_val(3);
    constexpr uint32_t sh = get_compile_time_arg_val(4);
    constexpr uint32_t sw = get_compile_time_arg_val(5);
    constexpr uint32_t sub = sh * sw;
    compute_kernel_hw_startup<SrcOrder::Reverse>(0, 1, 16);
    matmul_block_init(0, 1, 0, sw, sh, kb);
    for (uint32_t b = 0; b < nb; ++b) {
        const bool last = b + 1 == nb;
        cb_wait_front(0, rt * kb);
        cb_wait_front(1, kb * ct);
        if (b > 0) {
            cb_wait_front(24, rt * ct);
            if (last) {
                pack_reconfig_l1_acc(0);
            } else {
                cb_pop_front(24, rt * ct);
                pack_reconfig_l1_acc(1);
            }
        }
        for (uint32_t sr = 0; sr < rt; sr += sh) {
            for (uint32_t sc = 0; sc < ct; sc += sw) {
                tile_regs_acquire();
                if (last && nb > 1) {
                    copy_tile_to_dst_init_short(24);
                    for (uint32_t i = 0; i < sub; ++i) {
                        copy_tile(24, (sr * ct + sc * sh) + i, i);
                    }
                    matmul_block_init(0, 1, 0, sw, sh, kb);
                }
                for (uint32_t k = 0; k < kb; ++k) {
                    matmul_block(0, 1, sr * kb + k, k * ct + sc, 0, 0, sw, sh, kb);
                }
                tile_regs_commit();
                tile_regs_wait();
                const uint32_t out = last ? 16 : 24;
                cb_reserve_back(out, sub);
                for (uint32_t i = 0; i < sub; ++i) {
                    pack_tile(i, out);
                }
                cb_push_back(out, sub);
                tile_regs_release();
            }
        }
        if (last && nb > 1) {
            cb_pop_front(24, rt * ct);
        }
        cb_pop_front(0, rt * kb);
        cb_pop_front(1, kb * ct);
    }
}
