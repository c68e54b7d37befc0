//! The emulator's kernel cache keys a compiled kernel by what goes into its object (source,
//! compile-time args, configuration), not by the kernel's name, which only labels diagnostics:
//! the kernels of one file run by different steps or programs share one cached object.

mod common;

use std::path::Path;

use common::{core0, device};
use tt_runtime::KernelSpec;

/// A reader that only names its one compile-time arg.
const SOURCE: &str = r#"
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    constexpr uint32_t n = get_compile_time_arg_val(0);
    static_assert(n > 0, "one compile-time arg above 0");
}
"#;

/// The compiled objects in the cache folder `dir`.
fn objects(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .expect("the cache folder")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "so"))
        .count()
}

#[test]
fn kernels_of_one_text_share_one_cached_object() {
    let cache = tempfile::tempdir().expect("a temporary directory");
    // The only test of this binary: no other thread compiles kernels meanwhile.
    std::env::set_var("TTR_KERNEL_CACHE", cache.path());
    let dev = device();
    let run = |name: &str, arg: u32| {
        let mut prog = dev.program().expect("a program");
        prog.add_kernel(&KernelSpec::reader(name, SOURCE, &[core0()]).compile_args(&[arg]))
            .expect("adds the kernel");
        dev.enqueue(&prog).expect("enqueues");
        dev.finish().expect("runs");
    };
    run("conv3a_reader", 1);
    run("conv4a_reader", 1);
    assert_eq!(objects(cache.path()), 1, "one object for two names");
    run("conv4b_reader", 2);
    assert_eq!(
        objects(cache.path()),
        2,
        "another for other compile-time args"
    );
}
