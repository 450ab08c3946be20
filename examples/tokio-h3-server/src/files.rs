//! Which file a request's `:path` names, never one outside the root.

use std::path::Path;
use std::path::PathBuf;

/// Why a path names no file to serve.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// 403: the path would leave the root (a `..` segment, or a symbolic
    /// link to somewhere outside it).
    OutsideRoot,
    /// 404: malformed, or nothing there.
    NotFound,
}

impl Refused {
    /// The HTTP status code.
    pub fn code(&self) -> u16 {
        match self {
            Refused::OutsideRoot => 403,
            Refused::NotFound => 404,
        }
    }
}

/// The file under `root` (canonical) that `path` (a request's `:path`,
/// percent-encoded, maybe with a query) names.
pub fn resolve(root: &Path, path: &[u8]) -> Result<PathBuf, Refused> {
    let path = path.split(|&b| b == b'?').next().unwrap_or_default();
    if path.first() != Some(&b'/') {
        return Err(Refused::NotFound);
    }
    let decoded = percent_decode(path).ok_or(Refused::NotFound)?;
    let decoded = String::from_utf8(decoded).map_err(|_| Refused::NotFound)?;
    let mut file = root.to_path_buf();
    for segment in decoded.split('/') {
        match segment {
            "" | "." => {}
            ".." => return Err(Refused::OutsideRoot),
            s if s.contains(['\\', '\0']) => return Err(Refused::NotFound),
            s => file.push(s),
        }
    }
    // A symbolic link inside the root may point outside it.
    let real = std::fs::canonicalize(&file).map_err(|_| Refused::NotFound)?;
    if !real.starts_with(root) {
        return Err(Refused::OutsideRoot);
    }
    Ok(real)
}

/// RFC 3986 §2.1: "A percent-encoded octet is encoded as a character
/// triplet, consisting of the percent character "%" followed by the two
/// hexadecimal digits representing that octet's numeric value." `None` for
/// a `%` not followed by two hexadecimal digits.
fn percent_decode(s: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> (PathBuf, PathBuf) {
        let base =
            std::env::temp_dir().join(format!("tokio-h3-server-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("a b.txt"), b"a").unwrap();
        std::fs::write(root.join("sub/c.txt"), b"c").unwrap();
        std::fs::write(base.join("secret"), b"s").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(base.join("secret"), root.join("link")).unwrap();
        (std::fs::canonicalize(&root).unwrap(), base)
    }

    #[test]
    fn paths_inside_the_root_resolve_and_escapes_are_refused() {
        let (root, base) = fixture();
        let ok = |p: &str| resolve(&root, p.as_bytes());
        assert_eq!(ok("/a%20b.txt"), Ok(root.join("a b.txt")));
        assert_eq!(ok("/sub/c.txt?x=1"), Ok(root.join("sub/c.txt")));
        assert_eq!(ok("/./sub//c.txt"), Ok(root.join("sub/c.txt")));
        assert_eq!(ok("/../secret"), Err(Refused::OutsideRoot));
        assert_eq!(ok("/sub/../../secret"), Err(Refused::OutsideRoot));
        assert_eq!(ok("/%2e%2e/secret"), Err(Refused::OutsideRoot));
        assert_eq!(ok("/sub%2f..%2f..%2fsecret"), Err(Refused::OutsideRoot));
        #[cfg(unix)]
        assert_eq!(ok("/link"), Err(Refused::OutsideRoot));
        assert_eq!(ok("/missing"), Err(Refused::NotFound));
        assert_eq!(ok("/a%2"), Err(Refused::NotFound));
        assert_eq!(ok("/a%zz"), Err(Refused::NotFound));
        assert_eq!(ok("relative"), Err(Refused::NotFound));
        assert_eq!(ok("/sub\\..\\..\\secret"), Err(Refused::NotFound));
        std::fs::remove_dir_all(base).unwrap();
    }
}
