//! The served directory: from a request's `:path` to an open regular file
//! inside `--root`, or the reason there is none.
//!
//! A path is percent-decoded once, segment by segment. A segment that
//! decodes to `..`, or to anything holding `/` or NUL, is refused (403)
//! before the file system is asked anything. The joined path is then
//! resolved with every symlink followed (`canonicalize`) and must still
//! lie under the canonical root (403 otherwise: a symlink leading out).
//! The resolved path, which has no symlinks left, is opened with
//! `O_NOFOLLOW | O_NONBLOCK` and the open file must be a regular file, so
//! neither a symlink swapped in after the check nor a FIFO can be served or
//! stall the server.

use std::ffi::OsStr;
use std::fs;
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::path::PathBuf;
use std::time::SystemTime;

use percent_encoding::percent_decode_str;
use quiche_lbe::Error;

/// Why a request's path is not served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// 400: not an absolute path.
    BadRequest,
    /// 403: the path would leave the root, or names something that is not
    /// a regular file.
    Forbidden,
    /// 404: nothing there (or a directory: there are no listings).
    NotFound,
}

impl Refusal {
    /// The HTTP status.
    pub fn status(self) -> u16 {
        match self {
            Refusal::BadRequest => 400,
            Refusal::Forbidden => 403,
            Refusal::NotFound => 404,
        }
    }
}

/// A file opened for a request, with the metadata its response carries.
#[derive(Debug)]
pub struct OpenFile {
    pub file: File,
    /// The resolved path, inside the root.
    pub path: PathBuf,
    pub size: u64,
    pub modified: SystemTime,
    /// A strong validator from size, modification time (ns) and inode:
    /// rewriting or replacing the file changes it.
    pub etag: String,
}

impl OpenFile {
    /// The `Last-Modified` value.
    pub fn last_modified(&self) -> String {
        httpdate::fmt_http_date(self.modified)
    }
}

/// The directory being served.
#[derive(Clone, Debug)]
pub struct Root {
    canonical: PathBuf,
}

impl Root {
    /// The root at `dir`, which must be a directory.
    pub fn new(dir: &Path) -> Result<Self, Error> {
        let canonical = fs::canonicalize(dir)
            .map_err(|e| Error::new(format!("cannot use --root {}: {e}", dir.display())))?;
        if !canonical.is_dir() {
            return Err(Error::new(format!(
                "--root {} is not a directory",
                dir.display()
            )));
        }
        Ok(Root { canonical })
    }

    /// The root, with symlinks resolved.
    pub fn path(&self) -> &Path {
        &self.canonical
    }

    /// Maps a request target (`/a/b%20c?x=1`) to a path under the root
    /// without touching the file system.
    pub fn join(&self, target: &str) -> Result<PathBuf, Refusal> {
        let path = target.split(['?', '#']).next().unwrap_or("");
        let Some(relative) = path.strip_prefix('/') else {
            return Err(Refusal::BadRequest);
        };
        let mut joined = self.canonical.clone();
        for segment in relative.split('/') {
            let decoded: Vec<u8> = percent_decode_str(segment).collect();
            if decoded.contains(&b'/') || decoded.contains(&0) {
                return Err(Refusal::Forbidden);
            }
            match decoded.as_slice() {
                b"" | b"." => {}
                b".." => return Err(Refusal::Forbidden),
                name => joined.push(OsStr::from_bytes(name)),
            }
        }
        Ok(joined)
    }

    /// Opens the regular file a request target names.
    pub fn open(&self, target: &str) -> Result<OpenFile, Refusal> {
        let joined = self.join(target)?;
        let resolved = match fs::canonicalize(&joined) {
            Ok(p) => p,
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                return Err(Refusal::Forbidden)
            }
            Err(_) => return Err(Refusal::NotFound),
        };
        if !resolved.starts_with(&self.canonical) {
            return Err(Refusal::Forbidden);
        }
        let file = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&resolved)
            .map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => Refusal::NotFound,
                _ => Refusal::Forbidden,
            })?;
        let meta = file.metadata().map_err(|_| Refusal::Forbidden)?;
        if meta.is_dir() {
            return Err(Refusal::NotFound);
        }
        if !meta.is_file() {
            return Err(Refusal::Forbidden);
        }
        Ok(OpenFile {
            file,
            path: resolved,
            size: meta.len(),
            modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            etag: etag(&meta),
        })
    }
}

/// The entity tag of a file with this metadata.
pub fn etag(meta: &fs::Metadata) -> String {
    let mtime_ns = meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128;
    format!("\"{:x}-{:x}-{:x}\"", meta.len(), mtime_ns, meta.ino())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> (tempdir::Dir, Root) {
        let dir = tempdir::Dir::new("files");
        let root = Root::new(dir.path()).unwrap();
        (dir, root)
    }

    /// A directory removed on drop (no dev-dependency needed for one).
    mod tempdir {
        use std::path::Path;
        use std::path::PathBuf;

        pub struct Dir(PathBuf);

        impl Dir {
            pub fn new(name: &str) -> Self {
                let p = std::env::temp_dir().join(format!(
                    "h3-download-unit-{name}-{}-{:?}",
                    std::process::id(),
                    std::thread::current().id()
                ));
                let _ = std::fs::remove_dir_all(&p);
                std::fs::create_dir_all(&p).unwrap();
                Dir(p)
            }
            pub fn path(&self) -> &Path {
                &self.0
            }
        }

        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    #[test]
    fn joins_decoded_segments() {
        let (_d, root) = root();
        let base = root.path().to_path_buf();
        assert_eq!(root.join("/a/b").unwrap(), base.join("a/b"));
        assert_eq!(root.join("/a%20b?x=/../..").unwrap(), base.join("a b"));
        assert_eq!(root.join("//a/./b/").unwrap(), base.join("a/b"));
        assert_eq!(root.join("/").unwrap(), base);
        // Decoded once: %252e stays a literal "%2e".
        assert_eq!(root.join("/%252e%252e/x").unwrap(), base.join("%2e%2e/x"));
    }

    #[test]
    fn refuses_traversal_before_touching_the_disk() {
        let (_d, root) = root();
        for target in [
            "/..",
            "/../etc/passwd",
            "/a/../../b",
            "/%2e%2e/x",
            "/%2E%2E/x",
            "/.%2e/x",
            "/a%2f..%2f..%2fx",
            "/a%2Fb",
            "/a%00b",
        ] {
            assert_eq!(root.join(target), Err(Refusal::Forbidden), "{target}");
        }
        assert_eq!(root.join("etc/passwd"), Err(Refusal::BadRequest));
        assert_eq!(root.join("*"), Err(Refusal::BadRequest));
    }

    #[test]
    fn opens_regular_files_only() {
        let (d, root) = root();
        std::fs::write(d.path().join("f"), b"hello").unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        let f = root.open("/f").unwrap();
        assert_eq!(f.size, 5);
        assert!(crate::fields::is_strong_etag(&f.etag));
        assert_eq!(root.open("/sub").unwrap_err(), Refusal::NotFound);
        assert_eq!(root.open("/missing").unwrap_err(), Refusal::NotFound);
        assert_eq!(root.open("/f/x").unwrap_err(), Refusal::NotFound);

        let outside = tempdir::Dir::new("outside");
        std::fs::write(outside.path().join("secret"), b"s").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), d.path().join("out")).unwrap();
        std::os::unix::fs::symlink(outside.path(), d.path().join("outdir")).unwrap();
        std::os::unix::fs::symlink(d.path().join("f"), d.path().join("in")).unwrap();
        assert_eq!(root.open("/out").unwrap_err(), Refusal::Forbidden);
        assert_eq!(root.open("/outdir/secret").unwrap_err(), Refusal::Forbidden);
        assert_eq!(root.open("/in").unwrap().size, 5);

        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(root.open("/fifo").unwrap_err(), Refusal::Forbidden);
    }

    #[test]
    fn etag_changes_with_content() {
        let (d, root) = root();
        let p = d.path().join("f");
        std::fs::write(&p, b"one").unwrap();
        let a = root.open("/f").unwrap().etag;
        std::fs::write(&p, b"two").unwrap();
        // Same size; a clock coarser than the two writes could give the
        // same time, so set one a second later.
        let later = SystemTime::now() + std::time::Duration::from_secs(1);
        File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(later)
            .unwrap();
        let b = root.open("/f").unwrap().etag;
        assert_ne!(a, b);
    }
}
