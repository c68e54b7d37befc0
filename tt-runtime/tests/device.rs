//! Device geometry: grid size per dispatch placement, logical -> NoC coordinates, DRAM banks,
//! buffers and their limits.

mod common;

use common::expect_err;
use tt_runtime::{CoreCoord, Device, Dispatch, Error};

#[test]
fn eth_dispatch_gives_12x10_and_tensix_11x10() {
    let eth = Device::open(Dispatch::Eth).unwrap();
    let info = eth.info().unwrap();
    assert_eq!(
        (info.grid_x, info.grid_y, info.dispatch),
        (12, 10, Dispatch::Eth)
    );
    assert_eq!(info.l1_size, 1536 * 1024);
    // Firmware below 40 KiB (MEM_MAP_END), then the 69 KiB kernel-config region.
    assert_eq!(info.l1_unreserved_base, 109 * 1024);
    assert_eq!(info.l1_size - info.l1_unreserved_base, 1427 * 1024);
    assert_eq!(
        (info.dram_banks, info.max_cbs, info.max_runtime_args),
        (8, 64, 341)
    );
    assert!(info.is_emulator);
    drop(eth);
    let tensix = Device::open(Dispatch::Tensix).unwrap();
    let info = tensix.info().unwrap();
    assert_eq!(
        (info.grid_x, info.grid_y, info.dispatch),
        (11, 10, Dispatch::Tensix)
    );
    let e = expect_err(tensix.worker_core(CoreCoord::new(11, 0)));
    assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
}

#[test]
fn noc_coordinates_differ_from_logical_ones() {
    let dev = Device::open(Dispatch::Eth).unwrap();
    // Columns 1-7 then 10-14 (8 and 9 are L2CPU / DRAM); rows start at 2.
    assert_eq!(
        dev.worker_core(CoreCoord::new(0, 0)).unwrap(),
        CoreCoord::new(1, 2)
    );
    assert_eq!(
        dev.worker_core(CoreCoord::new(6, 3)).unwrap(),
        CoreCoord::new(7, 5)
    );
    assert_eq!(
        dev.worker_core(CoreCoord::new(7, 3)).unwrap(),
        CoreCoord::new(10, 5)
    );
    assert_eq!(
        dev.worker_core(CoreCoord::new(11, 9)).unwrap(),
        CoreCoord::new(14, 11)
    );
    assert_eq!(dev.dram_core(0).unwrap(), CoreCoord::new(0, 2));
    assert_eq!(dev.dram_core(7).unwrap(), CoreCoord::new(9, 11));
    assert!(dev.dram_core(8).is_err());
}

#[test]
fn dram_buffers_round_trip_and_check_sizes() {
    let dev = Device::open(Dispatch::Eth).unwrap();
    // 20 pages of 100 bytes: pages land in banks round-robin; a round trip gives them back.
    let buf = dev.dram_buffer(2000, 100).unwrap();
    let data: Vec<u8> = (0..2000u32).map(|i| (i * 7 % 256) as u8).collect();
    buf.write(&data).unwrap();
    assert_eq!(buf.read_vec().unwrap(), data);
    assert_eq!(buf.address() % 64, 0);
    // Pages 9..12 (banks 1, 2, 3) alone.
    let mut some = vec![0u8; 300];
    buf.read_pages(9, 3, &mut some).unwrap();
    assert_eq!(some, data[900..1200]);
    assert!(matches!(
        expect_err(buf.read_pages(18, 3, &mut some)),
        Error::InvalidArgument(_)
    ));
    assert!(matches!(
        expect_err(buf.read_pages(0, 2, &mut some)),
        Error::InvalidArgument(_)
    ));
    assert!(matches!(
        expect_err(buf.write(&data[..10])),
        Error::InvalidArgument(_)
    ));
    assert!(matches!(
        expect_err(dev.dram_buffer(1000, 300)),
        Error::InvalidArgument(_)
    ));
    // L1 buffers are allocated from the top of L1 down, 16-byte aligned.
    let l1 = dev.l1_buffer(1000).unwrap();
    assert_eq!(l1.address(), 1536 * 1024 - 1008);
    assert!(matches!(
        expect_err(dev.l1_buffer(2 * 1024 * 1024)),
        Error::OutOfMemory(_)
    ));
}
