/*
 * ttr.h - the tt-runtime C API.
 *
 * One header, two implementations: the Blackhole p150a emulator (default) and the tt-metal host
 * API (cargo feature `metal`). Every function returns a ttr_status; on failure the calling
 * thread's last-error message (ttr_last_error) says what went wrong. Handles are reference
 * counted inside the implementation: freeing a device while buffers or programs are alive is
 * allowed, the device goes away with its last handle.
 *
 * Addresses are device addresses: bank offsets for DRAM buffers, L1 byte offsets for L1
 * buffers, CBs and semaphores. NoC coordinates of a worker core come from
 * ttr_device_worker_core and reach kernels through runtime args; they differ from logical ones.
 */
#ifndef TTR_H
#define TTR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. */
typedef int32_t ttr_status;
enum {
    TTR_OK = 0,
    TTR_ERR_INVALID_ARGUMENT = 1, /* a bad value from the caller */
    TTR_ERR_OUT_OF_MEMORY = 2,    /* DRAM or L1 allocation failed */
    TTR_ERR_COMPILE = 3,          /* a kernel did not compile; the message holds the compiler output */
    TTR_ERR_KERNEL = 4,           /* a kernel broke a device rule (CB protocol, bounds, alignment, ...) */
    TTR_ERR_DEADLOCK = 5,         /* every unfinished kernel is blocked; the message names them */
    TTR_ERR_TRACE = 6,            /* trace capture / replay misuse */
    TTR_ERR_UNSUPPORTED = 7,      /* valid on hardware but not implemented by this backend */
    TTR_ERR_INTERNAL = 8,         /* host-side failure (files, compiler, memory mapping) */
    TTR_ERR_NO_DEVICE = 9,        /* no Tenstorrent device was found, or none with the id asked for */
    TTR_ERR_DEVICE_LOST = 10,     /* the device stopped working; every later run, finish or transfer on it fails */
};

/* Dispatch core type chosen at open: Tensix dispatch leaves an 11x10 compute grid, ETH dispatch 12x10. */
typedef uint32_t ttr_dispatch;
enum { TTR_DISPATCH_TENSIX = 0, TTR_DISPATCH_ETH = 1 };

/* Kernel roles: reader on BRISC (NoC 0 by default), writer on NCRISC (NoC 1), compute on TRISC0-2. */
typedef uint32_t ttr_kernel_role;
enum { TTR_ROLE_READER = 0, TTR_ROLE_WRITER = 1, TTR_ROLE_COMPUTE = 2 };

/* Math fidelity of a compute kernel. */
typedef uint32_t ttr_fidelity;
enum { TTR_LOFI = 0, TTR_HIFI2 = 1, TTR_HIFI3 = 2, TTR_HIFI4 = 3, TTR_FIDELITY_COUNT = 4 };

/* How a compute kernel's unpacker reads a CB (tt-metal's ComputeConfig::unpack_to_dest_mode, one entry per
 * CB id). DEFAULT: through SrcA/SrcB, where a Float32 datum is cut to TF32 (sign, exponent and the top 10
 * mantissa bits; bf16's 7 without fp32_dest_acc). FP32: a Float32 CB's datacopies (copy_tile,
 * transpose_tile, tilize_block, pack_untilize_block) unpack straight into the fp32 DST, exactly; the CB
 * can then not feed the FPU (matmul, element-wise, reduce, untilize_block). Only Float32 CBs are affected. */
typedef uint8_t ttr_unpack_to_dest_mode;
enum { TTR_UNPACK_TO_DEST_DEFAULT = 0, TTR_UNPACK_TO_DEST_FP32 = 1 };

/* CB data formats (values of the kernel-side DataFormat enum). */
typedef uint32_t ttr_data_format;
enum { TTR_FORMAT_FLOAT32 = 0, TTR_FORMAT_FLOAT16_B = 5, TTR_FORMAT_BFP8_B = 6, TTR_FORMAT_UINT32 = 24 };

/* Work-counter classes. */
enum {
    TTR_OP_MATMUL = 0,    /* one 32x32x32 tile product */
    TTR_OP_ADD = 1,       /* element-wise tile ops */
    TTR_OP_SUB = 2,
    TTR_OP_MUL = 3,
    TTR_OP_COPY = 4,      /* unpack a tile into DST */
    TTR_OP_REDUCE = 5,
    TTR_OP_TRANSPOSE = 6,
    TTR_OP_TILIZE = 7,    /* per tile */
    TTR_OP_UNTILIZE = 8,  /* per tile */
    TTR_OP_PACK = 9,      /* DST tile -> CB */
    TTR_OP_SFPU = 10,     /* one SFPU instruction over one tile */
    TTR_OP_REDUCE_MAX_ROW = 11, /* a reduce_tile<MAX, REDUCE_ROW> (the others count as TTR_OP_REDUCE) */
    TTR_OP_COUNT = 12
};
enum {
    TTR_SFPU_RELU = 0,
    TTR_SFPU_EXP = 1,
    TTR_SFPU_RECIP = 2,
    TTR_SFPU_SQRT = 3,
    TTR_SFPU_RSQRT = 4,
    TTR_SFPU_MAX = 5,    /* binary max/min of two DST tiles */
    TTR_SFPU_SCALAR = 6, /* add/sub/mul/div by a scalar */
    TTR_SFPU_BINARY = 7, /* add/sub, eq of two DST tiles; where of three */
    TTR_SFPU_COUNT = 8
};
/* Op inits and format reconfigs by kind (what each one programs differs, so does its cost). */
enum {
    TTR_INIT_COPY = 0,            /* copy_tile_init / copy_init / transpose inits: datacopy unpack + math */
    TTR_INIT_MATMUL = 1,          /* matmul_init / matmul_block_init */
    TTR_INIT_BINARY = 2,          /* add/sub/mul (and broadcast) inits, binary_op_init_common */
    TTR_INIT_REDUCE = 3,          /* reduce_init */
    TTR_INIT_LAYOUT = 4,          /* tilize / untilize / pack_untilize inits and their uninits, reduce_uninit */
    TTR_INIT_SFPU = 5,            /* an SFPU op's init */
    TTR_INIT_UNPACK_RECONFIG = 6, /* one unpacker source (SrcA or SrcB) reprogrammed for another format */
    TTR_INIT_PACK_RECONFIG = 7,   /* the packer reprogrammed: format, ReLU, L1 accumulation */
    TTR_INIT_COUNT = 8
};
/* NoC transfer size classes: <=64, <=128, <=256, <=512, <=1K, <=2K, <=4K, <=8K, <=16K, >16K bytes. */
enum { TTR_NOC_SIZE_CLASSES = 10 };

/* Work done by a kernel (summed over the cores and runs asked for). */
typedef struct ttr_counters {
    uint64_t runs;                                      /* kernel instances that ran to completion */
    uint64_t tile_ops[TTR_OP_COUNT][TTR_FIDELITY_COUNT]; /* by kind and by the kernel's fidelity */
    uint64_t sfpu_faces[TTR_SFPU_COUNT];                /* SFPU work by kind, in 16x16 faces (4 a whole tile) */
    uint64_t noc_reads[TTR_NOC_SIZE_CLASSES];
    uint64_t noc_read_bytes[TTR_NOC_SIZE_CLASSES];
    uint64_t noc_writes[TTR_NOC_SIZE_CLASSES];           /* unicast writes */
    uint64_t noc_write_bytes[TTR_NOC_SIZE_CLASSES];
    uint64_t noc_mcasts;                                 /* multicast writes */
    uint64_t noc_mcast_bytes;                            /* bytes sent once per multicast */
    uint64_t noc_mcast_dests;                            /* destinations reached, summed */
    uint64_t noc_linked_mcasts;      /* of the multicast writes, those issued with linked = true */
    uint64_t noc_linked_mcast_bytes; /* their bytes, once per multicast */
    uint64_t noc_linked_mcast_dests; /* their destinations, summed */
    uint64_t noc_mcast_landed_bytes; /* multicast bytes landed in other cores' L1: each multicast's bytes once per
                                        destination but the sender */
    uint64_t noc_sem_ops;                                /* semaphore inc / remote set / multicast set */
    uint64_t dram_read_bytes;
    uint64_t dram_write_bytes;
    uint64_t cb_waits;                                   /* cb_wait_front + cb_reserve_back calls */
    uint64_t cb_blocked;                                 /* of those, how many had to wait */
    uint64_t noc_hops;      /* NoC hops travelled: reads there and back, writes and semaphore updates one way,
                               multicasts to their farthest destination (Blackhole's 17x12 torus, per the kernel's NoC) */
    uint64_t noc_barriers;  /* read and write barriers that waited on at least one transfer */
    uint64_t sem_waits;     /* noc_semaphore_wait / _wait_min calls */
    uint64_t inits[TTR_INIT_COUNT]; /* op inits and format reconfigs by kind; a conditional reconfig
                                       (old, new) counts only when the formats differ, as the LLK skips it */
} ttr_counters;

typedef struct ttr_core {
    uint32_t x;
    uint32_t y;
} ttr_core;

/* NoC link and DRAM bank occupancy of a program's runs (reset with its counters). Blackhole's NoCs are
 * 17x12 tori; from each router one link leaves along x and one along y per NoC, in the NoC's direction
 * (NoC 0: +x, +y; NoC 1: -x, -y). Data bytes only: a read's response from its source to the reader, a
 * write from the writer to its target, a multicast over its tree, each on the issuing kernel's NoC;
 * requests, acknowledgements, semaphore updates and packet headers are not counted. */
enum { TTR_NOCS = 2, TTR_NOC_TORUS_X = 17, TTR_NOC_TORUS_Y = 12, TTR_DRAM_BANKS = 8 };
typedef struct ttr_occupancy {
    uint64_t link_bytes[TTR_NOCS][TTR_NOC_TORUS_Y][TTR_NOC_TORUS_X][2]; /* [noc][y][x][0: x link, 1: y link] */
    uint64_t dram_bank_bytes[TTR_DRAM_BANKS];                           /* read and written, by bank */
} ttr_occupancy;

/* An inclusive rectangle of logical cores. */
typedef struct ttr_core_range {
    ttr_core start;
    ttr_core end;
} ttr_core_range;

typedef struct ttr_device_info {
    uint32_t grid_x;              /* compute grid in logical cores */
    uint32_t grid_y;
    ttr_dispatch dispatch;
    uint32_t l1_size;             /* bytes of L1 per core */
    uint32_t l1_unreserved_base;  /* first address programs may use */
    uint32_t l1_alignment;        /* NoC alignment for L1 */
    uint32_t dram_alignment;      /* NoC read alignment for DRAM */
    uint32_t dram_banks;
    uint32_t l1_banks;            /* L1 banks for L1-interleaved buffers (one per worker core) */
    uint32_t max_cbs;
    uint32_t max_runtime_args;
    uint32_t is_emulator;         /* 1 for the emulator */
} ttr_device_info;

/* Handles. */
typedef struct ttr_device ttr_device;
typedef struct ttr_buffer ttr_buffer;
typedef struct ttr_program ttr_program;
typedef struct ttr_trace ttr_trace;

typedef struct ttr_define {
    const char *name;
    const char *value;
} ttr_define;

typedef struct ttr_kernel_config {
    const char *name;               /* shown in errors and deadlock reports */
    const char *source;             /* C++ source text, `void kernel_main()` */
    ttr_kernel_role role;
    const ttr_core_range *ranges;
    size_t num_ranges;
    const uint32_t *compile_args;
    size_t num_compile_args;
    const ttr_define *defines;
    size_t num_defines;
    ttr_fidelity math_fidelity;     /* compute only */
    uint32_t fp32_dest_acc;         /* compute only: 1 = fp32 DST accumulation */
    uint32_t math_approx;           /* compute only */
    uint32_t noc;                   /* data movement only: 0 or 1 */
    const ttr_unpack_to_dest_mode *unpack_to_dest_mode; /* compute only: indexed by CB id, at most 64 */
    size_t num_unpack_to_dest_mode; /* entries; CBs past the end are TTR_UNPACK_TO_DEST_DEFAULT */
} ttr_kernel_config;

/* A CB. With `buffer` NULL the program allocates it among its own CBs (from the bottom of the unreserved L1
 * up, below every L1 buffer) and buffer_offset must be 0. With `buffer` an L1 buffer (ttr_buffer_create_l1)
 * of the program's device, the CB lives at that buffer's address plus buffer_offset on every core of its
 * ranges, as tt-metal's CircularBufferConfig::set_globally_allocated_address and set_address_offset place
 * it: it takes no room among the program's own CBs, and its pages hold what is in the buffer there (what the
 * host wrote with ttr_buffer_write_core, or what earlier programs left). A kernel makes pages visible without
 * writing them by `cb_reserve_back(cb, n); cb_push_back(cb, n);`, and consumers read the buffer's bytes
 * through the CB; the CB protocol is otherwise that of any CB (a push still wraps at total_size, a NoC write
 * into its pushed pages still needs the usual semaphore ordering). CBs at different offsets of one buffer
 * each see their own bytes. The program holds a reference to the buffer, so ttr_buffer_free may come first.
 * TTR_ERR_INVALID_ARGUMENT for a DRAM buffer, a buffer of another device, a buffer_offset that is not a
 * multiple of the L1 alignment (ttr_device_info.l1_alignment), buffer_offset + total_size beyond the buffer's
 * size per core, or a non-zero buffer_offset without a buffer. */
typedef struct ttr_cb_config {
    uint32_t id;                    /* 0..63 */
    const ttr_core_range *ranges;
    size_t num_ranges;
    uint32_t total_size;            /* bytes; a multiple of page_size */
    uint32_t page_size;
    ttr_data_format format;
    const ttr_buffer *buffer;       /* NULL: among the program's CBs; else the L1 buffer it lives in */
    uint32_t buffer_offset;         /* bytes from the buffer's address to the CB's; 0 without a buffer */
} ttr_cb_config;

/* The calling thread's message for the last failed call ("" when none). Valid until that thread's next call. */
const char *ttr_last_error(void);
/* "emulator" or "tt-metal". */
const char *ttr_backend_name(void);

/* How many devices ttr_device_open accepts (ids 0..count-1): on tt-metal the cards it finds; the emulator
 * presents the count ttr_emu_set_device_count set, else $TTR_EMU_DEVICES (1..64), else 1. */
ttr_status ttr_device_count(uint32_t *count);
/* Emulator only (tt-metal: TTR_ERR_UNSUPPORTED): the number of devices the emulator presents from now on,
 * 1..64, in place of $TTR_EMU_DEVICES. Each is an independent p150a. */
ttr_status ttr_emu_set_device_count(uint32_t count);
/* Emulator only (tt-metal: TTR_ERR_UNSUPPORTED), for tests of device failure: once `launches` more programs
 * have run on the device (an enqueue, or one program of a replayed trace), the next fails with
 * TTR_ERR_DEVICE_LOST and the device stays lost: every later run, finish and buffer transfer fails. */
ttr_status ttr_emu_fail_after(ttr_device *device, uint64_t launches);

/* Opens device `device_id` (0..ttr_device_count-1; others fail with TTR_ERR_NO_DEVICE). */
ttr_status ttr_device_open(uint32_t device_id, ttr_dispatch dispatch, ttr_device **out);
void ttr_device_close(ttr_device *device);
ttr_status ttr_device_get_info(const ttr_device *device, ttr_device_info *out);
/* NoC coordinates of the worker at a logical core. */
ttr_status ttr_device_worker_core(const ttr_device *device, ttr_core logical, ttr_core *noc);
/* NoC coordinates of a DRAM bank. */
ttr_status ttr_device_dram_core(const ttr_device *device, uint32_t bank, ttr_core *noc);
/* Logical core of an L1 bank. There is one L1 bank per worker core of the grid, at offset 0 of its L1:
 * `InterleavedAddrGen<false>` puts page p in bank p % (grid_x * grid_y) at
 * base + (p / banks) * align(page size, l1_alignment). */
ttr_status ttr_device_l1_bank_core(const ttr_device *device, uint32_t bank, ttr_core *logical);

/* A DRAM buffer interleaved over the banks in pages of page_size bytes. */
ttr_status ttr_buffer_create_dram(ttr_device *device, uint64_t size, uint32_t page_size, ttr_buffer **out);
/* An L1 buffer of `size` bytes at the same address on every worker core. */
ttr_status ttr_buffer_create_l1(ttr_device *device, uint32_t size, ttr_buffer **out);
void ttr_buffer_free(ttr_buffer *buffer);
uint32_t ttr_buffer_address(const ttr_buffer *buffer);
uint64_t ttr_buffer_size(const ttr_buffer *buffer);
/* Whole-buffer transfers of a DRAM buffer, in page order (size == buffer size). */
ttr_status ttr_buffer_write(ttr_buffer *buffer, const void *data, uint64_t size);
ttr_status ttr_buffer_read(ttr_buffer *buffer, void *data, uint64_t size);
/* Reads `pages` pages of a DRAM buffer from page `first` on (size == pages * page size), e.g. only
 * the rows the host returns. */
ttr_status ttr_buffer_read_pages(ttr_buffer *buffer, uint64_t first, uint64_t pages, void *data, uint64_t size);
/* Transfers to / from one core's copy of an L1 buffer. */
ttr_status ttr_buffer_write_core(ttr_buffer *buffer, ttr_core core, uint32_t offset, const void *data, uint64_t size);
ttr_status ttr_buffer_read_core(ttr_buffer *buffer, ttr_core core, uint32_t offset, void *data, uint64_t size);

ttr_status ttr_program_create(ttr_device *device, ttr_program **out);
void ttr_program_free(ttr_program *program);
/* Compiles the kernel (cached on disk by content hash) and adds it; kernel ids count from 0. */
ttr_status ttr_program_add_kernel(ttr_program *program, const ttr_kernel_config *config, uint32_t *kernel_id);
ttr_status ttr_program_add_cb(ttr_program *program, const ttr_cb_config *config);
/* A semaphore on every core of the ranges, with the same id everywhere. */
ttr_status ttr_program_add_semaphore(ttr_program *program, const ttr_core_range *ranges, size_t num_ranges,
                                     uint32_t initial_value, uint32_t *semaphore_id);
ttr_status ttr_program_set_runtime_args(ttr_program *program, uint32_t kernel_id, ttr_core core,
                                        const uint32_t *args, size_t num_args);
ttr_status ttr_program_set_common_runtime_args(ttr_program *program, uint32_t kernel_id, const uint32_t *args,
                                               size_t num_args);
/* Counters of one kernel (kernel_id) or of all (kernel_id < 0), summed over cores and runs. */
ttr_status ttr_program_counters(const ttr_program *program, int32_t kernel_id, ttr_counters *out);
/* Counters of one kernel on one logical core. */
ttr_status ttr_program_core_counters(const ttr_program *program, uint32_t kernel_id, ttr_core core,
                                     ttr_counters *out);
ttr_status ttr_program_reset_counters(ttr_program *program);
/* NoC link and DRAM bank occupancy of every run since creation or the last counter reset. */
ttr_status ttr_program_occupancy(const ttr_program *program, ttr_occupancy *out);
/* Adds `bytes` to `into` along the route the emulator charges for data sent on NoC `noc` from NoC
 * coordinates `from` to `to_lo`..`to_hi` (inclusive corners, lo <= hi): a unicast (to_lo == to_hi, not
 * multicast) or a multicast to the rectangle. */
ttr_status ttr_noc_route(uint32_t noc, ttr_core from, ttr_core to_lo, ttr_core to_hi, uint32_t multicast,
                         uint64_t bytes, ttr_occupancy *into);

/* Runs (or, during trace capture, records) a program. The emulator runs it to completion before returning. */
ttr_status ttr_enqueue_program(ttr_device *device, ttr_program *program, uint32_t blocking);
ttr_status ttr_finish(ttr_device *device);

/* Trace capture: programs enqueued between begin and end are recorded (with their runtime args), not run.
 * Each must have run once before capture. Host buffer reads and writes during capture fail. */
ttr_status ttr_trace_begin(ttr_device *device, ttr_trace **out);
ttr_status ttr_trace_end(ttr_device *device, ttr_trace *trace);
ttr_status ttr_trace_replay(ttr_device *device, ttr_trace *trace, uint32_t blocking);
void ttr_trace_release(ttr_trace *trace);

/* Measured device time of one program run, from tt-metal's device profiler. */
typedef struct ttr_program_time {
    uint64_t runtime_id;  /* tt-metal's runtime id of the program */
    uint64_t start;       /* the profiler's start timestamp, for ordering */
    uint64_t device_ns;   /* "DEVICE KERNEL DURATION [ns]": first kernel start to last kernel end */
} ttr_program_time;

/* Reads the device profiler's results for the programs run since the previous read (tt-metal built
 * with the device profiler and run with TT_METAL_DEVICE_PROFILER=1), ordered by start. Writes up to
 * `capacity` entries to `out` and the number available to *count. TTR_ERR_UNSUPPORTED when there is
 * no profiler: always on the emulator, and on tt-metal without TT_METAL_DEVICE_PROFILER=1. */
ttr_status ttr_device_profiler_read(ttr_device *device, ttr_program_time *out, size_t capacity, size_t *count);

#ifdef __cplusplus
}
#endif

#endif /* TTR_H */
