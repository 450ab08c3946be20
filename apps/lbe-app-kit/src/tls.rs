//! quiche configurations for our clients and servers: certificates,
//! transport defaults, and how a client names the controller a server should
//! send to it with.
//!
//! A download's sender is the server, yet the client picks its controller
//! (`quic-bulk client --cc ledbatpp`). The client offers one extra ALPN
//! entry, `lbe-cc=<spec>`, after the application's own. The server reads it
//! from the ClientHello, before it has sent anything, and installs that
//! controller for the connection through quiche's in-handshake
//! configuration (the same path `set_cc_algorithm_in_handshake` takes), so
//! every controller — BBRv2 included, which cannot be swapped on a live
//! connection — is chosen before the first packet. ALPN selection itself
//! only ever picks the application's protocol.
//!
//! The same way, a client that turned pacing off (`--pacing off`) offers
//! `lbe-pacing=off`, and the server turns pacing off for that connection
//! (`set_pacing_in_handshake`), so a download is sent unpaced too.

use std::path::PathBuf;
use std::time::Duration;

use boring::asn1::Asn1Time;
use boring::bn::BigNum;
use boring::ec::EcGroup;
use boring::ec::EcKey;
use boring::hash::MessageDigest;
use boring::nid::Nid;
use boring::pkey::PKey;
use boring::ssl::ExtensionType;
use boring::ssl::SelectCertError;
use boring::ssl::SslContextBuilder;
use boring::ssl::SslMethod;
use boring::x509::extension::SubjectAlternativeName;
use boring::x509::X509Builder;
use boring::x509::X509NameBuilder;

use crate::Error;
use quiche_lbe::spec::CcSpec;

/// Prefix of the ALPN entry that carries a client's `--cc` spec.
pub const CC_ALPN_PREFIX: &str = "lbe-cc=";

/// The ALPN entry by which a client asks its server not to pace.
pub const PACING_OFF_ALPN: &str = "lbe-pacing=off";

/// Largest UDP payload we send; 1350 bytes fits every path we emulate with
/// room for tunnel overheads (quiche's own apps use the same).
pub const MAX_DATAGRAM_SIZE: usize = 1350;

/// Where a server's certificate comes from.
#[derive(Clone, Debug, Default)]
pub enum Certificate {
    /// A fresh self-signed P-256 certificate for `localhost`, made at start.
    #[default]
    SelfSigned,
    /// PEM files.
    Files { chain: PathBuf, key: PathBuf },
}

/// Flow-control and timeout settings shared by our endpoints.
#[derive(Clone, Copy, Debug)]
pub struct Transport {
    /// Connection-level flow-control window, bytes.
    pub max_data: u64,
    /// Per-stream flow-control window, bytes.
    pub max_stream_data: u64,
    /// Idle timeout.
    pub idle_timeout: Duration,
    /// Release datagrams at the times quiche's pacer sets (quiche's
    /// `enable_pacing`, honoured by our send loops); off sends each as soon
    /// as quiche builds it.
    pub pacing: bool,
}

impl Default for Transport {
    fn default() -> Self {
        // Windows large enough for a 1 Gbit/s × 200 ms path, so a bulk
        // transfer is limited by its congestion controller, not by flow
        // control.
        Self {
            max_data: 64 << 20,
            max_stream_data: 32 << 20,
            idle_timeout: Duration::from_secs(30),
            pacing: true,
        }
    }
}

impl Transport {
    fn apply(&self, config: &mut quiche::Config) {
        config.set_max_idle_timeout(self.idle_timeout.as_millis() as u64);
        config.set_max_recv_udp_payload_size(MAX_DATAGRAM_SIZE);
        config.set_max_send_udp_payload_size(MAX_DATAGRAM_SIZE);
        config.set_initial_max_data(self.max_data);
        config.set_initial_max_stream_data_bidi_local(self.max_stream_data);
        config.set_initial_max_stream_data_bidi_remote(self.max_stream_data);
        config.set_initial_max_stream_data_uni(self.max_stream_data);
        config.set_initial_max_streams_bidi(1000);
        config.set_initial_max_streams_uni(1000);
        config.set_max_connection_window(self.max_data);
        config.set_max_stream_window(self.max_stream_data);
        config.set_disable_active_migration(true);
        config.enable_pacing(self.pacing);
    }
}

fn tls_err(what: &str) -> impl Fn(boring::error::ErrorStack) -> Error + '_ {
    move |e| Error::new(format!("{what}: {e}"))
}

fn self_signed(builder: &mut SslContextBuilder) -> Result<(), Error> {
    let err = tls_err("cannot make a self-signed certificate");
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).map_err(&err)?;
    let key = PKey::from_ec_key(EcKey::generate(&group).map_err(&err)?).map_err(&err)?;

    let mut name = X509NameBuilder::new().map_err(&err)?;
    name.append_entry_by_nid(Nid::COMMONNAME, "localhost")
        .map_err(&err)?;
    let name = name.build();

    let mut serial = BigNum::new().map_err(&err)?;
    serial
        .rand(64, boring::bn::MsbOption::MAYBE_ZERO, false)
        .map_err(&err)?;

    let mut cert = X509Builder::new().map_err(&err)?;
    cert.set_version(2).map_err(&err)?;
    let serial = serial.to_asn1_integer().map_err(&err)?;
    cert.set_serial_number(&serial).map_err(&err)?;
    cert.set_subject_name(&name).map_err(&err)?;
    cert.set_issuer_name(&name).map_err(&err)?;
    cert.set_pubkey(&key).map_err(&err)?;
    let not_before = Asn1Time::days_from_now(0).map_err(&err)?;
    let not_after = Asn1Time::days_from_now(30).map_err(&err)?;
    cert.set_not_before(&not_before).map_err(&err)?;
    cert.set_not_after(&not_after).map_err(&err)?;
    let san = SubjectAlternativeName::new()
        .dns("localhost")
        .ip("127.0.0.1")
        .ip("::1")
        .build(&cert.x509v3_context(None, None))
        .map_err(&err)?;
    cert.append_extension(&san).map_err(&err)?;
    cert.sign(&key, MessageDigest::sha256()).map_err(&err)?;
    let cert = cert.build();

    builder.set_certificate(&cert).map_err(&err)?;
    builder.set_private_key(&key).map_err(&err)?;
    Ok(())
}

/// The protocol names in a ClientHello's ALPN extension (RFC 7301 §3.1: a
/// 2-byte list length, then length-prefixed protocol names); a truncated
/// list ends at the last whole name.
fn alpn_names(alpn_extension: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = alpn_extension.get(2..).unwrap_or(&[]);
    std::iter::from_fn(move || {
        let (&len, tail) = rest.split_first()?;
        let name = tail.get(..len as usize)?;
        rest = &tail[len as usize..];
        Some(name)
    })
}

/// Reads the `lbe-cc=` entry of a ClientHello's ALPN extension.
pub fn requested_cc(alpn_extension: &[u8]) -> Option<&str> {
    alpn_names(alpn_extension)
        .find_map(|name| name.strip_prefix(CC_ALPN_PREFIX.as_bytes()))
        .and_then(|spec| std::str::from_utf8(spec).ok())
}

/// Whether a ClientHello's ALPN extension asks the server not to pace.
pub fn requested_no_pacing(alpn_extension: &[u8]) -> bool {
    alpn_names(alpn_extension).any(|name| name == PACING_OFF_ALPN.as_bytes())
}

/// A server configuration whose connections start on quiche's CUBIC (a
/// client may name another controller in its ALPN list), paced or not,
/// with the default transport otherwise: what our servers use.
pub fn cubic_server_config(
    alpn: &[&[u8]],
    certificate: &Certificate,
    pacing: bool,
) -> Result<quiche::Config, Error> {
    let cubic: CcSpec = "cubic".parse()?;
    server_config(
        alpn,
        certificate,
        &cubic,
        &Transport {
            pacing,
            ..Transport::default()
        },
    )
}

/// A server configuration. Connections use `default_cc` unless the client
/// names another controller in its ALPN list.
pub fn server_config(
    alpn: &[&[u8]],
    certificate: &Certificate,
    default_cc: &CcSpec,
    transport: &Transport,
) -> Result<quiche::Config, Error> {
    let mut builder =
        SslContextBuilder::new(SslMethod::tls()).map_err(tls_err("cannot create a TLS context"))?;
    match certificate {
        Certificate::SelfSigned => self_signed(&mut builder)?,
        Certificate::Files { chain, key } => {
            builder.set_certificate_chain_file(chain).map_err(|e| {
                Error::new(format!("cannot load certificate {}: {e}", chain.display()))
            })?;
            builder
                .set_private_key_file(key, boring::ssl::SslFiletype::PEM)
                .map_err(|e| {
                    Error::new(format!("cannot load private key {}: {e}", key.display()))
                })?;
        }
    }

    builder.set_select_certificate_callback(|mut hello| {
        let alpn = hello.get_extension(ExtensionType::APPLICATION_LAYER_PROTOCOL_NEGOTIATION);
        let requested = alpn.and_then(requested_cc).map(str::to_owned);
        if alpn.is_some_and(requested_no_pacing) {
            <quiche::Connection>::set_pacing_in_handshake(hello.ssl_mut(), false).map_err(|e| {
                log::warn!("cannot turn pacing off for a connection: {e:?}");
                SelectCertError::ERROR
            })?;
        }
        let Some(requested) = requested else {
            return Ok(());
        };
        let spec: CcSpec = requested.parse().map_err(|e| {
            log::warn!("client asked for an unusable controller: {e}");
            SelectCertError::ERROR
        })?;
        spec.configure_in_handshake(hello.ssl_mut()).map_err(|e| {
            log::warn!("cannot install '{spec}' for a connection: {e:?}");
            SelectCertError::ERROR
        })
    });

    let mut config = quiche::Config::with_boring_ssl_ctx_builder(quiche::PROTOCOL_VERSION, builder)
        .map_err(|e| Error::new(format!("cannot create a QUIC configuration: {e}")))?;
    config
        .set_application_protos(alpn)
        .map_err(|e| Error::new(format!("bad ALPN list: {e}")))?;
    transport.apply(&mut config);
    default_cc.configure(&mut config);
    Ok(config)
}

/// A client configuration. With `server_cc`, the client asks the server to
/// send with that controller. The client does not verify the server's
/// certificate (our servers use self-signed ones) unless `verify_peer`.
pub fn client_config(
    alpn: &[&[u8]],
    own_cc: &CcSpec,
    server_cc: Option<&CcSpec>,
    transport: &Transport,
    verify_peer: bool,
) -> Result<quiche::Config, Error> {
    let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION)
        .map_err(|e| Error::new(format!("cannot create a QUIC configuration: {e}")))?;
    let request = server_cc.map(|s| format!("{CC_ALPN_PREFIX}{s}"));
    if request.as_ref().is_some_and(|r| r.len() > 255) {
        return Err(Error::new(
            "controller spec too long to send (at most 248 characters)",
        ));
    }
    let mut protos: Vec<&[u8]> = alpn.to_vec();
    protos.extend(request.as_deref().map(str::as_bytes));
    if server_cc.is_some() && !transport.pacing {
        protos.push(PACING_OFF_ALPN.as_bytes());
    }
    config
        .set_application_protos(&protos)
        .map_err(|e| Error::new(format!("bad ALPN list: {e}")))?;
    config.verify_peer(verify_peer);
    transport.apply(&mut config);
    own_cc.configure(&mut config);
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alpn_ext(names: &[&[u8]]) -> Vec<u8> {
        let mut list = Vec::new();
        for n in names {
            list.push(n.len() as u8);
            list.extend_from_slice(n);
        }
        let mut ext = (list.len() as u16).to_be_bytes().to_vec();
        ext.extend(list);
        ext
    }

    #[test]
    fn finds_the_cc_entry() {
        let ext = alpn_ext(&[b"lbe-bulk", b"lbe-cc=ledbatpp:target=25ms"]);
        assert_eq!(requested_cc(&ext), Some("ledbatpp:target=25ms"));
        assert_eq!(requested_cc(&alpn_ext(&[b"h3"])), None);
    }

    #[test]
    fn finds_the_pacing_entry() {
        let ext = alpn_ext(&[b"lbe-bulk", b"lbe-cc=bbr2", b"lbe-pacing=off"]);
        assert!(requested_no_pacing(&ext));
        assert_eq!(requested_cc(&ext), Some("bbr2"));
        assert!(!requested_no_pacing(&alpn_ext(&[
            b"lbe-bulk",
            b"lbe-cc=bbr2"
        ])));
        assert!(!requested_no_pacing(&alpn_ext(&[b"lbe-pacing=offx"])));
    }

    #[test]
    fn truncated_alpn_is_ignored() {
        let mut ext = alpn_ext(&[b"lbe-bulk", b"lbe-cc=cdg"]);
        ext.truncate(ext.len() - 2);
        assert_eq!(requested_cc(&ext), None);
        assert_eq!(requested_cc(&[]), None);
        assert_eq!(requested_cc(&[0, 5, 200]), None);
    }
}
