//! The part file and its metadata: `FILE.part` holds the bytes received so
//! far, `FILE.part.meta` (a line of JSON, [`PartMeta`]) what they are a
//! prefix of. Opening, resuming and giving up on a part file live here.

use std::fs;
use std::fs::File;
use std::io;
use std::io::Read;
use std::io::Seek;
use std::io::SeekFrom;
use std::path::Path;
use std::path::PathBuf;

use quiche_lbe::Error;
use serde::Deserialize;
use serde::Serialize;

use crate::digest::Sha256;
use crate::fields;

/// `FILE.part`.
pub fn part_path(output: &Path) -> PathBuf {
    let mut name = output.as_os_str().to_os_string();
    name.push(".part");
    PathBuf::from(name)
}

/// `FILE.part.meta`.
pub fn meta_path(output: &Path) -> PathBuf {
    let mut name = output.as_os_str().to_os_string();
    name.push(".part.meta");
    PathBuf::from(name)
}

/// What `FILE.part.meta` records about the part file's source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartMeta {
    pub url: String,
    /// A strong entity tag: without one a download cannot be resumed.
    pub etag: String,
    pub size: Option<u64>,
    /// The server's `Repr-Digest` value.
    pub repr_digest: Option<String>,
}

impl PartMeta {
    pub(super) fn load(path: &Path) -> Option<Self> {
        serde_json::from_slice(&fs::read(path).ok()?).ok()
    }

    /// Replaces the file atomically.
    pub(super) fn store(&self, path: &Path) -> io::Result<()> {
        let mut tmp = path.as_os_str().to_os_string();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let mut line = serde_json::to_vec(self).expect("meta serializes");
        line.push(b'\n');
        fs::write(&tmp, &line)?;
        fs::rename(&tmp, path)
    }
}

/// A resumable prefix of the file, from an earlier run.
pub(super) struct Resume {
    pub(super) len: u64,
    pub(super) meta: PartMeta,
}

/// The part file of an earlier run, if it can be continued.
pub(super) fn find_resumable(url: &str, part: &Path, meta: &Path) -> Option<Resume> {
    let len = fs::metadata(part).ok()?.len();
    let meta = PartMeta::load(meta)?;
    (len > 0 && meta.url == url && fields::is_strong_etag(&meta.etag))
        .then_some(Resume { len, meta })
}

/// A part file opened for writing.
pub(super) struct OpenPart {
    pub(super) file: File,
    /// SHA-256 of the bytes kept from an earlier run.
    pub(super) hasher: Sha256,
    /// Whether the file was there before this run.
    pub(super) existed: bool,
}

/// Opens (or creates) `part`; when resuming, hashes the `resume.len` bytes
/// kept and positions the file after them. Opening it before any network
/// work finds an unwritable path at once.
pub(super) fn open_part(part: &Path, resume: Option<&Resume>) -> Result<OpenPart, Error> {
    let existed = part.exists();
    let mut file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(part)
        .map_err(|e| write_err(part, e))?;
    let mut hasher = Sha256::new();
    if let Some(r) = resume {
        // What the SHA-256 check at the end covers includes the kept part.
        let mut prefix = (&mut file).take(r.len);
        let mut buf = vec![0u8; 256 * 1024];
        loop {
            let n = prefix
                .read(&mut buf)
                .map_err(|e| Error::new(format!("cannot read {}: {e}", part.display())))?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        file.seek(SeekFrom::Start(r.len))
            .map_err(|e| write_err(part, e))?;
    }
    Ok(OpenPart {
        file,
        hasher,
        existed,
    })
}

/// The error for a failed write to `path`.
pub(super) fn write_err(path: &Path, e: io::Error) -> Error {
    Error::new(format!("cannot write {}: {e}", path.display()))
}

/// Removes a part file that cannot be resumed (empty, or without a
/// validator) and says what was kept.
pub(super) fn with_part_note(error: Error, part: &Path, meta: &Path, touched: bool) -> Error {
    let len = fs::metadata(part).map(|m| m.len()).unwrap_or(0);
    let resumable = meta.exists() && len > 0;
    if !resumable {
        if touched {
            let _ = fs::remove_file(part);
            let _ = fs::remove_file(meta);
        }
        return error;
    }
    Error::new(format!(
        "{error}; {} kept in {} (continue with --resume)",
        lbe_units::fmt_bytes(len),
        part.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A fresh directory for one test.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("h3-fetch-part-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn meta(url: &str, etag: &str) -> PartMeta {
        PartMeta {
            url: url.into(),
            etag: etag.into(),
            size: Some(10),
            repr_digest: None,
        }
    }

    #[test]
    fn part_names() {
        assert_eq!(
            part_path(Path::new("/d/f.iso")),
            PathBuf::from("/d/f.iso.part")
        );
        assert_eq!(meta_path(Path::new("f")), PathBuf::from("f.part.meta"));
    }

    #[test]
    fn a_part_file_resumes_only_for_its_url_and_a_strong_etag() {
        let dir = scratch("resume");
        let (part, meta_file) = (dir.join("f.part"), dir.join("f.part.meta"));
        assert!(
            find_resumable("https://h/f", &part, &meta_file).is_none(),
            "no files"
        );
        fs::write(&part, b"01234").unwrap();
        meta("https://h/f", "\"v1\"").store(&meta_file).unwrap();
        assert_eq!(
            PartMeta::load(&meta_file),
            Some(meta("https://h/f", "\"v1\""))
        );
        let r = find_resumable("https://h/f", &part, &meta_file).unwrap();
        assert_eq!((r.len, r.meta.etag.as_str()), (5, "\"v1\""));
        assert!(
            find_resumable("https://h/g", &part, &meta_file).is_none(),
            "other URL"
        );
        meta("https://h/f", "W/\"v1\"").store(&meta_file).unwrap();
        assert!(
            find_resumable("https://h/f", &part, &meta_file).is_none(),
            "weak etag"
        );
        meta("https://h/f", "\"v1\"").store(&meta_file).unwrap();
        fs::write(&part, b"").unwrap();
        assert!(
            find_resumable("https://h/f", &part, &meta_file).is_none(),
            "empty"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn resuming_hashes_the_kept_prefix_and_writes_after_it() {
        let dir = scratch("open");
        let part = dir.join("f.part");
        fs::write(&part, b"0123456789").unwrap();
        let resume = Resume {
            len: 4,
            meta: meta("https://h/f", "\"v1\""),
        };
        let mut open = open_part(&part, Some(&resume)).unwrap();
        assert!(open.existed);
        let mut expected = Sha256::new();
        expected.update(b"0123");
        assert_eq!(open.hasher.finish(), expected.finish());
        open.file.write_all(b"ab").unwrap();
        assert_eq!(fs::read(&part).unwrap(), b"0123ab6789");
        let fresh = open_part(&dir.join("g.part"), None).unwrap();
        assert!(!fresh.existed);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_download_keeps_a_resumable_part_and_says_so() {
        let dir = scratch("note");
        let (part, meta_file) = (dir.join("f.part"), dir.join("f.part.meta"));
        fs::write(&part, b"01234").unwrap();
        let e = with_part_note(Error::new("reset"), &part, &meta_file, true);
        assert_eq!(e.to_string(), "reset");
        assert!(!part.exists(), "no metadata: not resumable, removed");
        fs::write(&part, b"01234").unwrap();
        meta("https://h/f", "\"v1\"").store(&meta_file).unwrap();
        let e = with_part_note(Error::new("reset"), &part, &meta_file, true);
        assert_eq!(
            e.to_string(),
            format!(
                "reset; 5 B kept in {} (continue with --resume)",
                part.display()
            )
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
