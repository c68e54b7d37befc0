//! `superpoint doctor` on the emulator: the full run passes every check and exits 0; a corrupted
//! known-answer golden fails its check and the exit code; the emulator standing in for a stock
//! tt-metal (`TTR_EMU_TT_METAL=stock`) falls back to Tensix dispatch and 11x10 with a warning that
//! names the patch, while an explicit `--grid 12x10` is refused there. Only the first test runs
//! the full frame (tens of seconds); the others pass `--quick`.

mod common;

use std::process::{Command, Output};

use common::cases;

fn doctor(extra: &[&str], env: &[(&str, &str)]) -> Output {
    let case = &cases()[0];
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_superpoint"));
    cmd.arg("doctor")
        .arg("--weights")
        .arg(case.weights_path())
        .args(["--backend", "tensix"])
        .args(extra)
        .env_remove("TTR_EMU_TT_METAL");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run superpoint doctor")
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The PASS/FAIL lines of a run, by check name.
fn verdicts(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .filter_map(|l| {
            let (verdict, rest) = l.split_once(' ')?;
            let (name, _) = rest.split_once(':')?;
            ["PASS", "FAIL"]
                .contains(&verdict)
                .then(|| (verdict.to_string(), name.to_string()))
        })
        .collect()
}

#[test]
fn the_full_run_passes_every_check_on_the_emulator() {
    let out = doctor(&[], &[]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let checks = [
        "open",
        "dram round trip",
        "l1 round trip",
        "known-answer program",
        "trace replay (known answer)",
        "frame vs cpu",
        "trace replay (frame)",
    ];
    let want: Vec<(String, String)> = checks
        .iter()
        .map(|c| ("PASS".to_string(), c.to_string()))
        .collect();
    assert_eq!(verdicts(&stdout), want, "{stdout}");
    assert!(
        stdout.contains("tt-metal: the emulator standing in for a patched tt-metal"),
        "{stdout}"
    );
    assert!(stdout.contains("ETH-dispatch patch: detected"), "{stdout}");
    assert!(
        stdout.contains("auto dispatch asked, eth obtained; 12x10 compute grid (120 cores)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("0 of 33554432 bytes differ"),
        "DRAM: {stdout}"
    );
    assert!(stdout.contains("120 cores x 256 KiB"), "L1: {stdout}");
    assert!(stdout.contains("score PCC 0.99"), "{stdout}");
    assert!(
        stdout.contains("INFO profiler: no device profiler: the emulator has no device profiler"),
        "{stdout}"
    );
    assert!(
        stdout.contains("doctor: 7 checks, 7 passed, 0 failed"),
        "{stdout}"
    );
}

#[test]
fn a_corrupted_golden_fails_the_known_answer_check_and_the_exit_code() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut golden = tt_runtime::selftest::GOLDEN.to_vec();
    golden[4096] ^= 0x80;
    let path = dir.path().join("golden.bin");
    std::fs::write(&path, &golden).expect("write");
    let path = path.to_string_lossy().into_owned();
    let out = doctor(&["--quick", "--golden", &path], &[]);
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stdout.contains("FAIL known-answer program:")
            && stdout.contains("1 of 16384 bytes differ, the first at byte 4096"),
        "{stdout}"
    );
    assert!(
        stdout.contains("doctor: 5 checks, 4 passed, 1 failed"),
        "{stdout}"
    );
    assert!(
        stderr.contains("1 of the doctor's checks failed"),
        "{stderr}"
    );
}

#[test]
fn a_stock_installation_falls_back_to_11x10_with_a_warning_naming_the_patch() {
    let out = doctor(&["--quick"], &[("TTR_EMU_TT_METAL", "stock")]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("ETH-dispatch patch: not detected"),
        "{stdout}"
    );
    assert!(
        stdout.contains("auto dispatch asked, tensix obtained; 11x10 compute grid (110 cores)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("WARN dispatch:")
            && stdout.contains("patches/tt-metal-eth-dispatch.patch")
            && stdout.contains("Running on a p150a"),
        "{stdout}"
    );
    assert!(stdout.contains("110 cores x 256 KiB"), "{stdout}");
    assert!(stderr.contains("warning: "), "{stderr}");
}

#[test]
fn an_explicit_grid_wins_over_detection() {
    let case = &cases()[0];
    let info = |grid: &str| {
        Command::new(env!("CARGO_BIN_EXE_superpoint"))
            .arg("info")
            .arg("--weights")
            .arg(case.weights_path())
            .args(["--backend", "tensix", "--grid", grid])
            .env("TTR_EMU_TT_METAL", "stock")
            .output()
            .expect("run superpoint info")
    };
    let tensix = info("11x10");
    let (stdout, _) = text(&tensix);
    assert!(
        stdout.contains("grid 11x10, tensix dispatch")
            && stdout.contains("tensix asked, tensix obtained; tt-metal ETH-dispatch patch stock"),
        "{stdout}"
    );
    // A stock tt-metal cannot open ETH dispatch: the explicit 12x10 is refused, not replaced,
    // and the reason is said once.
    let eth = info("12x10");
    let (_, stderr) = text(&eth);
    assert!(!eth.status.success(), "{stderr}");
    assert!(
        stderr.contains("cannot load --weights")
            && stderr
                .matches("cannot open a p150 with dispatch on the Ethernet cores")
                .count()
                == 1,
        "{stderr}"
    );
}

#[test]
fn bad_requests_are_refused_with_what_to_do() {
    let out = doctor(&["--quick"], &[("TTR_EMU_TT_METAL", "sometimes")]);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("TTR_EMU_TT_METAL='sometimes'") && stderr.contains("'stock'"),
        "{stderr}"
    );
    let cpu = Command::new(env!("CARGO_BIN_EXE_superpoint"))
        .args(["doctor", "--backend", "cpu", "--quick"])
        .output()
        .expect("run");
    assert!(!cpu.status.success());
    assert!(String::from_utf8_lossy(&cpu.stderr).contains("--backend tensix"));
}

#[test]
fn serve_info_reports_the_dispatch_obtained_and_what_detection_found() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;

    let case = &cases()[0];
    let mut server = Command::new(env!("CARGO_BIN_EXE_superpoint"))
        .arg("serve")
        .arg("--weights")
        .arg(case.weights_path())
        .args(["--backend", "tensix", "--port", "0"])
        .env("TTR_EMU_TT_METAL", "stock")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start superpoint serve");
    let mut line = String::new();
    let stdout = server.stdout.take().expect("stdout");
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("ready line");
    let info = line
        .trim()
        .strip_prefix("superpoint serve: listening on ")
        .map(|base| -> Result<serde_json::Value, String> {
            let response = ureq::get(&format!("{base}/info"))
                .call()
                .map_err(|e| e.to_string())?;
            response.into_json().map_err(|e| e.to_string())
        });
    server.kill().expect("stop the server");
    server.wait().expect("wait for the server");
    let info = info
        .unwrap_or_else(|| panic!("no ready line: {line:?}"))
        .expect("GET /info");
    let tensix = &info["tensix"];
    assert_eq!(tensix["requested"], "auto", "{info}");
    assert_eq!(tensix["dispatch"], "tensix", "{info}");
    assert_eq!(tensix["grid"], "11x10", "{info}");
    assert_eq!(tensix["eth_patch"], "stock", "{info}");
    let detection = tensix["detection"].as_str().unwrap_or_default();
    assert!(
        detection.contains("MEM_IERISC_KERNEL_SIZE = 24576"),
        "{info}"
    );
    let warning = tensix["warning"].as_str().unwrap_or_default();
    assert!(
        warning.contains("patches/tt-metal-eth-dispatch.patch"),
        "{info}"
    );
}
