/*
 * quiche-lbe's C entry point: less-than-best-effort congestion controllers
 * (LEDBAT++, LEDBAT, CDG) for programs that use quiche's C API.
 *
 * Link target/release/libquiche_lbe_ffi.a (cargo build --release -p
 * quiche-lbe-ffi): it holds quiche's C API, declared in quiche's own
 * include/quiche.h, as well as the function below, so a program links this
 * one library (plus the system's -lstdc++ -lpthread -ldl -lm for BoringSSL
 * and the Rust standard library).
 *
 *     #include <quiche.h>
 *     #include <quiche_lbe.h>
 *
 *     quiche_lbe_register();
 *     quiche_config *config = quiche_config_new(QUICHE_PROTOCOL_VERSION);
 *     quiche_config_set_cc_algorithm_name(config, "ledbatpp");
 */
#ifndef QUICHE_LBE_H
#define QUICHE_LBE_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Makes the plug-ins known to quiche_config_set_cc_algorithm_name() by
 * name, for the whole process: "ledbatpp", "ledbat", "cdg" and "fixed"
 * (a constant window, for tests). A name may carry parameters, as in the
 * command-line tools' --cc option: "ledbatpp:profile=full",
 * "cdg:g=0.5", "ledbat:target=5ms". quiche's own names ("cubic", "reno",
 * "bbr2") keep their meaning.
 *
 * quiche_config_set_cc_algorithm_name() returns
 * QUICHE_ERR_CONGESTION_CONTROL (-14) for an unknown name or a parameter
 * the controller does not accept, and leaves the configuration unchanged.
 *
 * Returns 0 on success. Safe to call more than once and from any thread.
 */
int quiche_lbe_register(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* QUICHE_LBE_H */
