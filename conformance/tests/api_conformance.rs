//! Every declaration the stand-in headers offer to kernels matches tt-metal 0.78.0's real headers.

#[test]
fn stand_in_api_matches_the_real_headers() -> Result<(), conformance::Error> {
    let root = conformance::paths::real_headers()?;
    let report = conformance::api::check(&root)?;
    eprintln!(
        "API conformance: {} stand-in public headers, {} stand-in symbols, {} verified against tt-metal 0.78.0",
        report.headers, report.symbols, report.verified
    );
    for difference in &report.differences {
        eprintln!("drift: {difference}");
    }
    assert!(
        report.differences.is_empty(),
        "{} difference(s) between the stand-in headers (tt-runtime/include/tt_emu_api) and the real ones, listed above",
        report.differences.len()
    );
    assert_eq!(report.verified, report.symbols);
    assert!(
        report.symbols > 0,
        "no stand-in symbols found: is tt-runtime/include/tt_emu_api empty?"
    );
    Ok(())
}
