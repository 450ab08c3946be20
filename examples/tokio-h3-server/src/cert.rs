//! The server's self-signed certificate, made at start.
//!
//! tokio-quiche reads the certificate and key from files
//! (`TlsCertificatePaths`), so both are written to a directory of their own
//! under the system's temporary directory, the key readable by this user
//! only; the directory goes when the server stops.

use std::path::PathBuf;

use boring::asn1::Asn1Time;
use boring::bn::BigNum;
use boring::bn::MsbOption;
use boring::ec::EcGroup;
use boring::ec::EcKey;
use boring::hash::MessageDigest;
use boring::nid::Nid;
use boring::pkey::PKey;
use boring::pkey::Private;
use boring::x509::extension::SubjectAlternativeName;
use boring::x509::X509NameBuilder;
use boring::x509::X509;

/// A P-256 key and a certificate for `localhost`, `127.0.0.1` and `::1`,
/// valid for 30 days.
pub struct SelfSigned {
    key: PKey<Private>,
    cert: X509,
}

impl SelfSigned {
    pub fn new() -> Result<Self, String> {
        let err =
            |e: boring::error::ErrorStack| format!("cannot make a self-signed certificate: {e}");
        let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).map_err(err)?;
        let key = PKey::from_ec_key(EcKey::generate(&group).map_err(err)?).map_err(err)?;
        let mut name = X509NameBuilder::new().map_err(err)?;
        name.append_entry_by_nid(Nid::COMMONNAME, "localhost")
            .map_err(err)?;
        let name = name.build();
        let mut serial = BigNum::new().map_err(err)?;
        serial.rand(64, MsbOption::MAYBE_ZERO, false).map_err(err)?;
        let mut cert = X509::builder().map_err(err)?;
        cert.set_version(2).map_err(err)?;
        let serial = serial.to_asn1_integer().map_err(err)?;
        cert.set_serial_number(&serial).map_err(err)?;
        cert.set_subject_name(&name).map_err(err)?;
        cert.set_issuer_name(&name).map_err(err)?;
        cert.set_pubkey(&key).map_err(err)?;
        let not_before = Asn1Time::days_from_now(0).map_err(err)?;
        cert.set_not_before(&not_before).map_err(err)?;
        let not_after = Asn1Time::days_from_now(30).map_err(err)?;
        cert.set_not_after(&not_after).map_err(err)?;
        let san = SubjectAlternativeName::new()
            .dns("localhost")
            .ip("127.0.0.1")
            .ip("::1")
            .build(&cert.x509v3_context(None, None))
            .map_err(err)?;
        cert.append_extension(&san).map_err(err)?;
        cert.sign(&key, MessageDigest::sha256()).map_err(err)?;
        Ok(SelfSigned {
            key,
            cert: cert.build(),
        })
    }

    /// The certificate, PEM.
    pub fn cert_pem(&self) -> Vec<u8> {
        self.cert.to_pem().expect("a built certificate encodes")
    }

    /// Writes the certificate and the key for tokio-quiche to read.
    pub fn write_files(&self) -> Result<Files, String> {
        let dir = std::env::temp_dir().join(format!("tokio-h3-server-{}", std::process::id()));
        let files = Files {
            cert: dir.join("cert.pem").to_string_lossy().into_owned(),
            key: dir.join("key.pem").to_string_lossy().into_owned(),
            dir,
        };
        let _ = std::fs::remove_dir_all(&files.dir);
        let failed = |e: std::io::Error| {
            format!(
                "cannot write the certificate to {}: {e}",
                files.dir.display()
            )
        };
        let mut dir = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut dir, 0o700);
        dir.create(&files.dir).map_err(failed)?;
        let key = self
            .key
            .private_key_to_pem_pkcs8()
            .map_err(|e| format!("cannot encode the key: {e}"))?;
        std::fs::write(&files.key, key).map_err(failed)?;
        std::fs::write(&files.cert, self.cert_pem()).map_err(failed)?;
        Ok(files)
    }
}

/// The certificate and key files; removed on drop.
pub struct Files {
    dir: PathBuf,
    cert: String,
    key: String,
}

impl Files {
    pub fn cert_path(&self) -> &str {
        &self.cert
    }

    pub fn key_path(&self) -> &str {
        &self.key
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
