//! A static file server over HTTP/3 with [tokio-quiche], whose connections
//! send with a less-than-best-effort controller chosen by name.
//!
//! A tokio-quiche user adds three lines to choose a quiche-lbe controller:
//!
//! ```text
//! quiche_lbe::register()?;                                   // once, before listening
//! let mut settings = tokio_quiche::settings::QuicSettings::default();
//! settings.cc_algorithm = "ledbatpp:profile=full".to_string(); // any `--cc` spec
//! ```
//!
//! (the first line, the `cc_algorithm` line, and `quiche-lbe` in
//! `Cargo.toml`). tokio-quiche hands `cc_algorithm` to quiche's
//! `Config::set_cc_algorithm_name()` (tokio-quiche 0.20.1,
//! `src/settings/config.rs`), which, with quiche-lbe's patch 0006, consults
//! the names `quiche_lbe::register()` added. A name quiche does not know
//! makes tokio-quiche's `listen()` fail with quiche's `CongestionControl`
//! error; this server checks the name first, to say what was wrong.
//!
//! ```text
//! tokio-h3-server --root DIR [--listen 127.0.0.1:4433] [--cc SPEC]
//!                 [--write-cert PATH] [--qlog-dir DIR]
//! ```
//!
//! It answers `GET` and `HEAD` for files inside `--root` (200 with
//! `content-length`), 403 for a path that would leave the root (a `..`
//! segment, or a symbolic link pointing outside), 404 for anything else
//! that is not a regular file, 405 for other methods. No ranges, no
//! directory listings. The certificate is self-signed, made at start for
//! `localhost`, `127.0.0.1` and `::1`; `--write-cert` writes it as PEM so a
//! client can trust it (`h3-fetch --ca PATH`). It prints
//! `listening on ADDR` once ready, and runs until interrupted.
//!
//! [tokio-quiche]: https://docs.rs/tokio-quiche/0.20.1

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use futures::SinkExt;
use futures::StreamExt;
use tokio::io::AsyncReadExt;
use tokio_quiche::buf_factory::BufFactory;
use tokio_quiche::http3::driver::H3Event;
use tokio_quiche::http3::driver::IncomingH3Headers;
use tokio_quiche::http3::driver::OutboundFrame;
use tokio_quiche::http3::driver::OutboundFrameSender;
use tokio_quiche::http3::driver::ServerH3Event;
use tokio_quiche::http3::settings::Http3Settings;
use tokio_quiche::metrics::DefaultMetrics;
use tokio_quiche::quiche;
use tokio_quiche::quiche::h3::Header;
use tokio_quiche::quiche::h3::NameValue;
use tokio_quiche::settings::CertificateKind;
use tokio_quiche::settings::Hooks;
use tokio_quiche::settings::QuicSettings;
use tokio_quiche::settings::TlsCertificatePaths;
use tokio_quiche::ConnectionParams;
use tokio_quiche::ServerH3Driver;

mod cert;
mod files;

/// Serves the files of a directory over HTTP/3 (tokio-quiche), sending
/// with a controller chosen by name.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// The directory whose files are served; nothing outside it is.
    #[arg(long)]
    root: PathBuf,
    /// The UDP address to listen on (port 0: any free port; the line
    /// `listening on ADDR` says which).
    #[arg(long, default_value = "127.0.0.1:4433")]
    listen: SocketAddr,
    /// The congestion controller, by name: a quiche-lbe spec (`ledbatpp`,
    /// `ledbatpp:profile=full`, `cdg:g=0.5`, `ledbat:target=5ms`) or one of
    /// quiche's (`cubic`, `reno`, `bbr2`).
    #[arg(long, default_value = "ledbatpp:profile=full")]
    cc: String,
    /// Write the self-signed certificate (PEM) here, for clients to trust.
    #[arg(long)]
    write_cert: Option<PathBuf>,
    /// Write one .sqlog per connection here.
    #[arg(long)]
    qlog_dir: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> ExitCode {
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tokio-h3-server: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    let root = std::fs::canonicalize(&args.root)
        .map_err(|e| format!("--root {}: {e}", args.root.display()))?;
    if !root.is_dir() {
        return Err(format!("--root {}: not a directory", args.root.display()));
    }
    if let Some(dir) = &args.qlog_dir {
        std::fs::create_dir_all(dir).map_err(|e| format!("--qlog-dir {}: {e}", dir.display()))?;
    }
    let qlog_dir = match &args.qlog_dir {
        Some(dir) => Some(
            dir.to_str()
                .ok_or_else(|| format!("--qlog-dir {}: not UTF-8", dir.display()))?
                .to_string(),
        ),
        None => None,
    };

    // Line one of three: quiche-lbe's controllers become names quiche knows.
    quiche_lbe::register().map_err(|e| format!("cannot register the controllers: {e}"))?;
    check_cc(&args.cc)?;

    let tls = cert::SelfSigned::new()?;
    let files = tls.write_files()?;
    if let Some(path) = &args.write_cert {
        std::fs::write(path, tls.cert_pem())
            .map_err(|e| format!("--write-cert {}: {e}", path.display()))?;
    }

    // Lines two and three: the controller, by name, in tokio-quiche's settings.
    let mut settings = QuicSettings::default();
    settings.cc_algorithm = args.cc.clone();
    settings.qlog_dir = qlog_dir;

    let socket = tokio::net::UdpSocket::bind(args.listen)
        .await
        .map_err(|e| format!("--listen {}: {e}", args.listen))?;
    let addr = socket.local_addr().map_err(|e| e.to_string())?;
    let params = ConnectionParams::new_server(
        settings,
        TlsCertificatePaths {
            cert: files.cert_path(),
            private_key: files.key_path(),
            kind: CertificateKind::X509,
        },
        Hooks::default(),
    );
    let mut listeners = tokio_quiche::listen([socket], params, DefaultMetrics)
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let mut connections = listeners.remove(0);
    println!("listening on {addr}");
    let _ = std::io::stdout().flush();

    let root = std::sync::Arc::new(root);
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => break,
            next = connections.next() => match next {
                Some(Ok(conn)) => {
                    let (driver, mut controller) = ServerH3Driver::new(Http3Settings::default());
                    conn.start(driver);
                    let root = root.clone();
                    tokio::spawn(async move {
                        while let Some(event) = controller.event_receiver_mut().recv().await {
                            match event {
                                ServerH3Event::Headers { incoming_headers, .. } => {
                                    tokio::spawn(respond(root.clone(), incoming_headers));
                                }
                                ServerH3Event::Core(H3Event::ConnectionShutdown(_))
                                | ServerH3Event::Core(H3Event::ConnectionError(_)) => break,
                                ServerH3Event::Core(_) => {}
                            }
                        }
                    });
                }
                Some(Err(e)) => eprintln!("tokio-h3-server: a connection failed to start: {e}"),
                None => break,
            },
        }
    }
    drop(files);
    Ok(())
}

/// Refuses a controller name quiche would refuse, saying why: tokio-quiche
/// would only fail `listen()` with quiche's `CongestionControl` error.
fn check_cc(spec: &str) -> Result<(), String> {
    let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION).map_err(|e| e.to_string())?;
    if config.set_cc_algorithm_name(spec).is_ok() {
        return Ok(());
    }
    // The spec grammar's own error already names `--cc 'SPEC'`.
    Err(match quiche_lbe::registry::plugin_factory(spec) {
        Err(e) => e.to_string(),
        Ok(_) => format!("--cc '{spec}': quiche refused it"),
    })
}

/// Answers one request: the file, or an error status.
async fn respond(root: std::sync::Arc<PathBuf>, request: IncomingH3Headers) {
    let IncomingH3Headers {
        headers, mut send, ..
    } = request;
    let field = |name: &[u8]| {
        headers
            .iter()
            .find(|h| h.name() == name)
            .map(|h| h.value().to_vec())
    };
    let method = field(b":method").unwrap_or_default();
    let path = field(b":path").unwrap_or_default();
    let head = method == b"HEAD";
    if method != b"GET" && !head {
        return status_only(&mut send, 405).await;
    }
    let file = match files::resolve(&root, &path) {
        Ok(file) => file,
        Err(status) => return status_only(&mut send, status.code()).await,
    };
    let (mut file, len) = match open(&file).await {
        Some(opened) => opened,
        None => return status_only(&mut send, 404).await,
    };
    let headers = vec![
        Header::new(b":status", b"200"),
        Header::new(b"content-length", len.to_string().as_bytes()),
    ];
    if send
        .send(OutboundFrame::Headers(headers, None))
        .await
        .is_err()
    {
        return;
    }
    if head || len == 0 {
        let _ = send
            .send(OutboundFrame::Body(Default::default(), true))
            .await;
        return;
    }
    let mut sent = 0u64;
    let mut chunk = vec![0u8; BufFactory::MAX_BUF_SIZE];
    while sent < len {
        let n = match file.read(&mut chunk).await {
            Ok(0) | Err(_) => {
                // The file shrank or failed: the stream must not end as if
                // complete, or the client would keep a short file.
                let _ = send.send(OutboundFrame::PeerStreamError).await;
                return;
            }
            Ok(n) => n.min((len - sent) as usize),
        };
        sent += n as u64;
        let body = OutboundFrame::Body(chunk[..n].to_vec().into(), sent == len);
        if send.send(body).await.is_err() {
            return;
        }
    }
}

async fn open(path: &Path) -> Option<(tokio::fs::File, u64)> {
    let file = tokio::fs::File::open(path).await.ok()?;
    let meta = file.metadata().await.ok()?;
    meta.is_file().then_some((file, meta.len()))
}

async fn status_only(send: &mut OutboundFrameSender, status: u16) {
    let headers = vec![
        Header::new(b":status", status.to_string().as_bytes()),
        Header::new(b"content-length", b"0"),
    ];
    let _ = send.send(OutboundFrame::Headers(headers, None)).await;
    let _ = send
        .send(OutboundFrame::Body(Default::default(), true))
        .await;
}
