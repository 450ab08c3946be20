//! What a URL names: [`parse_url`] reads `https://host[:port]/path`, and
//! `resolve` finds the host's address.

use std::net::SocketAddr;
use std::net::ToSocketAddrs;

use quiche_lbe::Error;

/// Where a URL points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// `:authority`: the host as written (IPv6 in brackets), and the port
    /// if the URL has one.
    pub authority: String,
    /// The host to resolve and to name in TLS (no brackets).
    pub host: String,
    pub port: u16,
    /// `:path`: path and query, as written.
    pub path: String,
}

/// Reads an `https://host[:port]/path` URL.
pub fn parse_url(url: &str) -> Result<Target, Error> {
    let bad = |why: &str| Error::new(format!("bad URL '{url}': {why}"));
    let uri: http::Uri = url.parse().map_err(|e| bad(&format!("{e}")))?;
    match uri.scheme_str() {
        Some("https") => {}
        Some(other) => return Err(bad(&format!("scheme '{other}' (only https)"))),
        None => return Err(bad("expected https://host[:port]/path")),
    }
    let authority = uri.authority().ok_or_else(|| bad("no host"))?;
    if authority.as_str().contains('@') {
        return Err(bad("user information is not supported"));
    }
    let host = authority.host();
    if host.is_empty() {
        return Err(bad("no host"));
    }
    let path = uri
        .path_and_query()
        .map(|p| p.as_str())
        .filter(|p| !p.is_empty())
        .unwrap_or("/");
    let path = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };
    // After the host (whose IPv6 form has colons of its own).
    let port = match authority.as_str()[host.len()..].strip_prefix(':') {
        None => 443,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| bad(&format!("bad port '{p}'")))?,
    };
    Ok(Target {
        authority: authority.as_str().to_string(),
        host: host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string(),
        port,
        path,
    })
}

/// The host's address: its first IPv4 one if it has any (servers here
/// listen on 127.0.0.1 by default, and `localhost` often resolves to ::1
/// first), else its first.
pub(super) fn resolve(target: &Target) -> Result<SocketAddr, Error> {
    let addrs: Vec<SocketAddr> = (target.host.as_str(), target.port)
        .to_socket_addrs()
        .map_err(|e| Error::new(format!("cannot resolve {}: {e}", target.host)))?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| Error::new(format!("{} has no address", target.host)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let t = parse_url("https://127.0.0.1:4433/a/b%20c?x=1").unwrap();
        assert_eq!(
            t,
            Target {
                authority: "127.0.0.1:4433".into(),
                host: "127.0.0.1".into(),
                port: 4433,
                path: "/a/b%20c?x=1".into(),
            }
        );
        let t = parse_url("https://[::1]:8443").unwrap();
        assert_eq!(t.host, "::1");
        assert_eq!(t.authority, "[::1]:8443");
        assert_eq!(t.path, "/");
        let t = parse_url("https://localhost/f").unwrap();
        assert_eq!(t.port, 443);
        assert_eq!(t.authority, "localhost");
        for bad in [
            "http://127.0.0.1/x",
            "127.0.0.1:4433/x",
            "/x",
            "https://",
            "https://u@h/x",
            "https://h:99999/x",
            "https://h:0/x",
            "https://h:/x",
            "not a url",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
        assert!(parse_url("ftp://h/x")
            .unwrap_err()
            .to_string()
            .contains("only https"));
    }

    #[test]
    fn literal_addresses_resolve_to_themselves() {
        let t = parse_url("https://127.0.0.1:4433/f").unwrap();
        assert_eq!(resolve(&t).unwrap(), "127.0.0.1:4433".parse().unwrap());
        let t = parse_url("https://[::1]:8443/f").unwrap();
        assert_eq!(resolve(&t).unwrap(), "[::1]:8443".parse().unwrap());
    }
}
