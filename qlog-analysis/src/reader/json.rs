//! The plain JSON serialisation (`{"traces": [{..., "events": [...]}]}`),
//! streamed with one serde visitor that walks the four levels (file, traces,
//! trace, events) and hands each event's text to the [`Reader`], never
//! holding more than one event (and at most [`MAX_RECORD_BYTES`]).

use std::fmt;
use std::io::BufRead;
use std::rc::Rc;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::framing::{count_newlines, Budget, CountingReader, MAX_RECORD_BYTES};
use super::{header, json_message, Reader, Step};
use crate::error::{Error, Result};

struct State {
    /// An error of ours that aborted the serde walk.
    failure: Option<Error>,
    in_events: bool,
    saw_traces: bool,
    /// Line where the value being read started (for a too-long one).
    record_line: u64,
}

/// Read a JSON qlog from `input`, positioned at its `{`; `blank_lines` were
/// skipped before it.
pub fn read<R: BufRead>(reader: &mut Reader<'_>, input: &mut R, blank_lines: u64) -> Result<()> {
    let budget = Rc::new(Budget::default());
    budget.newlines.set(blank_lines);
    budget.renew();
    let mut state = State {
        failure: None,
        in_events: false,
        saw_traces: false,
        record_line: blank_lines + 1,
    };
    let result = {
        let input = CountingReader {
            inner: input,
            budget: budget.clone(),
        };
        let mut de = serde_json::Deserializer::from_reader(input);
        let r = Walk {
            reader: &mut *reader,
            state: &mut state,
            budget: &budget,
            level: Level::File,
        }
        .deserialize(&mut de);
        r.and_then(|_| de.end())
    };
    reader.bytes += budget.bytes.get();
    if let Some(failure) = state.failure.take() {
        return Err(failure);
    }
    match result {
        Ok(()) => {}
        Err(_) if budget.exceeded() => {
            return Err(Error::malformed(
                reader.path,
                state.record_line,
                format!(
                    "a JSON value longer than {} MiB (the most one qlog record may take) starts here; stopped reading",
                    MAX_RECORD_BYTES >> 20
                ),
            ));
        }
        Err(e) if e.is_io() => {
            return Err(Error::Read {
                path: reader.path.to_path_buf(),
                source: std::io::Error::other(e),
            });
        }
        Err(e) if reader.usable() => {
            let line = (e.line() as u64).max(1);
            let what = if e.is_eof() && state.in_events {
                "file ends inside the events array (the run was probably killed); kept the events before".to_string()
            } else {
                format!(
                    "not valid JSON from here ({}); kept the events before",
                    json_message(&e)
                )
            };
            reader.warn(Some(line), what);
        }
        Err(e) => {
            let what = if e.is_eof() {
                "file ends before the JSON document does (truncated?)".to_string()
            } else {
                format!("not a valid qlog JSON file: {}", json_message(&e))
            };
            return Err(Error::malformed(
                reader.path,
                (e.line() as u64).max(1),
                what,
            ));
        }
    }
    if !state.saw_traces {
        return Err(Error::malformed(
            reader.path,
            blank_lines + 1,
            "not a qlog file: the JSON object has no \"traces\" array",
        ));
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Level {
    File,
    Traces,
    Trace,
    Events,
}

struct Walk<'a, 'r, 's> {
    reader: &'a mut Reader<'s>,
    state: &'a mut State,
    budget: &'r Rc<Budget>,
    level: Level,
}

impl<'s> Walk<'_, '_, 's> {
    fn down(&mut self, level: Level) -> Walk<'_, '_, 's> {
        Walk {
            reader: &mut *self.reader,
            state: &mut *self.state,
            budget: self.budget,
            level,
        }
    }

    fn fail<E: de::Error>(&mut self, e: Error) -> E {
        self.state.failure = Some(e);
        E::custom("aborted")
    }

    fn renew(&mut self) {
        self.budget.renew();
        self.state.record_line = self.budget.newlines.get() + 1;
    }

    /// A trace object: header fields, then (streamed) events.
    fn trace<'de, A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let line = self.budget.newlines.get() + 1;
        let index = self.reader.headers.len();
        let mut fields = Map::new();
        let mut announced = false;
        while let Some(key) = map.next_key::<String>()? {
            if key == "events" {
                if announced {
                    let e =
                        Error::malformed(self.reader.path, line, "trace has two \"events\" arrays");
                    return Err(self.fail(e));
                }
                // The header is what came before the events (quiche's field
                // order); fields after them are merged in at the end.
                self.reader
                    .begin_trace(header::parse(&fields, None, index, line));
                announced = true;
                self.state.in_events = true;
                map.next_value_seed(self.down(Level::Events))?;
                self.state.in_events = false;
            } else if matches!(
                key.as_str(),
                "title"
                    | "description"
                    | "vantage_point"
                    | "common_fields"
                    | "configuration"
                    | "time_format"
            ) {
                let v: Value = map.next_value()?;
                fields.insert(key, v);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
            self.renew();
        }
        let full = header::parse(&fields, None, index, line);
        if announced {
            self.reader.complete_trace(full);
        } else {
            self.reader.begin_trace(full);
        }
        Ok(())
    }

    fn events<'de, A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        loop {
            self.renew();
            let Some(raw) = seq.next_element::<Box<RawValue>>()? else {
                return Ok(());
            };
            let text = raw.get();
            // The reader stops right after the value, so the current line is
            // the event's last line.
            let line = self.budget.newlines.get() + 1 - count_newlines(text.as_bytes());
            match self.reader.event_text(text.as_bytes(), line, false) {
                Ok(Step::Continue) => {}
                Ok(Step::Stop) => {
                    // Headers only: the rest of this trace's events unread.
                    loop {
                        self.renew();
                        if seq.next_element::<IgnoredAny>()?.is_none() {
                            return Ok(());
                        }
                    }
                }
                Err(e) => return Err(self.fail(e)),
            }
        }
    }
}

impl<'de> DeserializeSeed<'de> for Walk<'_, '_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        match self.level {
            Level::File | Level::Trace => d.deserialize_map(self),
            Level::Traces | Level::Events => d.deserialize_seq(self),
        }
    }
}

impl<'de> Visitor<'de> for Walk<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self.level {
            Level::File => "a qlog JSON object",
            Level::Traces => "an array of traces",
            Level::Trace => "a trace object",
            Level::Events => "an array of events",
        })
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        if let Level::Trace = self.level {
            return self.trace(map);
        }
        while let Some(key) = map.next_key::<String>()? {
            if key == "traces" {
                self.state.saw_traces = true;
                map.next_value_seed(self.down(Level::Traces))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
            self.renew();
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        if let Level::Events = self.level {
            return self.events(seq);
        }
        loop {
            self.renew();
            if seq.next_element_seed(self.down(Level::Trace))?.is_none() {
                return Ok(());
            }
        }
    }
}
