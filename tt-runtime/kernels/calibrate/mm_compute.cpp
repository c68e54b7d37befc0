// Calibration matmul compute, blocked like tt-metal's: per K block (kb tiles), each sh x sw output
// subblock reloads its partial sums from cb 24 (after the first block), adds the block's kb K steps
// and packs them back to cb 24, or to the output cb 16 after the last block.
// Compile-time args: rt, ct, kb, nb, sh, sw.
#include "api/compute/matmul.h"
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
    for (uint32_t b = 0; b < nb; ++b) {
        cb_wait_front(0, rt * kb);
        cb_wait_front(1, kb * ct);
        const uint32_t out = b + 1 == nb ? 16 : 24;
        for (uint32_t sr = 0; sr < rt; sr += sh) {
            for (uint32_t sc = 0; sc < ct; sc += sw) {
                tile_regs_acquire();
                if (b > 0) {
                    copy_tile_to_dst_init_short(24);
                    cb_wait_front(24, sub);
                    for (uint32_t i = 0; i < sub; ++i) {
                        copy_tile(24, i, i);
                    }
                    cb_pop_front(24, sub);
                }
                matmul_block_init(0, 1, 0, sw, sh, kb);
                for (uint32_t k = 0; k < kb; ++k) {
                    matmul_block(0, 1, sr * kb + k, k * ct + sc, 0, 0, sw, sh, kb);
                }
                tile_regs_commit();
                tile_regs_wait();
                cb_reserve_back(out, sub);
                for (uint32_t i = 0; i < sub; ++i) {
                    pack_tile(i, out);
                }
                cb_push_back(out, sub);
                tile_regs_release();
            }
        }
        cb_pop_front(0, rt * kb);
        cb_pop_front(1, kb * ct);
    }
}
