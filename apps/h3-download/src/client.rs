//! One HTTP/3 request at a time on a client connection, and
//! [`request`], which makes one and keeps the whole response in memory
//! (for tests and small things).

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use lbe_app_kit::endpoint::client;
use lbe_app_kit::endpoint::client::ClientApp;
use lbe_app_kit::endpoint::client::ClientOptions;
use lbe_app_kit::endpoint::Conn;
use lbe_app_kit::tls;
use quiche::h3;
use quiche::h3::NameValue;
use quiche_lbe::CcSpec;
use quiche_lbe::Error;

use crate::ALPN;

/// HTTP/3 error codes (RFC 9114 §8.1) we send.
pub mod code {
    pub const NO_ERROR: u64 = 0x100;
    pub const INTERNAL_ERROR: u64 = 0x102;
    pub const REQUEST_CANCELLED: u64 = 0x10c;
}

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

/// A client configuration for HTTP/3 to `server_name`, whose certificate
/// is checked as `trust` says.
pub fn config(trust: &tls::ServerTrust, server_name: &str) -> Result<quiche::Config, Error> {
    let cubic: CcSpec = "cubic".parse().expect("cubic is a valid spec");
    tls::client_config(
        &[ALPN],
        &cubic,
        None,
        &tls::Transport::default(),
        trust,
        server_name,
    )
}

/// A response read to the end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// Fields other than `:status`, in order, names lower case.
    pub fields: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The trailer section's fields, if any, in order.
    pub trailers: Vec<(String, String)>,
}

impl Response {
    /// The first field called `name`.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

struct Collect {
    response: Response,
    done: bool,
}

impl ResponseHandler for Collect {
    fn headers(&mut self, headers: &[h3::Header]) -> Result<Next, Error> {
        for h in headers {
            let name = String::from_utf8_lossy(h.name()).into_owned();
            let value = String::from_utf8_lossy(h.value()).into_owned();
            if name == ":status" {
                self.response.status = value
                    .parse()
                    .map_err(|_| Error::new(format!("bad :status '{value}'")))?;
            } else {
                self.response.fields.push((name, value));
            }
        }
        Ok(Next::Body)
    }

    fn data(&mut self, data: &[u8]) -> Result<(), Error> {
        self.response.body.extend_from_slice(data);
        Ok(())
    }

    fn finished(&mut self) -> Result<(), Error> {
        self.done = true;
        Ok(())
    }

    fn trailers(&mut self, trailers: &[h3::Header]) {
        self.response.trailers.extend(trailers.iter().map(|h| {
            (
                String::from_utf8_lossy(h.name()).into_owned(),
                String::from_utf8_lossy(h.value()).into_owned(),
            )
        }));
    }
}

struct OneRequest {
    h3: H3Client,
    request: Vec<h3::Header>,
    sent: bool,
    collect: Collect,
}

impl ClientApp for OneRequest {
    fn progress(&mut self, conn: &mut Conn) -> Result<(), Error> {
        if !self.h3.ready(&mut conn.quic)? {
            return Ok(());
        }
        if !self.sent {
            self.h3.send(&mut conn.quic, &self.request)?;
            self.sent = true;
        }
        self.h3.poll(&mut conn.quic, &mut self.collect)?;
        if self.collect.done {
            conn.quic.close(true, code::NO_ERROR, b"").ok();
        }
        Ok(())
    }
}

/// Makes one request to `server` and reads the whole response. `target`
/// is sent as `:path` exactly as given; `fields` are added after the
/// pseudo-header fields. The server's certificate must name its IP
/// address, and is checked as `trust` says.
pub fn request(
    server: SocketAddr,
    trust: &tls::ServerTrust,
    method: &str,
    target: &str,
    fields: &[(&str, &str)],
) -> Result<Response, Error> {
    let mut request = request_headers(method, &server.to_string(), target);
    request.extend(
        fields
            .iter()
            .map(|(n, v)| h3::Header::new(n.as_bytes(), v.as_bytes())),
    );
    let mut app = OneRequest {
        h3: H3Client::new()?,
        request,
        sent: false,
        collect: Collect {
            response: Response::default(),
            done: false,
        },
    };
    let options = ClientOptions {
        connect: server,
        bind: None,
        server_name: server.ip().to_string(),
        qlog_dir: None,
        label: "h3-request".into(),
        qlog_cc: "cubic".into(),
        handshake_timeout: Duration::from_secs(5),
    };
    let stop = AtomicBool::new(false);
    let mut config = config(trust, &options.server_name)?;
    let result = client::run(&options, &mut config, &mut app, &stop);
    if app.collect.done {
        return Ok(app.collect.response);
    }
    result?;
    Err(Error::new(
        "the connection closed before the response was complete",
    ))
}
