//! [`request`], which makes one HTTP/3 request and keeps the whole
//! response in memory (for tests and small things), over the request
//! plumbing of `lbe_h3::client` (re-exported here).

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

use lbe_h3::ALPN;

pub use lbe_h3::client::request_headers;
pub use lbe_h3::client::H3Client;
pub use lbe_h3::client::Next;
pub use lbe_h3::client::ResponseHandler;
pub use lbe_h3::code;

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
