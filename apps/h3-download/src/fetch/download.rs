//! The response being written to the part file: status handling (200,
//! 206, 416, errors), the body, and the checks before the file is put in
//! place; and the request that asks for it.

use std::fs;
use std::fs::File;
use std::io;
use std::io::Seek;
use std::io::SeekFrom;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

use indicatif::ProgressBar;
use quiche::h3;
use quiche::h3::NameValue;
use quiche_lbe::Error;

use super::part::write_err;
use super::part::OpenPart;
use super::part::PartMeta;
use super::part::Resume;
use super::url::Target;
use super::FetchArgs;
use crate::client::Next;
use crate::client::ResponseHandler;
use crate::digest::Sha256;
use crate::fields;
use crate::fields::ContentRange;

/// The response being written to the part file.
pub(super) struct Download {
    pub(super) url: String,
    pub(super) output: PathBuf,
    pub(super) part: PathBuf,
    pub(super) meta_path: PathBuf,
    pub(super) file: File,
    /// The full request, for starting over.
    pub(super) request: Vec<h3::Header>,
    pub(super) resume: Option<Resume>,
    pub(super) retried: bool,
    /// Bytes of the representation in the part file; the next byte's
    /// offset.
    pub(super) offset: u64,
    /// SHA-256 of the part file's first `offset` bytes.
    pub(super) hasher: Sha256,
    pub(super) size: Option<u64>,
    pub(super) etag: Option<String>,
    pub(super) digest: Option<[u8; 32]>,
    pub(super) status: u16,
    pub(super) resumed_from: u64,
    pub(super) received: u64,
    /// Whether this run wrote the part file (and may remove it).
    pub(super) touched: bool,
    pub(super) progress: Option<ProgressBar>,
    pub(super) show_progress: bool,
    pub(super) done: Option<[u8; 32]>,
    /// The sender's time per aggressiveness level (a deadline-aware
    /// response's `lbe-time-in-levels` trailer).
    pub(super) time_in_levels_s: Option<Vec<f64>>,
}

impl Download {
    /// The download `args` asks for, into the part file `open` (`part`,
    /// its metadata at `meta_path`), continuing `resume` if given.
    pub(super) fn new(
        args: &FetchArgs,
        part: PathBuf,
        meta_path: PathBuf,
        open: OpenPart,
        request: Vec<h3::Header>,
        resume: Option<Resume>,
    ) -> Self {
        Self {
            url: args.url.clone(),
            output: args.output.clone(),
            part,
            meta_path,
            file: open.file,
            request,
            offset: resume.as_ref().map_or(0, |r| r.len),
            resume,
            retried: false,
            hasher: open.hasher,
            size: None,
            etag: None,
            digest: None,
            status: 0,
            resumed_from: 0,
            received: 0,
            touched: !open.existed,
            progress: None,
            show_progress: args.progress,
            done: None,
            time_in_levels_s: None,
        }
    }

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

    fn trailers(&mut self, trailers: &[h3::Header]) {
        let Some(value) = fields::field(trailers, fields::TIME_IN_LEVELS_FIELD) else {
            return;
        };
        let levels: Result<Vec<f64>, _> = value.split(',').map(|v| v.trim().parse()).collect();
        match levels {
            Ok(levels) => self.time_in_levels_s = Some(levels),
            Err(_) => log::warn!(
                "ignoring a malformed {} trailer '{value}'",
                fields::TIME_IN_LEVELS_FIELD
            ),
        }
    }
}

/// The request for `target`, resuming after `resume` bytes if given.
pub(super) fn build_request(
    target: &Target,
    background: bool,
    deadline: Option<std::time::Duration>,
    resume: Option<&Resume>,
) -> Vec<h3::Header> {
    let mut request = crate::client::request_headers("GET", &target.authority, &target.path);
    request.extend(lbe_h3::client::background_fields(background, deadline));
    if let Some(r) = resume {
        request.push(h3::Header::new(
            b"range",
            format!("bytes={}-", r.len).as_bytes(),
        ));
        request.push(h3::Header::new(b"if-range", r.meta.etag.as_bytes()));
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fetch::parse_url;

    #[test]
    fn requests_carry_priority_and_validator() {
        let t = parse_url("https://127.0.0.1:1/f").unwrap();
        let find = |req: &[h3::Header], name: &str| {
            req.iter()
                .find(|h| h.name() == name.as_bytes())
                .map(|h| String::from_utf8_lossy(h.value()).into_owned())
        };
        let plain = build_request(&t, false, None, None);
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
        let bg = build_request(&t, true, None, Some(&r));
        assert_eq!(find(&bg, "priority").as_deref(), Some("u=7"));
        assert_eq!(find(&bg, "lbe-deadline"), None);
        let dl = build_request(&t, true, Some(std::time::Duration::from_secs(600)), None);
        assert_eq!(find(&dl, "lbe-deadline").as_deref(), Some("600000"));
        assert_eq!(find(&bg, "range").as_deref(), Some("bytes=123-"));
        assert_eq!(find(&bg, "if-range").as_deref(), Some("\"e\""));
    }
}
