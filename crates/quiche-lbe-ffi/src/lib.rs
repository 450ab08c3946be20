//! The C entry point of quiche-lbe, and the static library a C program
//! links to use quiche with the plug-ins.
//!
//! `libquiche_lbe_ffi.a` (built by `cargo build --release -p
//! quiche-lbe-ffi`) holds quiche's C API (quiche's `ffi` feature, declared
//! in quiche's `include/quiche.h`) and [`quiche_lbe_register()`] (declared
//! in `include/quiche_lbe.h`). After `quiche_lbe_register()`,
//! `quiche_config_set_cc_algorithm_name(config, "ledbatpp")` chooses
//! LEDBAT++, with any parameter of the `--cc` grammar
//! (`"ledbatpp:profile=full"`); see [`quiche_lbe::registry`].

// quiche's C functions need no mention here: a static library bundles
// every crate it depends on whole, quiche's `#[no_mangle]` functions with it.

/// Registers every plug-in (`ledbatpp`, `ledbat`, `cdg`, `fixed`) with
/// quiche under its name, for the whole process ([`quiche_lbe::register()`]).
/// Returns 0, or quiche's error code (`QUICHE_ERR_CONGESTION_CONTROL`, -14,
/// which does not happen with these names). Safe to call more than once and
/// from any thread.
#[no_mangle]
pub extern "C" fn quiche_lbe_register() -> i32 {
    match quiche_lbe::register() {
        Ok(()) => 0,
        Err(quiche::Error::CongestionControl) => -14,
        // register_congestion_control() returns no other error.
        Err(_) => -1,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn registering_succeeds_and_the_names_work() {
        assert_eq!(super::quiche_lbe_register(), 0);
        assert_eq!(super::quiche_lbe_register(), 0);
        let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
        assert_eq!(config.set_cc_algorithm_name("ledbatpp"), Ok(()));
    }
}
