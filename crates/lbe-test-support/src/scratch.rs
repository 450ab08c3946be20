//! Scratch directories and deterministic content.

use std::path::Path;
use std::path::PathBuf;

/// A scratch directory, `<system temp dir>/<name>-<process id>`, emptied
/// when made and removed on drop (kept when the test panics, to look at).
pub struct Scratch(PathBuf);

impl Scratch {
    /// Makes the directory; `name` tells the test apart from the others in
    /// the same process.
    pub fn new(name: &str) -> Self {
        Scratch(fresh_dir(
            &std::env::temp_dir().join(format!("{name}-{}", std::process::id())),
        ))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// A path inside, not created.
    pub fn join(&self, p: &str) -> PathBuf {
        self.0.join(p)
    }

    /// A subdirectory, created.
    pub fn dir(&self, p: &str) -> PathBuf {
        let d = self.0.join(p);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A file inside with this text (a scenario file, a config), written.
    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let f = self.0.join(name);
        std::fs::write(&f, text).unwrap();
        f
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// `dir`, emptied (removed and made again) and kept: for a run's outputs
/// that stay to be looked at, under `CARGO_TARGET_TMPDIR`.
pub fn fresh_dir(dir: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    dir.to_path_buf()
}

/// `len` bytes of deterministic, incompressible-looking content: an
/// xorshift64 stream seeded from `seed` (each seed its own stream).
pub fn content(len: u64, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_dir_is_fresh_and_gone_after_drop() {
        let path = {
            let s = Scratch::new("lbe-test-support-scratch");
            assert_eq!(std::fs::read_dir(s.path()).unwrap().count(), 0);
            let f = s.file("a.toml", "x = 1\n");
            assert_eq!(std::fs::read_to_string(&f).unwrap(), "x = 1\n");
            assert!(s.dir("sub").is_dir());
            assert_eq!(s.join("a.toml"), f);
            s.path().to_path_buf()
        };
        assert!(!path.exists());
    }

    #[test]
    fn fresh_dir_empties_and_keeps() {
        let d = std::env::temp_dir().join(format!("lbe-test-support-fresh-{}", std::process::id()));
        fresh_dir(&d);
        std::fs::write(d.join("old"), "").unwrap();
        assert_eq!(fresh_dir(&d), d);
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn content_is_deterministic_per_seed() {
        assert_eq!(content(1000, 7), content(1000, 7));
        assert_ne!(content(1000, 7), content(1000, 8));
        assert_eq!(content(0, 7), Vec::<u8>::new());
        // The stream's first bytes for seed 1, fixed: files made by tests
        // compare against these.
        assert_eq!(content(4, 1), vec![0x0b, 0x02, 0xe5, 0x36]);
        // Incompressible-looking: every byte value occurs.
        let mut seen = [false; 256];
        content(10_000, 3)
            .iter()
            .for_each(|&b| seen[b as usize] = true);
        assert!(seen.iter().all(|&s| s));
    }
}
