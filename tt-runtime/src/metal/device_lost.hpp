// When the metal backend takes a card for lost (TTR_ERR_DEVICE_LOST, as the emulator's fault
// injection does): tt-metal's dispatch waits give up after TT_METAL_OPERATION_TIMEOUT_SECONDS and
// throw a std::runtime_error whose text says the device hung. Without that variable set they wait
// forever, so ttr_device_open sets a default before the first device opens (a value already in
// the environment wins). scripts/metal-check.sh runs the classifier's test on every hang message the
// 0.78 libtt_metal.so holds and on its other failure messages
// (tt-runtime/tests/metal/device_lost.cpp).
#pragma once

#include <string>

namespace ttr_metal {

// Seconds tt-metal waits for the device before it throws, unless the environment says otherwise.
// A frame's programs take well under a millisecond on the card; kernel compilation happens on the
// host before the wait starts.
constexpr const char *DEFAULT_OPERATION_TIMEOUT_SECONDS = "30";

// Whether a tt-metal exception's text reports a hung device (libtt_metal.so 0.78's messages:
// "TIMEOUT: device timeout, potential hang detected, the device is unrecoverable", "TIMEOUT: device
// timeout in fetch queue wait, potential hang detected", "Device {}: Timeout ({} ms) waiting for
// physical cores to finish: {}."). tt-metal's messages are not a stable interface; the check in
// metal-check.sh fails when the pinned library's wording changes.
inline bool reports_hang(const std::string &what) {
    return what.find("potential hang detected") != std::string::npos ||
           what.find("waiting for physical cores to finish") != std::string::npos;
}

}  // namespace ttr_metal
