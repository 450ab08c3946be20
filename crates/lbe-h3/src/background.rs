//! h3-serve's rule for background delivery.
//!
//! RFC 9218 §4.1: "The urgency (u) parameter value is Integer (see Section
//! 3.3.1 of [STRUCTURED-FIELDS]), between 0 and 7 inclusive, in descending
//! order of priority." A request for urgency 7, the lowest, says the
//! client does not need its response soon; h3-serve then sends the whole
//! connection with a less-than-best-effort controller. The switch is made
//! in place (quiche keeps the connection's RTT and loss state), before
//! anything of the response is written, once, for the life of the
//! connection.
//!
//! RFC 9218, "Extensible Prioritization Scheme for HTTP", §4.1:
//! <https://www.rfc-editor.org/rfc/rfc9218#section-4.1>

use std::time::Duration;

use quiche::h3;
use quiche_lbe::CcSpec;

use crate::fields;

/// What a request's fields ask of its connection and its response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ask {
    /// RFC 9218's urgency (default 3).
    pub urgency: u8,
    /// RFC 9218's incremental flag.
    pub incremental: bool,
    /// The `lbe-deadline` field ([`fields::DEADLINE_FIELD`]): `None`
    /// without one; an error when it is malformed or on a foreground
    /// request, where it is a hint to ignore (with a warning).
    pub deadline: Option<Result<Duration, String>>,
}

impl Ask {
    /// What the request with header section `list` asks.
    pub fn of(list: &[h3::Header]) -> Ask {
        let priority = fields::field_list(list, "priority");
        let urgency = fields::urgency(priority.as_deref());
        let background = urgency == fields::BACKGROUND_URGENCY;
        let deadline = fields::field(list, fields::DEADLINE_FIELD).map(|value| {
            fields::deadline(value).and_then(|d| match background {
                true => Ok(d),
                false => Err(format!(
                    "{} on a foreground request",
                    fields::DEADLINE_FIELD
                )),
            })
        });
        Ask {
            urgency,
            incremental: fields::incremental(priority.as_deref()),
            deadline,
        }
    }

    /// Whether the request asks for background delivery (urgency 7).
    pub fn background(&self) -> bool {
        self.urgency == fields::BACKGROUND_URGENCY
    }

    /// The priority its response is sent with.
    pub fn priority(&self) -> h3::Priority {
        h3::Priority::new(self.urgency, self.incremental)
    }
}

/// A connection's background state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Background {
    on: bool,
}

impl Background {
    /// Whether a request of the connection asked for background delivery.
    pub fn is_on(&self) -> bool {
        self.on
    }

    /// A background request arrived on `conn`. The first time, its
    /// controller is switched to `spec` (a plug-in; plain `cubic`, which
    /// the connection already runs, is left as it is) and the outcome is
    /// returned; after that, `None`: the switch is for the life of the
    /// connection. On an error the connection stays on its controller.
    pub fn begin(
        &mut self,
        spec: &CcSpec,
        conn: &mut quiche::Connection,
    ) -> Option<quiche::Result<()>> {
        if self.on {
            return None;
        }
        self.on = true;
        Some(match spec.plugin() {
            Some(_) => spec.switch(conn),
            None => Ok(()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(fields: &[(&str, &str)]) -> Vec<h3::Header> {
        fields
            .iter()
            .map(|(n, v)| h3::Header::new(n.as_bytes(), v.as_bytes()))
            .collect()
    }

    #[test]
    fn urgency_seven_is_background_and_a_deadline_counts_only_there() {
        let plain = Ask::of(&list(&[(":method", "GET")]));
        assert_eq!(
            plain,
            Ask {
                urgency: 3,
                incremental: false,
                deadline: None
            }
        );
        assert!(!plain.background());

        let bg = Ask::of(&list(&[("priority", "u=7, i"), ("lbe-deadline", "600000")]));
        assert!(bg.background());
        assert!(bg.incremental);
        assert_eq!(bg.deadline, Some(Ok(Duration::from_secs(600))));
        assert_eq!(bg.priority(), h3::Priority::new(7, true));

        let fg = Ask::of(&list(&[("priority", "u=6"), ("lbe-deadline", "600000")]));
        assert_eq!(
            fg.deadline,
            Some(Err("lbe-deadline on a foreground request".to_string()))
        );
        let bad = Ask::of(&list(&[("priority", "u=7"), ("lbe-deadline", "soon")]));
        assert!(matches!(bad.deadline, Some(Err(_))));
    }
}
