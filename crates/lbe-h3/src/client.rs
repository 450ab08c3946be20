//! One HTTP/3 request at a time on a client connection, and the request
//! fields `h3-fetch` sends.

use std::time::Duration;

use quiche::h3;
use quiche::h3::NameValue;
use quiche_lbe::Error;

use crate::code;
use crate::fields;

/// What the response's owner wants next, after its header section.
pub enum Next {
    /// Read the body.
    Body,
    /// Abandon this response and send this request instead.
    Retry(Vec<h3::Header>),
    /// Stop reading; the owner is done.
    Stop,
}

/// Receives one response.
pub trait ResponseHandler {
    /// The final header section (`:status` and fields).
    fn headers(&mut self, headers: &[h3::Header]) -> Result<Next, Error>;
    /// A piece of the body, in order.
    fn data(&mut self, data: &[u8]) -> Result<(), Error>;
    /// The response ended cleanly.
    fn finished(&mut self) -> Result<(), Error>;
    /// The trailer section, if the response has one (after the body).
    fn trailers(&mut self, _trailers: &[h3::Header]) {}
}

/// The HTTP/3 layer of a client connection with at most one request in
/// flight.
pub struct H3Client {
    config: h3::Config,
    h3: Option<h3::Connection>,
    stream: Option<u64>,
    reading_body: bool,
    buf: Vec<u8>,
}

impl H3Client {
    pub fn new() -> Result<Self, Error> {
        Ok(H3Client {
            config: h3::Config::new()
                .map_err(|e| Error::new(format!("cannot configure HTTP/3: {e}")))?,
            h3: None,
            stream: None,
            reading_body: false,
            buf: vec![0u8; 64 * 1024],
        })
    }

    /// Sets up HTTP/3 once the handshake is done; false until then.
    pub fn ready(&mut self, conn: &mut quiche::Connection) -> Result<bool, Error> {
        if self.h3.is_none() && conn.is_established() {
            let h3 = h3::Connection::with_transport(conn, &self.config)
                .map_err(|e| Error::new(format!("cannot start HTTP/3: {e}")))?;
            self.h3 = Some(h3);
        }
        Ok(self.h3.is_some())
    }

    /// Sends a request without a body; it becomes the current one.
    pub fn send(
        &mut self,
        conn: &mut quiche::Connection,
        headers: &[h3::Header],
    ) -> Result<u64, Error> {
        let h3 = self
            .h3
            .as_mut()
            .ok_or_else(|| Error::new("HTTP/3 is not set up yet"))?;
        let stream = h3
            .send_request(conn, headers, true)
            .map_err(|e| Error::new(format!("cannot send the request: {e}")))?;
        self.stream = Some(stream);
        self.reading_body = false;
        Ok(stream)
    }

    /// Abandons the current request: the server is asked to stop sending.
    pub fn cancel(&mut self, conn: &mut quiche::Connection) {
        if let Some(stream) = self.stream.take() {
            conn.stream_shutdown(stream, quiche::Shutdown::Read, code::REQUEST_CANCELLED)
                .ok();
        }
    }

    /// Handles whatever arrived for the current request.
    pub fn poll(
        &mut self,
        conn: &mut quiche::Connection,
        handler: &mut dyn ResponseHandler,
    ) -> Result<(), Error> {
        loop {
            let Some(h3) = self.h3.as_mut() else {
                return Ok(());
            };
            let (stream, event) = match h3.poll(conn) {
                Ok(v) => v,
                Err(h3::Error::Done) => return Ok(()),
                Err(e) => return Err(Error::new(format!("HTTP/3 error from the server: {e}"))),
            };
            let current = self.stream == Some(stream);
            match event {
                h3::Event::Headers { list, .. } if current && !self.reading_body => {
                    let status = list.iter().find(|h| h.name() == b":status");
                    // Interim (1xx) responses come before the final one.
                    if status.is_some_and(|s| s.value().first() == Some(&b'1')) {
                        continue;
                    }
                    match handler.headers(&list)? {
                        Next::Body => self.reading_body = true,
                        Next::Retry(request) => {
                            self.cancel(conn);
                            self.send(conn, &request)?;
                        }
                        Next::Stop => {
                            self.cancel(conn);
                            return Ok(());
                        }
                    }
                }
                h3::Event::Headers { list, .. } if current => handler.trailers(&list),
                // Anything on an abandoned stream.
                h3::Event::Headers { .. } => {}
                h3::Event::Data => loop {
                    match h3.recv_body(conn, stream, &mut self.buf) {
                        Ok(n) if current && self.reading_body => handler.data(&self.buf[..n])?,
                        Ok(_) => {}
                        Err(h3::Error::Done) => break,
                        Err(e) => return Err(Error::new(format!("cannot read the response: {e}"))),
                    }
                },
                h3::Event::Finished if current => {
                    self.stream = None;
                    if !self.reading_body {
                        return Err(Error::new("the response ended before its header"));
                    }
                    handler.finished()?;
                }
                h3::Event::Reset(code) if current => {
                    self.stream = None;
                    return Err(Error::new(format!(
                        "the server abandoned the response (HTTP/3 error {code:#x})"
                    )));
                }
                h3::Event::GoAway if self.stream.is_some_and(|s| s >= stream) => {
                    return Err(Error::new("the server is going away"));
                }
                _ => {}
            }
        }
    }
}

/// The request fields every request carries.
pub fn request_headers(method: &str, authority: &str, path: &str) -> Vec<h3::Header> {
    vec![
        h3::Header::new(b":method", method.as_bytes()),
        h3::Header::new(b":scheme", b"https"),
        h3::Header::new(b":authority", authority.as_bytes()),
        h3::Header::new(b":path", path.as_bytes()),
        h3::Header::new(
            b"user-agent",
            concat!("h3-fetch/", env!("CARGO_PKG_VERSION")).as_bytes(),
        ),
    ]
}

/// The fields that ask for background delivery (`priority: u=7`, RFC
/// 9218's lowest urgency) and, with `deadline`, for deadline-aware
/// delivery (`lbe-deadline: <ms>`, at least 1 ms); none for a normal
/// request.
pub fn background_fields(background: bool, deadline: Option<Duration>) -> Vec<h3::Header> {
    let mut list = Vec::new();
    if background {
        list.push(h3::Header::new(b"priority", b"u=7"));
    }
    if let Some(d) = deadline {
        list.push(h3::Header::new(
            fields::DEADLINE_FIELD.as_bytes(),
            d.as_millis().max(1).to_string().as_bytes(),
        ));
    }
    list
}
