//! Each end's `quiche::Config`: the server's TLS identity, the ALPN, our
//! apps' transport settings and the sender's controller.

use std::sync::OnceLock;

/// The simulated server's private key: RSA-2048, made with
/// `openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048` for the
/// simulator only. It protects nothing: both ends of every simulated
/// connection are in one process. Generating a key instead took 0.3 s of
/// CPU per process, a fifth of the instructions of a 10 s simulated run.
const SERVER_KEY_PEM: &[u8] = include_bytes!("simulated-server-key.pem");

/// The server's certificate and key, made once per process.
fn identity() -> Result<
    &'static (
        boring::x509::X509,
        boring::pkey::PKey<boring::pkey::Private>,
    ),
    String,
> {
    static IDENTITY: OnceLock<
        Result<
            (
                boring::x509::X509,
                boring::pkey::PKey<boring::pkey::Private>,
            ),
            String,
        >,
    > = OnceLock::new();
    IDENTITY
        .get_or_init(|| {
            let err = |e: boring::error::ErrorStack| {
                format!("cannot make the simulated server's certificate: {e}")
            };
            let key = boring::pkey::PKey::private_key_from_pem(SERVER_KEY_PEM).map_err(err)?;
            let mut name = boring::x509::X509NameBuilder::new().map_err(err)?;
            name.append_entry_by_nid(boring::nid::Nid::COMMONNAME, "lbe-sim")
                .map_err(err)?;
            let name = name.build();
            let mut cert = boring::x509::X509::builder().map_err(err)?;
            cert.set_version(2).map_err(err)?;
            let serial = boring::bn::BigNum::from_u32(1)
                .and_then(|b| b.to_asn1_integer())
                .map_err(err)?;
            cert.set_serial_number(&serial).map_err(err)?;
            cert.set_subject_name(&name).map_err(err)?;
            cert.set_issuer_name(&name).map_err(err)?;
            cert.set_pubkey(&key).map_err(err)?;
            let not_before = boring::asn1::Asn1Time::from_str("20260101000000Z").map_err(err)?;
            let not_after = boring::asn1::Asn1Time::from_str("20360101000000Z").map_err(err)?;
            cert.set_not_before(&not_before).map_err(err)?;
            cert.set_not_after(&not_after).map_err(err)?;
            cert.sign(&key, boring::hash::MessageDigest::sha256())
                .map_err(err)?;
            Ok((cert.build(), key))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Our apps' transport settings (`lbe_endpoint::Transport`'s defaults:
/// flow-control windows that start at 32 MiB a stream and grow up to
/// 64 MiB where the path needs it, so flow control never limits a bulk
/// transfer; a 30 s idle timeout; the timestamp extension offered).
fn transport(config: &mut quiche::Config, pacing: bool) {
    lbe_endpoint::Transport {
        pacing,
        ..lbe_endpoint::Transport::default()
    }
    .apply(config);
}

fn quiche_err(what: &str) -> impl Fn(quiche::Error) -> String + '_ {
    move |e| format!("{what}: quiche: {e}")
}

/// The ALPN a flow's ends offer.
fn alpn(flow: &lbe_scenario::Flow) -> &'static [u8] {
    match flow.kind {
        lbe_scenario::FlowKind::H3(_) => lbe_h3::ALPN,
        _ => lbe_bulk::protocol::ALPN,
    }
}

/// The server's configuration; `spec` is its controller when it sends.
pub(super) fn server_config(
    flow: &lbe_scenario::Flow,
    spec: Option<&quiche_lbe::CcSpec>,
) -> Result<quiche::Config, String> {
    let alpn = alpn(flow);
    let (cert, key) = identity()?;
    let err =
        |e: boring::error::ErrorStack| format!("cannot set up the simulated server's TLS: {e}");
    let mut tls =
        boring::ssl::SslContextBuilder::new(boring::ssl::SslMethod::tls()).map_err(err)?;
    tls.set_certificate(cert).map_err(err)?;
    tls.set_private_key(key).map_err(err)?;
    let mut config = quiche::Config::with_boring_ssl_ctx_builder(quiche::PROTOCOL_VERSION, tls)
        .map_err(quiche_err("server config"))?;
    config
        .set_application_protos(&[alpn])
        .map_err(quiche_err("server config"))?;
    transport(&mut config, flow.pacing);
    if let Some(spec) = spec {
        spec.configure(&mut config);
    }
    Ok(config)
}

/// The client's configuration; `spec` is its controller when it sends.
pub(super) fn client_config(
    flow: &lbe_scenario::Flow,
    spec: Option<&quiche_lbe::CcSpec>,
) -> Result<quiche::Config, String> {
    let alpn = alpn(flow);
    // A TLS context of our own: `quiche::Config::new` loads the system's CA
    // certificates, 48 M instructions per flow (5 % of a 10 s flow's run),
    // for a client that verifies nothing (below).
    let tls = boring::ssl::SslContextBuilder::new(boring::ssl::SslMethod::tls())
        .map_err(|e| format!("cannot set up the simulated client's TLS: {e}"))?;
    let mut config = quiche::Config::with_boring_ssl_ctx_builder(quiche::PROTOCOL_VERSION, tls)
        .map_err(quiche_err("client config"))?;
    config
        .set_application_protos(&[alpn])
        .map_err(quiche_err("client config"))?;
    // Both ends are in this process; see the module docs.
    config.verify_peer(false);
    transport(&mut config, flow.pacing);
    if let Some(spec) = spec {
        spec.configure(&mut config);
    }
    Ok(config)
}
