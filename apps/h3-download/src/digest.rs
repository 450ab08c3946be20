//! SHA-256 of served files, computed once per file version and cached.
//!
//! Hashing a large file takes a while, so it runs on a thread of its own
//! and the event loop only asks [`DigestCache::lookup`] whether the digest
//! is ready. A file version is its entity tag (size, modification time,
//! inode): a changed file is hashed again, and a digest whose file changed
//! while it was being computed is thrown away. At most
//! [`MAX_HASHING`] files are hashed at once; a request for another one
//! finds it pending and asks again later.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::io::Read;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;

use crate::files;
use crate::files::OpenFile;

/// Files hashed at the same time, at most.
pub const MAX_HASHING: usize = 4;

/// A digest's state, as seen by a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    Ready([u8; 32]),
    /// Being computed; ask again.
    Pending,
    /// The file could not be read to the end; answer without a digest.
    Unavailable,
}

#[derive(Clone, Copy)]
enum State {
    Hashing,
    Ready([u8; 32]),
    Failed,
}

/// Digests by resolved path, each for one entity tag.
#[derive(Clone, Default)]
pub struct DigestCache {
    slots: Arc<Mutex<HashMap<PathBuf, (String, State)>>>,
}

impl DigestCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// The digest of `file`'s current version, starting its computation
    /// if nobody has.
    pub fn lookup(&self, file: &OpenFile) -> Lookup {
        let mut slots = self.slots.lock().expect("digest cache lock");
        if let Some((etag, state)) = slots.get(&file.path) {
            if *etag == file.etag {
                return match state {
                    State::Hashing => Lookup::Pending,
                    State::Ready(d) => Lookup::Ready(*d),
                    State::Failed => Lookup::Unavailable,
                };
            }
        }
        let hashing = slots
            .values()
            .filter(|(_, s)| matches!(s, State::Hashing))
            .count();
        if hashing >= MAX_HASHING {
            return Lookup::Pending;
        }
        slots.insert(file.path.clone(), (file.etag.clone(), State::Hashing));
        drop(slots);

        let slots = self.slots.clone();
        let path = file.path.clone();
        let etag = file.etag.clone();
        let spawned = std::thread::Builder::new()
            .name("h3-serve-digest".into())
            .spawn(move || {
                let outcome = hash_version(&path, &etag);
                let mut slots = slots.lock().expect("digest cache lock");
                // Only if nobody replaced the slot with a newer version.
                if slots.get(&path).is_some_and(|(e, _)| *e == etag) {
                    match outcome {
                        Ok(Some(d)) => {
                            slots.insert(path, (etag, State::Ready(d)));
                        }
                        // Changed while hashing: the next request starts over.
                        Ok(None) => {
                            slots.remove(&path);
                        }
                        Err(e) => {
                            log::warn!("cannot hash {}: {e}", path.display());
                            slots.insert(path, (etag, State::Failed));
                        }
                    }
                }
            });
        if spawned.is_err() {
            let mut slots = self.slots.lock().expect("digest cache lock");
            slots.insert(file.path.clone(), (file.etag.clone(), State::Failed));
            return Lookup::Unavailable;
        }
        Lookup::Pending
    }
}

/// The SHA-256 of the file at `path` if it is, before and after, the
/// version tagged `etag`.
fn hash_version(path: &Path, etag: &str) -> io::Result<Option<[u8; 32]>> {
    let mut file = File::open(path)?;
    if files::etag(&file.metadata()?) != etag {
        return Ok(None);
    }
    let digest = sha256_reader(&mut file)?;
    if files::etag(&std::fs::metadata(path)?) != etag {
        return Ok(None);
    }
    Ok(Some(digest))
}

/// The SHA-256 of everything `reader` yields.
pub fn sha256_reader(reader: &mut impl Read) -> io::Result<[u8; 32]> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(hasher.finish())
}

/// An incremental SHA-256.
#[derive(Clone)]
pub struct Sha256(ring::digest::Context);

impl Sha256 {
    pub fn new() -> Self {
        Sha256(ring::digest::Context::new(&ring::digest::SHA256))
    }

    pub fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }

    pub fn finish(self) -> [u8; 32] {
        self.0
            .finish()
            .as_ref()
            .try_into()
            .expect("SHA-256 is 32 bytes")
    }
}

impl Default for Sha256 {
    fn default() -> Self {
        Self::new()
    }
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::Root;

    #[test]
    fn digests_are_computed_once_per_version() {
        let dir = std::env::temp_dir().join(format!("h3-digest-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("f"), b"abc").unwrap();
        let root = Root::new(&dir).unwrap();
        let cache = DigestCache::new();
        let wait = |file: &OpenFile| loop {
            match cache.lookup(file) {
                Lookup::Pending => std::thread::sleep(std::time::Duration::from_millis(1)),
                other => return other,
            }
        };
        let first = root.open("/f").unwrap();
        let d = sha256_reader(&mut &b"abc"[..]).unwrap();
        assert_eq!(wait(&first), Lookup::Ready(d));
        // Cached: answered at once.
        assert_eq!(cache.lookup(&root.open("/f").unwrap()), Lookup::Ready(d));
        // A new version is hashed again.
        std::fs::write(dir.join("f"), b"abcd").unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(1);
        File::options()
            .write(true)
            .open(dir.join("f"))
            .unwrap()
            .set_modified(later)
            .unwrap();
        let second = root.open("/f").unwrap();
        assert_ne!(first.etag, second.etag);
        assert_eq!(
            wait(&second),
            Lookup::Ready(sha256_reader(&mut &b"abcd"[..]).unwrap())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sha256_of_known_input() {
        let d = sha256_reader(&mut &b"abc"[..]).unwrap();
        assert_eq!(
            hex(&d),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let mut h = Sha256::new();
        h.update(b"a");
        h.update(b"bc");
        assert_eq!(h.finish(), d);
    }
}
