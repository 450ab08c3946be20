//! The link's one uniform draw, shared by the random loss, the AQMs' coin
//! and the cross traffic's gaps, so that each stream turns its generator's
//! words into numbers the same way.

use rand_core::Rng;
use rand_xorshift::XorShiftRng;

/// One uniform draw in [0, 1) with 53 bits.
pub(crate) fn uniform(rng: &mut XorShiftRng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}
