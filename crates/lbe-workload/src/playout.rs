//! A video flow's playout buffer: "a stream of fixed-duration chunks
//! (`chunk = "2s"`) at a constant `bitrate` into a playout buffer that
//! starts playing after `startup = "2s"` of video; a chunk is requested
//! when the buffer holds less than `buffer = "10s"`." Figures: `stalls`,
//! `stall_s` (total), `startup_s`.
//!
//! Where the issue is silent:
//! - one chunk is in flight at a time (a DASH player's sequential
//!   requests); the next is due the moment the buffer drops below
//!   `buffer`, or at once if it already holds less;
//! - after a stall, play resumes as at the start, once the buffer holds
//!   `startup` of video again;
//! - a stall still going on at the end counts, up to the end;
//! - `startup_s` runs from the first request to the start of play
//!   (`None`: play never started; that wait is not a stall).
//!
//! Times are scenario time, exact (`Duration`); the model never reads a
//! clock: its driver tells it when requests went out and chunks arrived.

use std::time::Duration;

use serde::Serialize;

/// A video flow's settings (the scenario's `chunk`, `startup`, `buffer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlayoutParams {
    pub chunk: Duration,
    pub startup: Duration,
    pub buffer: Duration,
}

/// `summary.json`'s figures of a video flow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VideoFigures {
    /// Times play stopped for an empty buffer.
    pub stalls: u32,
    /// Their total length, seconds.
    pub stall_s: f64,
    /// From the first request to the start of play, seconds; `None` if
    /// play never started.
    pub startup_s: Option<f64>,
    /// Chunks that arrived.
    pub chunks: u32,
}

/// The buffer of one video stream.
#[derive(Clone, Debug)]
pub struct Playout {
    params: PlayoutParams,
    began: Duration,
    /// Video buffered at `last`.
    level: Duration,
    last: Duration,
    playing: bool,
    outstanding: bool,
    started_playing: Option<Duration>,
    stalls: u32,
    stalled: Duration,
    stall_since: Option<Duration>,
    chunks: u32,
}

impl Playout {
    /// A stream that begins (requests its first chunk) at `now`.
    ///
    /// # Panics
    /// If `startup` exceeds `buffer` (play could never start: the scenario
    /// refuses it) or `chunk` is zero.
    pub fn new(params: PlayoutParams, now: Duration) -> Self {
        assert!(params.startup <= params.buffer && !params.chunk.is_zero());
        Playout {
            params,
            began: now,
            level: Duration::ZERO,
            last: now,
            playing: false,
            outstanding: false,
            started_playing: None,
            stalls: 0,
            stalled: Duration::ZERO,
            stall_since: None,
            chunks: 0,
        }
    }

    /// When the next chunk is due: `None` while one is in flight; the
    /// moment the buffer drops below `buffer` (or the last event, if it
    /// already holds less).
    pub fn next_request_at(&self) -> Option<Duration> {
        if self.outstanding {
            return None;
        }
        if self.level < self.params.buffer {
            return Some(self.last);
        }
        // Holding `buffer` or more, play drains it (startup ≤ buffer).
        Some(self.last + (self.level - self.params.buffer))
    }

    /// Video buffered at `now` (not before the last event).
    pub fn level_at(&self, now: Duration) -> Duration {
        if self.playing {
            self.level.saturating_sub(now.saturating_sub(self.last))
        } else {
            self.level
        }
    }

    /// A chunk was requested at `now`.
    pub fn requested(&mut self, now: Duration) {
        self.advance(now);
        self.outstanding = true;
    }

    /// The chunk in flight arrived whole at `now`.
    pub fn arrived(&mut self, now: Duration) {
        self.advance(now);
        self.outstanding = false;
        self.chunks += 1;
        self.level += self.params.chunk;
        if !self.playing && self.level >= self.params.startup {
            self.playing = true;
            if self.started_playing.is_none() {
                self.started_playing = Some(self.last);
            }
            if let Some(since) = self.stall_since.take() {
                self.stalled += self.last - since;
            }
        }
    }

    /// The chunk in flight failed at `now` (its connection broke): it is
    /// due again at once, the buffer draining meanwhile.
    pub fn failed(&mut self, now: Duration) {
        self.advance(now);
        self.outstanding = false;
    }

    /// The figures at the end of the stream, `now`.
    /// (An event after `now` moves the end to it: time never runs back.)
    pub fn finish(mut self, now: Duration) -> VideoFigures {
        self.advance(now);
        if let Some(since) = self.stall_since.take() {
            self.stalled += self.last - since;
        }
        VideoFigures {
            stalls: self.stalls,
            stall_s: self.stalled.as_secs_f64(),
            startup_s: self.started_playing.map(|t| (t - self.began).as_secs_f64()),
            chunks: self.chunks,
        }
    }

    /// Plays from `last` to `now`; a buffer that runs dry stalls at the
    /// moment it does.
    fn advance(&mut self, now: Duration) {
        let now = now.max(self.last);
        if self.playing {
            let played = now - self.last;
            if played <= self.level {
                self.level -= played;
            } else {
                self.stalls += 1;
                self.stall_since = Some(self.last + self.level);
                self.level = Duration::ZERO;
                self.playing = false;
            }
        }
        self.last = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    const PARAMS: PlayoutParams = PlayoutParams {
        chunk: Duration::from_secs(2),
        startup: Duration::from_secs(2),
        buffer: Duration::from_secs(6),
    };

    /// Requests each chunk when due and delivers it after the given
    /// download time; returns the request times.
    fn drive(p: &mut Playout, downloads_ms: &[u64]) -> Vec<Duration> {
        let mut requests = Vec::new();
        for d in downloads_ms {
            let at = p.next_request_at().unwrap();
            requests.push(at);
            p.requested(at);
            assert_eq!(p.next_request_at(), None, "one chunk in flight");
            p.arrived(at + ms(*d));
        }
        requests
    }

    /// The example worked by hand below: six chunks from time zero, the
    /// third slow (3.5 s); the playout and the requests' times.
    fn worked_example() -> (Playout, Vec<Duration>) {
        let mut p = Playout::new(PARAMS, Duration::ZERO);
        let requests = drive(&mut p, &[1000, 1000, 3500, 500, 500, 500]);
        (p, requests)
    }

    /// The figures of the worked example: its two stalls and 1 s startup,
    /// `stall_s` stalled in all, `chunks` chunks played.
    fn worked_figures(stall_s: f64, chunks: u32) -> VideoFigures {
        VideoFigures {
            stalls: 2,
            stall_s,
            startup_s: Some(1.0),
            chunks,
        }
    }

    /// Worked by hand: first chunk 0→1 s (play from 1 s, 2 s buffered);
    /// 1→2 s (1 + 2 = 3 s); 2→5.5 s: the buffer runs dry at 5.0 s, stall
    /// 1 until 5.5 s (0.5 s); 5.5→6.0 (1.5 + 2 = 3.5); 6.0→6.5 (3 + 2 =
    /// 5); 6.5→7.0 (4.5 + 2 = 6.5 s, not below 6 s); the next is due when
    /// it drops to 6 s, at 7.5 s, and takes until 20 s: dry at 13.5 s,
    /// stall 2 of 6.5 s. At 21 s: 2 stalls, 7 s stalled, startup 1 s.
    #[test]
    fn stalls_are_counted_from_the_moment_the_buffer_runs_dry() {
        let (mut p, requests) = worked_example();
        assert_eq!(requests, [0, 1000, 2000, 5500, 6000, 6500].map(ms).to_vec());
        assert_eq!(p.level_at(ms(7000)), ms(6500));
        assert_eq!(p.next_request_at(), Some(ms(7500)));
        p.requested(ms(7500));
        assert_eq!(p.level_at(ms(13_500)), Duration::ZERO);
        p.arrived(ms(20_000));
        assert_eq!(p.finish(ms(21_000)), worked_figures(7.0, 7));
    }

    #[test]
    fn a_stall_still_going_at_the_end_counts_up_to_the_end() {
        let (mut p, _) = worked_example();
        p.requested(ms(7500));
        // Dry at 13.5 s; the stream ends at 15 s with the chunk in flight.
        assert_eq!(p.finish(ms(15_000)), worked_figures(2.0, 6));
    }

    #[test]
    fn a_fast_link_never_stalls_and_keeps_the_buffer_full() {
        let mut p = Playout::new(PARAMS, ms(3000));
        // 100 ms per chunk: 4 chunks fill it to 7.7 s at 3.4 s; the next
        // is asked for when it drops to 6 s (5.1 s) and brings it to 7.9 s
        // at 5.2 s; the next at 7.1 s, and so on every 2 s.
        let requests = drive(&mut p, &[100; 10]);
        assert_eq!(
            requests[..7],
            [3000, 3100, 3200, 3300, 5100, 7100, 9100].map(ms)
        );
        // The 10th at 15.1 s brings it to 7.9 s: 3.1 s left at 20 s.
        assert_eq!(p.level_at(ms(20_000)), ms(3100));
        let f = p.finish(ms(20_000));
        assert_eq!((f.stalls, f.stall_s, f.startup_s), (0, 0.0, Some(0.1)));
    }

    #[test]
    fn a_failed_chunk_is_due_again_at_once() {
        let mut p = Playout::new(PARAMS, Duration::ZERO);
        drive(&mut p, &[1000]);
        p.requested(ms(1000));
        p.failed(ms(1500));
        assert_eq!(p.next_request_at(), Some(ms(1500)));
        assert_eq!(p.level_at(ms(1500)), ms(1500));
        p.requested(ms(1500));
        p.arrived(ms(3500));
        // Dry at 3 s, 0.5 s stalled.
        let f = p.finish(ms(3500));
        assert_eq!((f.stalls, f.stall_s, f.chunks), (1, 0.5, 2));
    }

    #[test]
    fn time_never_runs_back() {
        let mut p = Playout::new(PARAMS, Duration::ZERO);
        drive(&mut p, &[1000]);
        p.requested(ms(1000));
        // Dry at 3 s; the stream's end is given as 2.5 s after a later
        // event at 4 s: the end is 4 s, 1 s stalled.
        p.requested(ms(4000));
        let f = p.finish(ms(2500));
        assert_eq!((f.stalls, f.stall_s), (1, 1.0));
    }

    #[test]
    fn play_that_never_starts_has_no_startup_and_no_stall() {
        let p = Playout::new(PARAMS, ms(500));
        assert_eq!(p.next_request_at(), Some(ms(500)));
        assert_eq!(
            p.finish(ms(9000)),
            VideoFigures {
                stalls: 0,
                stall_s: 0.0,
                startup_s: None,
                chunks: 0,
            }
        );
    }

    #[test]
    fn after_a_stall_play_resumes_once_startup_is_buffered_again() {
        let params = PlayoutParams {
            chunk: Duration::from_secs(1),
            startup: Duration::from_secs(2),
            buffer: Duration::from_secs(4),
        };
        let mut p = Playout::new(params, Duration::ZERO);
        // 1 s of video at 0.5 s: not enough to start; 2 s at 1 s: play.
        drive(&mut p, &[500, 500]);
        // Then 3 s per chunk: dry at 3 s; 1 s buffered at 4 s is not
        // enough; 2 s at 7 s resumes (stall 3..7 = 4 s).
        drive(&mut p, &[3000, 3000]);
        let f = p.finish(ms(7000));
        assert_eq!((f.stalls, f.stall_s, f.startup_s), (1, 4.0, Some(1.0)));
    }
}
