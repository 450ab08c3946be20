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
//!
//! Clients verify their server's certificate unless told not to
//! ([`ServerTrust`]): against the system's roots by default, or against a
//! PEM file (`--ca`, e.g. the self-signed certificate a server wrote with
//! `--write-cert`). [`verify_failure`] is the one-line account of a
//! certificate that did not verify.

use std::cell::RefCell;
use std::net::IpAddr;
use std::path::Path;
use std::path::PathBuf;

use boring::asn1::Asn1Time;
use boring::bn::BigNum;
use boring::ec::EcGroup;
use boring::ec::EcKey;
use boring::hash::MessageDigest;
use boring::nid::Nid;
use boring::pkey::PKey;
use boring::pkey::Private;
use boring::ssl::ExtensionType;
use boring::ssl::SelectCertError;
use boring::ssl::SslContextBuilder;
use boring::ssl::SslMethod;
use boring::ssl::SslVerifyMode;
use boring::x509::extension::SubjectAlternativeName;
use boring::x509::X509Builder;
use boring::x509::X509NameBuilder;
use boring::x509::X509;

use crate::Error;
use quiche_lbe::spec::CcSpec;

/// Prefix of the ALPN entry that carries a client's `--cc` spec.
pub const CC_ALPN_PREFIX: &str = "lbe-cc=";

/// The ALPN entry by which a client asks its server not to pace.
pub const PACING_OFF_ALPN: &str = "lbe-pacing=off";

/// Largest UDP payload we send (`lbe_endpoint`'s, shared with the
/// simulator).
pub use lbe_endpoint::MAX_DATAGRAM_SIZE;

/// Where a server's certificate comes from.
#[derive(Clone, Debug, Default)]
pub enum Certificate {
    /// A fresh self-signed certificate ([`SelfSignedCert`]), made when the
    /// configuration is; no client can know it in advance.
    #[default]
    SelfSigned,
    /// A self-signed certificate made beforehand, which clients can trust
    /// ([`SelfSignedCert::pem`], `--write-cert`).
    Generated(SelfSignedCert),
    /// PEM files.
    Files { chain: PathBuf, key: PathBuf },
}

impl Certificate {
    /// What a client of a server with this certificate trusts: the
    /// generated certificate itself, or the system's roots (a fresh
    /// self-signed certificate cannot be known, and will not verify).
    pub fn client_trust(&self) -> ServerTrust {
        match self {
            Certificate::Generated(cert) => ServerTrust::Pem(cert.pem()),
            Certificate::SelfSigned | Certificate::Files { .. } => ServerTrust::SystemRoots,
        }
    }
}

/// A self-signed P-256 certificate, valid for 30 days, whose names are
/// `localhost`, `127.0.0.1` and `::1` (subject alternative names of types
/// DNS and IP), so a client that trusts it can reach the server as
/// `https://localhost:PORT/`, `https://127.0.0.1:PORT/` or
/// `https://[::1]:PORT/`.
#[derive(Clone)]
pub struct SelfSignedCert {
    cert: X509,
    key: PKey<Private>,
}

impl std::fmt::Debug for SelfSignedCert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SelfSignedCert")
    }
}

impl SelfSignedCert {
    /// Makes a new key and certificate.
    pub fn generate() -> Result<Self, Error> {
        let (cert, key) = self_signed()?;
        Ok(SelfSignedCert { cert, key })
    }

    /// The certificate, PEM-encoded (no key).
    pub fn pem(&self) -> Vec<u8> {
        self.cert
            .to_pem()
            .expect("a certificate we built encodes as PEM")
    }

    /// Writes [`Self::pem`] to `path`, whole or not at all (a temporary
    /// file beside it, renamed), so a client never reads half of it.
    pub fn write_pem(&self, path: &Path) -> Result<(), Error> {
        let err = |e: std::io::Error| {
            Error::new(format!(
                "cannot write the certificate to {}: {e}",
                path.display()
            ))
        };
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        std::fs::write(&tmp, self.pem()).map_err(err)?;
        std::fs::rename(&tmp, path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            err(e)
        })
    }
}

/// Whom a client trusts to vouch for its server's certificate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ServerTrust {
    /// The system's root certificates (BoringSSL's default verify paths,
    /// which honour `SSL_CERT_FILE` and `SSL_CERT_DIR`).
    #[default]
    SystemRoots,
    /// Only the certificates in this PEM text (a private CA, or the
    /// server's own self-signed certificate), instead of the system's
    /// roots. Made by [`ServerTrust::ca_file`] or from
    /// [`SelfSignedCert::pem`].
    Pem(Vec<u8>),
    /// Nobody: the server's certificate is not checked (`-k/--insecure`).
    Insecure,
}

impl ServerTrust {
    /// Trust the certificates in the PEM file at `path` (`--ca`): read and
    /// checked now, so a missing or malformed file is an error before
    /// anything is sent.
    pub fn ca_file(path: &Path) -> Result<Self, Error> {
        let pem = std::fs::read(path)
            .map_err(|e| Error::new(format!("cannot read {}: {e}", path.display())))?;
        pem_certificates(&pem).map_err(|why| Error::new(format!("{}: {why}", path.display())))?;
        Ok(ServerTrust::Pem(pem))
    }
}

/// The certificates in `pem`: one or more, or why not.
fn pem_certificates(pem: &[u8]) -> Result<Vec<X509>, String> {
    const EXPECTED: &str = "expected one or more PEM certificates (-----BEGIN CERTIFICATE-----)";
    match X509::stack_from_pem(pem) {
        Ok(certs) if !certs.is_empty() => Ok(certs),
        Ok(_) => Err(format!("no certificate in it; {EXPECTED}")),
        Err(e) => Err(format!("not a PEM certificate file ({e}); {EXPECTED}")),
    }
}

/// Flow-control and timeout settings shared by our endpoints
/// (`lbe_endpoint`'s, which the simulator applies too).
pub use lbe_endpoint::Transport;

fn tls_err(what: &str) -> impl Fn(boring::error::ErrorStack) -> Error + '_ {
    move |e| Error::new(format!("{what}: {e}"))
}

fn self_signed() -> Result<(X509, PKey<Private>), Error> {
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
    Ok((cert.build(), key))
}

/// Installs a generated certificate and its key.
fn use_generated(builder: &mut SslContextBuilder, cert: &SelfSignedCert) -> Result<(), Error> {
    let err = tls_err("cannot use the self-signed certificate");
    builder.set_certificate(&cert.cert).map_err(&err)?;
    builder.set_private_key(&cert.key).map_err(&err)
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
        Certificate::SelfSigned => use_generated(&mut builder, &SelfSignedCert::generate()?)?,
        Certificate::Generated(cert) => use_generated(&mut builder, cert)?,
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
/// send with that controller. The server's certificate is checked as
/// `trust` says, for `server_name`: a DNS name, or an IP address, which is
/// then checked against the certificate's IP names (give
/// [`crate::endpoint::client::ClientOptions`] the same name).
pub fn client_config(
    alpn: &[&[u8]],
    own_cc: &CcSpec,
    server_cc: Option<&CcSpec>,
    transport: &Transport,
    trust: &ServerTrust,
    server_name: &str,
) -> Result<quiche::Config, Error> {
    let mut builder =
        SslContextBuilder::new(SslMethod::tls()).map_err(tls_err("cannot create a TLS context"))?;
    verify_server(&mut builder, trust, server_name)?;
    let mut config = quiche::Config::with_boring_ssl_ctx_builder(quiche::PROTOCOL_VERSION, builder)
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
    transport.apply(&mut config);
    own_cc.configure(&mut config);
    Ok(config)
}

/// Sets up the check of the server's certificate. quiche names the server
/// to BoringSSL as a DNS name (`X509_VERIFY_PARAM_set1_host`, which never
/// matches an IP address name), so an IP address is set here as one
/// (`X509_VERIFY_PARAM_set1_ip`) and the connection is opened without a
/// server name ([`sni`]). quiche's own `verify_peer` is not called: it
/// would drop the callback that records why a certificate failed.
fn verify_server(
    builder: &mut SslContextBuilder,
    trust: &ServerTrust,
    server_name: &str,
) -> Result<(), Error> {
    let err = tls_err("cannot set up certificate verification");
    match trust {
        ServerTrust::Insecure => {
            builder.set_verify(SslVerifyMode::NONE);
            return Ok(());
        }
        ServerTrust::SystemRoots => builder.set_default_verify_paths().map_err(&err)?,
        ServerTrust::Pem(pem) => {
            for cert in pem_certificates(pem).map_err(Error::new)? {
                builder.cert_store_mut().add_cert(cert).map_err(&err)?;
            }
        }
    }
    if let Ok(ip) = server_name.parse::<IpAddr>() {
        builder
            .cert_store_mut()
            .verify_param_mut()
            .set_ip(ip)
            .map_err(&err)?;
    }
    builder.set_verify_callback(SslVerifyMode::PEER, |ok, ctx| {
        if let Err(e) = ctx.verify_result() {
            VERIFY_FAILURE.with(|f| {
                f.borrow_mut()
                    .get_or_insert_with(|| e.error_string().to_string());
            });
        }
        ok
    });
    Ok(())
}

/// The server name a client sends (TLS SNI) for `host`: none for an IP
/// address (RFC 6066 §3: "Literal IPv4 and IPv6 addresses are not
/// permitted in \"HostName\"."; [`client_config`] checks the address).
pub fn sni(host: &str) -> Option<&str> {
    host.parse::<IpAddr>().is_err().then_some(host)
}

thread_local! {
    /// Why the last certificate this thread checked failed, as BoringSSL
    /// says (`X509_verify_cert_error_string`): a client's handshake runs
    /// on the thread that drives its connection, which clears this before
    /// it starts ([`take_verify_failure`]).
    static VERIFY_FAILURE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Why the server's certificate last failed verification on this thread,
/// if it did; clears it.
pub fn take_verify_failure() -> Option<String> {
    VERIFY_FAILURE.with(|f| f.borrow_mut().take())
}

/// The error for a handshake this client ended with TLS alert `alert`
/// (`alert_name` its name) because `server_name`'s certificate did not
/// verify (`why`: BoringSSL's reason), with the options that get past it.
/// BoringSSL's client sends `unknown_ca` (48) for a self-signed
/// certificate or one from a CA it does not trust, `bad_certificate` (42)
/// for one that names other hosts, `certificate_expired` (45) for one out
/// of its validity period (`SSL_alert_from_verify_result`).
pub fn verify_failure(server_name: &str, why: &str, alert: u64, alert_name: &str) -> String {
    format!(
        "the server's certificate for {server_name} did not verify: {why} (TLS alert {alert}, \
         {alert_name}); use --ca PATH to trust that certificate or its CA, or -k/--insecure \
         to skip verification"
    )
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
    fn an_ip_address_is_not_sent_as_a_server_name() {
        assert_eq!(sni("localhost"), Some("localhost"));
        assert_eq!(sni("cdn.example"), Some("cdn.example"));
        assert_eq!(sni("127.0.0.1"), None);
        assert_eq!(sni("::1"), None);
    }

    #[test]
    fn a_generated_certificate_is_what_its_clients_trust() {
        let cert = SelfSignedCert::generate().unwrap();
        let pem = cert.pem();
        assert!(pem.starts_with(b"-----BEGIN CERTIFICATE-----\n"));
        assert_eq!(pem_certificates(&pem).unwrap().len(), 1);
        assert_eq!(
            Certificate::Generated(cert).client_trust(),
            ServerTrust::Pem(pem)
        );
        assert_eq!(
            Certificate::SelfSigned.client_trust(),
            ServerTrust::SystemRoots
        );
    }

    #[test]
    fn a_ca_file_must_hold_a_certificate() {
        let dir = std::env::temp_dir().join(format!("lbe-app-kit-ca-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.pem");
        let cert = SelfSignedCert::generate().unwrap();
        cert.write_pem(&good).unwrap();
        assert_eq!(
            ServerTrust::ca_file(&good).unwrap(),
            ServerTrust::Pem(cert.pem())
        );
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "").unwrap();
        assert_eq!(
            ServerTrust::ca_file(&empty).unwrap_err().to_string(),
            format!(
                "{}: no certificate in it; expected one or more PEM certificates \
                 (-----BEGIN CERTIFICATE-----)",
                empty.display()
            )
        );
        let missing = dir.join("missing.pem");
        assert_eq!(
            ServerTrust::ca_file(&missing).unwrap_err().to_string(),
            format!(
                "cannot read {}: No such file or directory (os error 2)",
                missing.display()
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
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
