//! `Dispatch::Auto` on the emulator: standing in for a patched tt-metal it opens with ETH
//! dispatch and the 12x10 grid; standing in for a stock one it falls back to Tensix dispatch and
//! 11x10 with a warning naming the patch, and refuses an explicit ETH open as stock tt-metal
//! would. The detection itself is tested on fake tt-metal trees in `src/install.rs`.

mod common;

use common::expect_err;
use tt_runtime::install::PATCH;
use tt_runtime::{Device, Dispatch, Error, EthDispatch, Installation};

#[test]
fn auto_takes_eth_and_12x10_when_the_installation_is_patched() {
    let dev = Device::open_with(Dispatch::Auto, Installation::emulator(false)).unwrap();
    let info = dev.info().unwrap();
    assert_eq!(
        (info.dispatch, info.grid_x, info.grid_y),
        (Dispatch::Eth, 12, 10)
    );
    let opening = dev.opening();
    assert_eq!(opening.requested, Dispatch::Auto);
    assert_eq!(opening.warning, None);
    assert!(matches!(
        opening.installation.eth_dispatch,
        EthDispatch::Patched(_)
    ));
}

#[test]
fn auto_falls_back_to_tensix_and_11x10_with_a_warning_on_a_stock_installation() {
    let dev = Device::open_with(Dispatch::Auto, Installation::emulator(true)).unwrap();
    let info = dev.info().unwrap();
    assert_eq!(
        (info.dispatch, info.grid_x, info.grid_y),
        (Dispatch::Tensix, 11, 10)
    );
    let warning = dev.opening().warning.clone().expect("the fallback warns");
    assert!(
        warning.contains(PATCH) && warning.contains("11x10"),
        "{warning}"
    );
}

#[test]
fn an_explicit_placement_wins_and_eth_is_refused_on_a_stock_installation() {
    let tensix = Device::open_with(Dispatch::Tensix, Installation::emulator(false)).unwrap();
    assert_eq!(tensix.info().unwrap().dispatch, Dispatch::Tensix);
    assert_eq!(tensix.opening().warning, None);
    drop(tensix);
    let e = expect_err(Device::open_with(
        Dispatch::Eth,
        Installation::emulator(true),
    ));
    assert!(
        matches!(&e, Error::Unsupported(m) if m.contains("Ethernet") && m.contains("stock")),
        "{e:?}"
    );
}

#[test]
fn the_obtained_placement_names_its_grid() {
    assert_eq!(Dispatch::default(), Dispatch::Auto);
    assert_eq!(Dispatch::Eth.grid(), Some((12, 10)));
    assert_eq!(Dispatch::Tensix.grid(), Some((11, 10)));
    assert_eq!(Dispatch::Auto.grid(), None);
}
