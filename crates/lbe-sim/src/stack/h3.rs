//! An h3 flow's HTTP/3 layers (`lbe_h3`) and what they keep between
//! wake-ups: the client's request and response, the server's responses and
//! its background rule.

/// An h3 flow, if `flow` is one.
pub(super) fn h3_flow(flow: &lbe_scenario::Flow) -> Option<&lbe_scenario::H3Flow> {
    match &flow.kind {
        lbe_scenario::FlowKind::H3(h3) => Some(h3),
        _ => None,
    }
}

/// The byte an h3 flow's response body is made of.
const BODY_BYTE: u8 = 0x5a;

/// An h3 flow's HTTP/3 layers, the code our apps run (`lbe_h3`):
/// h3-fetch's request plumbing at the client, h3-serve's background rule
/// and response writer at the server.
pub(super) struct H3Run {
    /// The client sent its request.
    pub(super) request_sent: bool,
    /// The server's requests in, responses out.
    pub(super) serving: lbe_h3::response::Serving,
    /// Whether a request switched the server's connection to the flow's
    /// controller (h3-serve's rule; only when the server is h3-serve).
    pub(super) background: lbe_h3::background::Background,
    pub(super) client: lbe_h3::client::H3Client,
    /// What the client's response brought.
    pub(super) response: BodyTally,
    /// Body bytes the server's response read from its source (at most one
    /// 64 KiB read ahead of what it handed quiche).
    pub(super) offered: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

/// What an h3 flow's client counts of its response.
#[derive(Default)]
pub(super) struct BodyTally {
    pub(super) received: u64,
    pub(super) finished: bool,
}

impl lbe_h3::client::ResponseHandler for BodyTally {
    fn headers(
        &mut self,
        headers: &[quiche::h3::Header],
    ) -> Result<lbe_h3::client::Next, quiche_lbe::Error> {
        match lbe_h3::fields::field(headers, ":status") {
            Some("200") => Ok(lbe_h3::client::Next::Body),
            status => Err(quiche_lbe::Error::new(format!(
                "the server answered {} instead of 200",
                status.unwrap_or("without a :status")
            ))),
        }
    }

    fn data(&mut self, data: &[u8]) -> Result<(), quiche_lbe::Error> {
        self.received += data.len() as u64;
        Ok(())
    }

    fn finished(&mut self) -> Result<(), quiche_lbe::Error> {
        self.finished = true;
        Ok(())
    }
}

/// A response body of the served byte, counted as it is read.
pub(super) struct CountedBody {
    pub(super) offered: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl std::io::Read for CountedBody {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        buf.fill(BODY_BYTE);
        self.offered
            .fetch_add(buf.len() as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(buf.len())
    }
}
