//! A response being written: its header section, its body (bytes in
//! memory or a reader, such as a file, of a known length) and, for a
//! deadline-aware response, a trailer section; pumped into quiche as
//! stream capacity allows, so a slow or blocked stream never holds up the
//! others.

use std::io::Read;

use quiche::h3;

use crate::code;
use crate::fields;

/// Bytes read from a body's reader per step.
const CHUNK: usize = 64 * 1024;

/// A header or trailer field.
pub fn header(name: &str, value: impl AsRef<[u8]>) -> h3::Header {
    h3::Header::new(name.as_bytes(), value.as_ref())
}

/// A response's body.
pub enum Body {
    /// None (a HEAD response, an empty one).
    None,
    /// Bytes in memory.
    Bytes { data: Vec<u8>, pos: usize },
    /// `unread` more bytes from `reader`, read 64 KiB at a time.
    Reader {
        reader: Box<dyn Read + Send>,
        /// Bytes still to read.
        unread: u64,
        buf: Vec<u8>,
        pos: usize,
    },
}

impl Body {
    /// A body of `data`.
    pub fn bytes(data: Vec<u8>) -> Body {
        Body::Bytes { data, pos: 0 }
    }

    /// A body of the next `len` bytes of `reader`. If the reader ends
    /// early (a file shrunk under the server) the promised length cannot
    /// be kept, and the response is abandoned.
    pub fn reader(reader: impl Read + Send + 'static, len: u64) -> Body {
        Body::Reader {
            reader: Box::new(reader),
            unread: len,
            buf: Vec::new(),
            pos: 0,
        }
    }
}

/// Where a response stands after [`Outgoing::pump`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pumped {
    /// Everything, fin included, is with quiche.
    Done,
    /// Waiting for stream capacity.
    Blocked,
    /// The stream is gone (the client stopped or reset it, or the body
    /// could not be read).
    Gone,
}

/// A response being written on one request stream.
pub struct Outgoing {
    stream: u64,
    headers: Vec<h3::Header>,
    priority: h3::Priority,
    headers_sent: bool,
    body: Body,
    /// A deadline-aware response: the progress whose time per level ends
    /// the body as a trailer ([`fields::TIME_IN_LEVELS_FIELD`]).
    levels: Option<quiche_lbe::lbe_cc::deadline::Progress>,
    /// The body is all written; only the trailer is left.
    body_done: bool,
}

impl Outgoing {
    /// The response on `stream`: `headers` (`:status` first), then `body`,
    /// sent with `priority`.
    pub fn new(stream: u64, headers: Vec<h3::Header>, priority: h3::Priority, body: Body) -> Self {
        Outgoing {
            stream,
            headers,
            priority,
            headers_sent: false,
            body,
            levels: None,
            body_done: false,
        }
    }

    /// Ends the body with the `lbe-time-in-levels` trailer of `progress`,
    /// as it reads when the last body byte was written.
    pub fn with_levels(mut self, progress: quiche_lbe::lbe_cc::deadline::Progress) -> Self {
        self.levels = Some(progress);
        self
    }

    /// The request stream it answers.
    pub fn stream(&self) -> u64 {
        self.stream
    }

    /// Writes as much as quiche takes.
    pub fn pump(&mut self, h3: &mut h3::Connection, conn: &mut quiche::Connection) -> Pumped {
        if !self.headers_sent {
            let fin = matches!(self.body, Body::None);
            match h3.send_response_with_priority(
                conn,
                self.stream,
                &self.headers,
                &self.priority,
                fin,
            ) {
                Ok(()) => self.headers_sent = true,
                Err(h3::Error::StreamBlocked | h3::Error::Done) => return Pumped::Blocked,
                Err(e) => {
                    log::debug!("stream {}: cannot send headers: {e}", self.stream);
                    return Pumped::Gone;
                }
            }
            if fin {
                return Pumped::Done;
            }
        }
        loop {
            if self.body_done {
                return self.send_levels(h3, conn);
            }
            let (chunk, body_end) = match &mut self.body {
                Body::None => return Pumped::Done,
                Body::Bytes { data, pos } => (&data[*pos..], true),
                Body::Reader {
                    reader,
                    unread,
                    buf,
                    pos,
                } => {
                    if *pos == buf.len() && *unread > 0 {
                        buf.resize((*unread).min(CHUNK as u64) as usize, 0);
                        if let Err(e) = reader.read_exact(buf) {
                            log::warn!("stream {}: reading the body failed: {e}", self.stream);
                            conn.stream_shutdown(
                                self.stream,
                                quiche::Shutdown::Write,
                                code::INTERNAL_ERROR,
                            )
                            .ok();
                            return Pumped::Gone;
                        }
                        *unread -= buf.len() as u64;
                        *pos = 0;
                    }
                    (&buf[*pos..], *unread == 0)
                }
            };
            let len = chunk.len();
            let fin = body_end && self.levels.is_none();
            match h3.send_body(conn, self.stream, chunk, fin) {
                Ok(n) => {
                    match &mut self.body {
                        Body::Bytes { pos, .. } | Body::Reader { pos, .. } => *pos += n,
                        Body::None => {}
                    }
                    if n == len && body_end {
                        if fin {
                            return Pumped::Done;
                        }
                        self.body_done = true;
                        continue;
                    }
                    if n < len {
                        return Pumped::Blocked;
                    }
                }
                Err(h3::Error::Done | h3::Error::StreamBlocked) => return Pumped::Blocked,
                Err(e) => {
                    log::debug!("stream {}: cannot send the body: {e}", self.stream);
                    return Pumped::Gone;
                }
            }
        }
    }

    /// The `lbe-time-in-levels` trailer, which ends the stream.
    fn send_levels(&mut self, h3: &mut h3::Connection, conn: &mut quiche::Connection) -> Pumped {
        let levels = self.levels.as_ref().map_or(String::new(), |p| {
            p.time_in_levels()
                .iter()
                .map(|t| format!("{:.3}", t.as_secs_f64()))
                .collect::<Vec<_>>()
                .join(",")
        });
        let trailer = [header(fields::TIME_IN_LEVELS_FIELD, levels)];
        match h3.send_additional_headers(conn, self.stream, &trailer, true, true) {
            Ok(()) => Pumped::Done,
            Err(h3::Error::StreamBlocked | h3::Error::Done) => Pumped::Blocked,
            Err(e) => {
                log::debug!("stream {}: cannot send the trailer: {e}", self.stream);
                Pumped::Gone
            }
        }
    }
}

/// What a request stream brought ([`Serving::next`]).
#[derive(Debug)]
pub enum Incoming {
    /// A request's header section.
    Request { stream: u64, list: Vec<h3::Header> },
    /// The client reset the stream: forget its request.
    Reset(u64),
}

/// Where a server connection's HTTP/3 stands ([`Serving::start`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// The handshake is not far enough yet, or the connection is closed:
    /// nothing to serve.
    NotReady,
    /// HTTP/3 was set up just now.
    Started,
    /// HTTP/3 was set up before.
    Ready,
}

/// The HTTP/3 layer of a server connection: its requests in, its
/// responses out.
pub struct Serving {
    h3: Option<h3::Connection>,
    outgoing: Vec<Outgoing>,
    buf: Vec<u8>,
}

impl Default for Serving {
    fn default() -> Self {
        Self::new()
    }
}

impl Serving {
    pub fn new() -> Self {
        Serving {
            h3: None,
            outgoing: Vec::new(),
            buf: vec![0u8; 16 * 1024],
        }
    }

    /// Sets HTTP/3 up once the connection can carry it, and says whether
    /// there is anything to serve now. When quiche refuses HTTP/3, the
    /// connection is closed with H3_INTERNAL_ERROR and the error returned.
    pub fn start(
        &mut self,
        conn: &mut quiche::Connection,
        config: &h3::Config,
    ) -> Result<Start, String> {
        if conn.is_closed() || !(conn.is_established() || conn.is_in_early_data()) {
            return Ok(Start::NotReady);
        }
        if self.h3.is_some() {
            return Ok(Start::Ready);
        }
        match h3::Connection::with_transport(conn, config) {
            Ok(h3) => {
                self.h3 = Some(h3);
                Ok(Start::Started)
            }
            Err(e) => {
                conn.close(true, code::INTERNAL_ERROR, b"cannot start HTTP/3")
                    .ok();
                Err(format!("cannot start HTTP/3: {e}"))
            }
        }
    }

    /// The next request or reset; `None` when nothing more came (or on an
    /// HTTP/3 error, on which quiche has closed the connection). Request
    /// bodies are read and dropped; the trailer section of a request being
    /// answered, or that `pending` says will be, is skipped. A reset
    /// stream's response is dropped here.
    pub fn next(
        &mut self,
        conn: &mut quiche::Connection,
        pending: impl Fn(u64) -> bool,
    ) -> Option<Incoming> {
        loop {
            let h3 = self.h3.as_mut()?;
            let (stream, event) = match h3.poll(conn) {
                Ok(v) => v,
                Err(h3::Error::Done) => return None,
                Err(e) => {
                    log::debug!("HTTP/3 error: {e}");
                    return None;
                }
            };
            match event {
                h3::Event::Headers { list, .. } => {
                    if self.outgoing.iter().any(|o| o.stream == stream) || pending(stream) {
                        continue; // trailers
                    }
                    return Some(Incoming::Request { stream, list });
                }
                h3::Event::Data => while h3.recv_body(conn, stream, &mut self.buf).is_ok() {},
                h3::Event::Reset(_) => {
                    self.outgoing.retain(|o| o.stream != stream);
                    return Some(Incoming::Reset(stream));
                }
                h3::Event::Finished | h3::Event::PriorityUpdate | h3::Event::GoAway => {}
            }
        }
    }

    /// Queues a response.
    pub fn respond(&mut self, response: Outgoing) {
        self.outgoing.push(response);
    }

    /// Writes what quiche takes of every queued response; those done (or
    /// gone) leave the queue.
    pub fn pump(&mut self, conn: &mut quiche::Connection) {
        let Some(h3) = self.h3.as_mut() else { return };
        self.outgoing
            .retain_mut(|o| matches!(o.pump(h3, conn), Pumped::Blocked));
    }
}
