//! `superpoint info`: version, weights source and backends.

use superpoint::Backend;

use super::ModelArgs;

pub fn run(args: &ModelArgs) -> anyhow::Result<()> {
    println!("superpoint {}", env!("CARGO_PKG_VERSION"));
    println!("backends available: {}", Backend::available().join(", "));
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    println!("cpu threads: {threads}");
    match args.load() {
        Ok(model) => {
            println!("weights: {}", model.weights_source());
            println!("backend: {}", model.backend().name());
        }
        Err(e) => println!("weights: not loaded: {e:#}"),
    }
    Ok(())
}
