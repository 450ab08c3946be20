//! `h3-fetch`: downloads one URL to a file, resumably, and never leaves a
//! corrupt file behind.
//!
//! Data goes to `FILE.part`; `FILE.part.meta` (a line of JSON) records the
//! URL, the response's strong entity tag, its length and its digest. The
//! part file is renamed to `FILE` only once the body is complete, its
//! length is the announced one and, when the server sent `Repr-Digest`,
//! its SHA-256 matches. `--resume` continues a part file with
//! `Range: bytes=N-` and `If-Range: <etag>`: a server whose file changed
//! answers 200 with the new version, which replaces the part file rather
//! than being spliced onto it.

use std::fs;
use std::fs::File;
use std::io;
use std::io::Read;
use std::io::Seek;
use std::io::SeekFrom;
use std::io::Write;
use std::net::SocketAddr;
use std::net::ToSocketAddrs;
use std::path::Path;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use std::time::Instant;

use indicatif::ProgressBar;
use lbe_app_kit::endpoint::client;
use lbe_app_kit::endpoint::client::ClientApp;
use lbe_app_kit::endpoint::client::ClientOptions;
use lbe_app_kit::endpoint::Conn;
use quiche::h3;
use quiche::h3::NameValue;
use quiche_lbe::Error;
use serde::Deserialize;
use serde::Serialize;

use crate::client::code;
use crate::client::H3Client;
use crate::client::Next;
use crate::client::ResponseHandler;
use crate::digest;
use crate::digest::Sha256;
use crate::fields;
use crate::fields::ContentRange;

/// Download settings.
#[derive(Clone, Debug)]
pub struct FetchArgs {
    pub url: String,
    pub output: PathBuf,
    /// Ask for background delivery (`priority: u=7`).
    pub background: bool,
    /// Continue `FILE.part` if it belongs to the same URL and version.
    pub resume: bool,
    pub qlog_dir: Option<PathBuf>,
    /// Verify the server's certificate.
    pub verify: bool,
    /// Trust the certificates in this PEM file too (implies `verify`).
    pub ca: Option<PathBuf>,
    /// Give up if the handshake has not completed by then.
    pub timeout: Duration,
    /// Show a progress bar on stderr.
    pub progress: bool,
}

/// The outcome (the `--json` object).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub url: String,
    pub file: String,
    /// The status of the response the file came from (200 or 206).
    pub status: u16,
    /// The file's size.
    pub size: u64,
    /// Bytes of an earlier run kept from the part file.
    pub resumed_from: u64,
    /// Body bytes received in this run.
    pub bytes_transferred: u64,
    /// UDP payload bytes received on the connection (all overheads in).
    pub udp_bytes_received: u64,
    /// From sending the request to the file being in place.
    pub duration_s: f64,
    /// `bytes_transferred` over `duration_s`, bits per second.
    pub goodput_bps: f64,
    pub background: bool,
    pub etag: Option<String>,
    /// SHA-256 of the file, hex.
    pub sha256: String,
    /// Whether the server offered a digest (it then matched).
    pub digest_verified: bool,
    /// The client's qlog, if one was written.
    pub qlog: Option<String>,
}

impl Summary {
    /// One line for people.
    pub fn human(&self) -> String {
        let resumed = if self.resumed_from > 0 {
            format!(
                " (resumed after {})",
                lbe_units::fmt_bytes(self.resumed_from)
            )
        } else {
            String::new()
        };
        format!(
            "{}: {}{resumed}, {} received in {:.2} s = {}; sha-256 {}{}",
            self.file,
            lbe_units::fmt_bytes(self.size),
            lbe_units::fmt_bytes(self.bytes_transferred),
            self.duration_s,
            lbe_units::fmt_rate(self.goodput_bps),
            &self.sha256[..16],
            if self.digest_verified {
                " verified against the server's digest"
            } else {
                " (the server offered no digest; length checked)"
            }
        )
    }
}

/// Where a URL points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// `:authority`: the host as written (IPv6 in brackets), and the port
    /// if the URL has one.
    pub authority: String,
    /// The host to resolve and to name in TLS (no brackets).
    pub host: String,
    pub port: u16,
    /// `:path`: path and query, as written.
    pub path: String,
}

/// Reads an `https://host[:port]/path` URL.
pub fn parse_url(url: &str) -> Result<Target, Error> {
    let bad = |why: &str| Error::new(format!("bad URL '{url}': {why}"));
    let uri: http::Uri = url.parse().map_err(|e| bad(&format!("{e}")))?;
    match uri.scheme_str() {
        Some("https") => {}
        Some(other) => return Err(bad(&format!("scheme '{other}' (only https)"))),
        None => return Err(bad("expected https://host[:port]/path")),
    }
    let authority = uri.authority().ok_or_else(|| bad("no host"))?;
    if authority.as_str().contains('@') {
        return Err(bad("user information is not supported"));
    }
    let host = authority.host();
    if host.is_empty() {
        return Err(bad("no host"));
    }
    let path = uri
        .path_and_query()
        .map(|p| p.as_str())
        .filter(|p| !p.is_empty())
        .unwrap_or("/");
    let path = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };
    // After the host (whose IPv6 form has colons of its own).
    let port = match authority.as_str()[host.len()..].strip_prefix(':') {
        None => 443,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| bad(&format!("bad port '{p}'")))?,
    };
    Ok(Target {
        authority: authority.as_str().to_string(),
        host: host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string(),
        port,
        path,
    })
}

/// The host's address: its first IPv4 one if it has any (servers here
/// listen on 127.0.0.1 by default, and `localhost` often resolves to ::1
/// first), else its first.
fn resolve(target: &Target) -> Result<SocketAddr, Error> {
    let addrs: Vec<SocketAddr> = (target.host.as_str(), target.port)
        .to_socket_addrs()
        .map_err(|e| Error::new(format!("cannot resolve {}: {e}", target.host)))?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| Error::new(format!("{} has no address", target.host)))
}

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
    fn load(path: &Path) -> Option<Self> {
        serde_json::from_slice(&fs::read(path).ok()?).ok()
    }

    /// Replaces the file atomically.
    fn store(&self, path: &Path) -> io::Result<()> {
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
struct Resume {
    len: u64,
    meta: PartMeta,
}

/// The response being written to the part file.
struct Download {
    url: String,
    output: PathBuf,
    part: PathBuf,
    meta_path: PathBuf,
    file: File,
    /// The full request, for starting over.
    request: Vec<h3::Header>,
    resume: Option<Resume>,
    retried: bool,
    /// Bytes of the representation in the part file; the next byte's
    /// offset.
    offset: u64,
    /// SHA-256 of the part file's first `offset` bytes.
    hasher: Sha256,
    size: Option<u64>,
    etag: Option<String>,
    digest: Option<[u8; 32]>,
    status: u16,
    resumed_from: u64,
    received: u64,
    /// Whether this run wrote the part file (and may remove it).
    touched: bool,
    progress: Option<ProgressBar>,
    show_progress: bool,
    done: Option<[u8; 32]>,
}

fn write_err(path: &Path, e: io::Error) -> Error {
    Error::new(format!("cannot write {}: {e}", path.display()))
}

impl Download {
    fn bar(&mut self) {
        if self.show_progress {
            let bar = lbe_app_kit::cli::progress_bar(self.size);
            bar.set_position(self.offset);
            self.progress = Some(bar);
        }
    }

    /// Starts over with the whole representation.
    fn start_over(&mut self, why: &str) -> Result<Next, Error> {
        if self.retried {
            return Err(Error::new(format!(
                "cannot resume: {why}, and starting over did not help"
            )));
        }
        log::info!("cannot resume ({why}); starting over");
        self.retried = true;
        self.resume = None;
        let request: Vec<h3::Header> = self
            .request
            .iter()
            .filter(|h| h.name() != b"range" && h.name() != b"if-range")
            .cloned()
            .collect();
        Ok(Next::Retry(request))
    }

    fn on_full(&mut self, headers: &[h3::Header]) -> Result<Next, Error> {
        self.file
            .set_len(0)
            .and_then(|_| self.file.seek(SeekFrom::Start(0)).map(|_| ()))
            .map_err(|e| write_err(&self.part, e))?;
        self.touched = true;
        self.offset = 0;
        self.resumed_from = 0;
        self.hasher = Sha256::new();
        self.size =
            match fields::field(headers, "content-length") {
                Some(v) => Some(v.trim().parse().map_err(|_| {
                    Error::new(format!("the server sent a bad content-length '{v}'"))
                })?),
                None => None,
            };
        self.etag = fields::field(headers, "etag")
            .filter(|t| fields::is_strong_etag(t))
            .map(str::to_string);
        let repr_digest = fields::field(headers, "repr-digest");
        self.digest = repr_digest.and_then(fields::parse_repr_digest);
        match &self.etag {
            Some(etag) => PartMeta {
                url: self.url.clone(),
                etag: etag.clone(),
                size: self.size,
                repr_digest: repr_digest.map(str::to_string),
            }
            .store(&self.meta_path)
            .map_err(|e| write_err(&self.meta_path, e))?,
            // No validator: what is downloaded cannot be resumed.
            None => match fs::remove_file(&self.meta_path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(write_err(&self.meta_path, e)),
            },
        }
        self.bar();
        Ok(Next::Body)
    }

    /// The server's digest for the version being resumed: from this
    /// response, or recorded with the part file.
    fn resumed_digest(headers: &[h3::Header], meta: &PartMeta) -> Option<[u8; 32]> {
        fields::field(headers, "repr-digest")
            .or(meta.repr_digest.as_deref())
            .and_then(fields::parse_repr_digest)
    }

    fn on_partial(&mut self, headers: &[h3::Header]) -> Result<Next, Error> {
        let Some(resume) = &self.resume else {
            return Err(Error::new(
                "the server answered 206 to a request without a range",
            ));
        };
        let same_version = fields::field(headers, "etag")
            .is_some_and(|t| fields::etags_match_strongly(t, &resume.meta.etag));
        let range = fields::field(headers, "content-range").and_then(fields::parse_content_range);
        let Some(ContentRange::Part { start, end, size }) = range else {
            return self.start_over("the server's content-range is missing or malformed");
        };
        if !same_version {
            return self.start_over("the server's entity tag changed");
        }
        if start != resume.len || end + 1 != size || resume.meta.size.is_some_and(|s| s != size) {
            return self.start_over("the server sent another range than asked");
        }
        self.digest = Self::resumed_digest(headers, &resume.meta);
        self.etag = Some(resume.meta.etag.clone());
        self.size = Some(size);
        self.resumed_from = resume.len;
        self.touched = true;
        self.bar();
        Ok(Next::Body)
    }

    /// 416 to a resumed request: either the part file already holds the
    /// whole representation, or it is of no use.
    fn on_unsatisfiable(&mut self, headers: &[h3::Header]) -> Result<Next, Error> {
        let Some(resume) = &self.resume else {
            return Err(Error::new(
                "the server answered 416 to a request without a range",
            ));
        };
        let same_version = fields::field(headers, "etag")
            .is_some_and(|t| fields::etags_match_strongly(t, &resume.meta.etag));
        let range = fields::field(headers, "content-range").and_then(fields::parse_content_range);
        if same_version && range == Some(ContentRange::Unsatisfied { size: resume.len }) {
            self.digest = Self::resumed_digest(headers, &resume.meta);
            self.etag = Some(resume.meta.etag.clone());
            self.size = Some(resume.len);
            self.resumed_from = resume.len;
            self.status = 206;
            self.complete()?;
            return Ok(Next::Stop);
        }
        self.start_over("the part file does not fit the server's file")
    }

    /// Checks the part file and puts it in place.
    fn complete(&mut self) -> Result<(), Error> {
        if let Some(size) = self.size {
            if self.offset != size {
                return Err(Error::new(format!(
                    "the response ended after {} of {} bytes",
                    self.offset, size
                )));
            }
        }
        self.file.sync_all().map_err(|e| write_err(&self.part, e))?;
        let on_disk = self
            .file
            .metadata()
            .map_err(|e| write_err(&self.part, e))?
            .len();
        if on_disk != self.offset {
            return Err(Error::new(format!(
                "{} holds {on_disk} bytes, expected {}",
                self.part.display(),
                self.offset
            )));
        }
        let sha256 = self.hasher.clone().finish();
        if let Some(expected) = self.digest {
            if expected != sha256 {
                // Corrupt beyond resuming: throw it away.
                let _ = fs::remove_file(&self.part);
                let _ = fs::remove_file(&self.meta_path);
                return Err(Error::new(format!(
                    "the download does not match the server's SHA-256 digest (repr-digest); {} removed",
                    self.part.display()
                )));
            }
        }
        fs::rename(&self.part, &self.output).map_err(|e| {
            Error::new(format!(
                "cannot rename {} to {}: {e}",
                self.part.display(),
                self.output.display()
            ))
        })?;
        let _ = fs::remove_file(&self.meta_path);
        if let Some(dir) = self.output.parent() {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        if let Some(bar) = &self.progress {
            bar.finish_and_clear();
        }
        self.done = Some(sha256);
        Ok(())
    }
}

impl ResponseHandler for Download {
    fn headers(&mut self, headers: &[h3::Header]) -> Result<Next, Error> {
        let status = fields::field(headers, ":status").unwrap_or("");
        self.status = status
            .parse()
            .map_err(|_| Error::new(format!("the server sent a bad :status '{status}'")))?;
        match self.status {
            200 => self.on_full(headers),
            206 => self.on_partial(headers),
            416 => self.on_unsatisfiable(headers),
            s => {
                let reason = http::StatusCode::from_u16(s)
                    .ok()
                    .and_then(|c| c.canonical_reason())
                    .unwrap_or("");
                let detail = match fields::field(headers, "location") {
                    Some(to) if (300..400).contains(&s) => {
                        format!(" (redirect to {to}: not followed)")
                    }
                    _ => String::new(),
                };
                Err(Error::new(format!("{s} {reason}: {}{detail}", self.url)))
            }
        }
    }

    fn data(&mut self, data: &[u8]) -> Result<(), Error> {
        if let Some(size) = self.size {
            if self.offset + data.len() as u64 > size {
                return Err(Error::new(format!(
                    "the server sent more than the {size} bytes it announced"
                )));
            }
        }
        self.file
            .write_all(data)
            .map_err(|e| write_err(&self.part, e))?;
        self.hasher.update(data);
        self.offset += data.len() as u64;
        self.received += data.len() as u64;
        if let Some(bar) = &self.progress {
            bar.set_position(self.offset);
        }
        Ok(())
    }

    fn finished(&mut self) -> Result<(), Error> {
        self.complete()
    }
}

struct FetchApp {
    h3: H3Client,
    sent: Option<Instant>,
    download: Download,
}

impl ClientApp for FetchApp {
    fn progress(&mut self, conn: &mut Conn) -> Result<(), Error> {
        if self.download.done.is_some() || !self.h3.ready(&mut conn.quic)? {
            return Ok(());
        }
        if self.sent.is_none() {
            self.h3.send(&mut conn.quic, &self.download.request)?;
            self.sent = Some(Instant::now());
        }
        self.h3.poll(&mut conn.quic, &mut self.download)?;
        if self.download.done.is_some() {
            conn.quic.close(true, code::NO_ERROR, b"").ok();
        }
        Ok(())
    }
}

/// The request for `target`, resuming after `resume` bytes if given.
fn build_request(target: &Target, background: bool, resume: Option<&Resume>) -> Vec<h3::Header> {
    let mut request = crate::client::request_headers("GET", &target.authority, &target.path);
    if background {
        request.push(h3::Header::new(b"priority", b"u=7"));
    }
    if let Some(r) = resume {
        request.push(h3::Header::new(
            b"range",
            format!("bytes={}-", r.len).as_bytes(),
        ));
        request.push(h3::Header::new(b"if-range", r.meta.etag.as_bytes()));
    }
    request
}

/// The part file of an earlier run, if it can be continued.
fn find_resumable(args: &FetchArgs, part: &Path, meta: &Path) -> Option<Resume> {
    let len = fs::metadata(part).ok()?.len();
    let meta = PartMeta::load(meta)?;
    (len > 0 && meta.url == args.url && fields::is_strong_etag(&meta.etag))
        .then_some(Resume { len, meta })
}

/// Downloads `args.url` to `args.output`.
pub fn run(args: &FetchArgs, stop: &AtomicBool) -> Result<Summary, Error> {
    let target = parse_url(&args.url)?;
    if args.output.is_dir() {
        return Err(Error::new(format!(
            "{} is a directory",
            args.output.display()
        )));
    }
    let part = part_path(&args.output);
    let meta = meta_path(&args.output);
    let resume = if args.resume {
        let found = find_resumable(args, &part, &meta);
        if found.is_none() && args.progress {
            eprintln!(
                "h3-fetch: nothing to resume in {}; downloading from the start",
                part.display()
            );
        }
        found
    } else {
        None
    };

    // Opening the part file first finds an unwritable path before any
    // network work.
    let existed = part.exists();
    let mut file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&part)
        .map_err(|e| write_err(&part, e))?;
    let mut hasher = Sha256::new();
    if let Some(r) = &resume {
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
            .map_err(|e| write_err(&part, e))?;
    }

    let addr = match resolve(&target) {
        Ok(a) => a,
        Err(e) => {
            if !existed {
                let _ = fs::remove_file(&part);
            }
            return Err(e);
        }
    };
    let mut app = FetchApp {
        h3: H3Client::new()?,
        sent: None,
        download: Download {
            url: args.url.clone(),
            output: args.output.clone(),
            part: part.clone(),
            meta_path: meta.clone(),
            file,
            request: build_request(&target, args.background, resume.as_ref()),
            offset: resume.as_ref().map_or(0, |r| r.len),
            resume,
            retried: false,
            hasher,
            size: None,
            etag: None,
            digest: None,
            status: 0,
            resumed_from: 0,
            received: 0,
            touched: !existed,
            progress: None,
            show_progress: args.progress,
            done: None,
        },
    };
    let options = ClientOptions {
        connect: addr,
        bind: None,
        server_name: target.host.clone(),
        qlog_dir: args.qlog_dir.clone(),
        label: if args.background {
            "h3-fetch-bg".into()
        } else {
            "h3-fetch".into()
        },
        qlog_cc: "cubic".into(),
        handshake_timeout: args.timeout,
    };
    let result = crate::client::config(args.verify || args.ca.is_some()).and_then(|mut config| {
        if let Some(ca) = &args.ca {
            let path = ca
                .to_str()
                .ok_or_else(|| Error::new(format!("--ca {}: not a UTF-8 path", ca.display())))?;
            config.load_verify_locations_from_file(path).map_err(|e| {
                Error::new(format!(
                    "cannot load certificates from {}: {e}",
                    ca.display()
                ))
            })?;
        }
        client::run(&options, &mut config, &mut app, stop)
    });
    let d = &mut app.download;
    if let Some(bar) = d.progress.take() {
        bar.finish_and_clear();
    }
    let Some(sha256) = d.done else {
        let error = match result {
            Err(e) => e,
            Ok(_) => Error::new(format!(
                "the connection closed before the download finished ({} of {} bytes)",
                d.offset,
                d.size.map_or("?".to_string(), |s| s.to_string())
            )),
        };
        return Err(with_part_note(error, d));
    };
    let finished = Instant::now();
    let conn = result.ok();
    let duration_s = app
        .sent
        .map_or(0.0, |s| finished.duration_since(s).as_secs_f64())
        .max(1e-9);
    Ok(Summary {
        url: args.url.clone(),
        file: args.output.display().to_string(),
        status: d.status,
        size: d.offset,
        resumed_from: d.resumed_from,
        bytes_transferred: d.received,
        udp_bytes_received: conn.as_ref().map_or(0, |c| c.quic.stats().recv_bytes),
        duration_s,
        goodput_bps: d.received as f64 * 8.0 / duration_s,
        background: args.background,
        etag: d.etag.clone(),
        sha256: digest::hex(&sha256),
        digest_verified: d.digest.is_some(),
        qlog: conn
            .as_ref()
            .and_then(|c| c.qlog_path())
            .map(|p| p.display().to_string()),
    })
}

/// Removes a part file that cannot be resumed (empty, or without a
/// validator) and says what was kept.
fn with_part_note(error: Error, d: &Download) -> Error {
    let len = fs::metadata(&d.part).map(|m| m.len()).unwrap_or(0);
    let resumable = d.meta_path.exists() && len > 0;
    if !resumable {
        if d.touched {
            let _ = fs::remove_file(&d.part);
            let _ = fs::remove_file(&d.meta_path);
        }
        return error;
    }
    Error::new(format!(
        "{error}; {} kept in {} (continue with --resume)",
        lbe_units::fmt_bytes(len),
        d.part.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let t = parse_url("https://127.0.0.1:4433/a/b%20c?x=1").unwrap();
        assert_eq!(
            t,
            Target {
                authority: "127.0.0.1:4433".into(),
                host: "127.0.0.1".into(),
                port: 4433,
                path: "/a/b%20c?x=1".into(),
            }
        );
        let t = parse_url("https://[::1]:8443").unwrap();
        assert_eq!(t.host, "::1");
        assert_eq!(t.authority, "[::1]:8443");
        assert_eq!(t.path, "/");
        let t = parse_url("https://localhost/f").unwrap();
        assert_eq!(t.port, 443);
        assert_eq!(t.authority, "localhost");
        for bad in [
            "http://127.0.0.1/x",
            "127.0.0.1:4433/x",
            "/x",
            "https://",
            "https://u@h/x",
            "https://h:99999/x",
            "https://h:0/x",
            "https://h:/x",
            "not a url",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
        assert!(parse_url("ftp://h/x")
            .unwrap_err()
            .to_string()
            .contains("only https"));
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
    fn requests_carry_priority_and_validator() {
        let t = parse_url("https://127.0.0.1:1/f").unwrap();
        let find = |req: &[h3::Header], name: &str| {
            req.iter()
                .find(|h| h.name() == name.as_bytes())
                .map(|h| String::from_utf8_lossy(h.value()).into_owned())
        };
        let plain = build_request(&t, false, None);
        assert_eq!(find(&plain, ":authority").as_deref(), Some("127.0.0.1:1"));
        assert_eq!(find(&plain, "priority"), None);
        assert_eq!(find(&plain, "range"), None);
        let r = Resume {
            len: 123,
            meta: PartMeta {
                url: "u".into(),
                etag: "\"e\"".into(),
                size: None,
                repr_digest: None,
            },
        };
        let bg = build_request(&t, true, Some(&r));
        assert_eq!(find(&bg, "priority").as_deref(), Some("u=7"));
        assert_eq!(find(&bg, "range").as_deref(), Some("bytes=123-"));
        assert_eq!(find(&bg, "if-range").as_deref(), Some("\"e\""));
    }
}
