//! Inputs: a small seeded generator (xorshift64*) and mutators that know
//! what breaks parsers: truncation, splicing two inputs, repeated ranges,
//! grammar tokens, huge and odd numbers, deep nesting, invalid UTF-8.

/// xorshift64* (Vigna, "An experimental exploration of Marsaglia's
/// xorshift generators, scrambled", ACM TOMS 42(4), 2016).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// Numbers that break careless parsers.
pub const ODD_NUMBERS: &[&str] = &[
    "0",
    "-0",
    "-1",
    "1e308",
    "1e400",
    "-1e400",
    "1e-400",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999999999",
    "9223372036854775808",
    "4294967296",
    "65536",
    "0.0000001",
    "1.5",
    "NaN",
    "inf",
    "-inf",
    "0x10",
    "1_000",
    "",
    " ",
];

/// Mutate `input` a few times; `others` are inputs to splice from and
/// `tokens` grammar words to insert.
pub fn mutate(rng: &mut Rng, input: &[u8], others: &[Vec<u8>], tokens: &[&str]) -> Vec<u8> {
    let mut data = input.to_vec();
    for _ in 0..=rng.below(4) {
        let len = data.len();
        match rng.below(11) {
            // Truncate.
            0 => data.truncate(rng.below(len + 1)),
            // Flip a byte.
            1 if len > 0 => {
                let i = rng.below(len);
                data[i] = rng.next() as u8;
            }
            // Delete a range.
            2 if len > 0 => {
                let a = rng.below(len);
                let b = (a + rng.below(64)).min(len);
                data.drain(a..b);
            }
            // Repeat a range.
            3 if len > 0 => {
                let a = rng.below(len);
                let b = (a + 1 + rng.below(256)).min(len);
                let chunk = data[a..b].to_vec();
                let at = rng.below(len + 1);
                for _ in 0..=rng.below(3) {
                    data.splice(at..at, chunk.iter().copied());
                }
            }
            // Splice: a prefix of this and a suffix of another.
            4 if !others.is_empty() => {
                let other = rng.pick(others);
                let cut = rng.below(len + 1);
                let from = rng.below(other.len() + 1);
                data.truncate(cut);
                data.extend_from_slice(&other[from..]);
            }
            // A grammar token.
            5 | 6 if !tokens.is_empty() => {
                let at = rng.below(len + 1);
                let t = tokens[rng.below(tokens.len())].as_bytes().to_vec();
                data.splice(at..at, t);
            }
            // An odd number in place of a digit run.
            7 => {
                let n = ODD_NUMBERS[rng.below(ODD_NUMBERS.len())].as_bytes();
                match data.iter().position(|b| b.is_ascii_digit()) {
                    Some(start) if rng.chance(2) => {
                        let start = start + rng.below(len - start).min(8);
                        let end = data[start..]
                            .iter()
                            .position(|b| !b.is_ascii_digit() && *b != b'.')
                            .map_or(len, |e| start + e);
                        data.splice(start..end, n.iter().copied());
                    }
                    _ => {
                        let at = rng.below(len + 1);
                        data.splice(at..at, n.iter().copied());
                    }
                }
            }
            // Deep nesting.
            8 => {
                let depth = 1 + rng.below(5000);
                let (open, close) = if rng.chance(2) {
                    ("[", "]")
                } else {
                    ("{\"a\":", "}")
                };
                let mut nest = open.repeat(depth);
                if rng.chance(2) {
                    nest.push_str(&close.repeat(depth));
                }
                let at = rng.below(len + 1);
                data.splice(at..at, nest.into_bytes());
            }
            // Invalid UTF-8 and control bytes.
            9 => {
                let at = rng.below(len + 1);
                let junk = [0xff, 0xc3, 0x28, 0x00, 0x1e, b'\n', b'\r', 0xe2, 0x82];
                let n = 1 + rng.below(4);
                let bytes: Vec<u8> = (0..n).map(|_| *rng.pick(&junk)).collect();
                data.splice(at..at, bytes);
            }
            // Random bytes.
            _ => {
                let n = rng.below(64);
                let at = rng.below(len + 1);
                let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                data.splice(at..at, bytes);
            }
        }
    }
    data
}

/// A string of 1..=`max` tokens from `tokens` (and now and then a random
/// character).
pub fn token_string(rng: &mut Rng, tokens: &[&str], max: usize) -> String {
    let mut s = String::new();
    for _ in 0..=rng.below(max) {
        if rng.chance(12) {
            s.push(char::from_u32(rng.below(0x3000) as u32).unwrap_or('?'));
        } else {
            s.push_str(tokens[rng.below(tokens.len())]);
        }
    }
    s
}
