//! A bulk flow's sender's qlog: the file's name, and the sink that hands
//! quiche's events to the flow's analysis as they happen.

use lbe_scenario::Direction;
use qlog_analysis::flow::FlowAnalyzer;

/// A flow's qlog file name (its sender's), as our apps name theirs
/// (`lbe_cc::qlog_name`).
pub(super) fn qlog_file_name(flow: &lbe_scenario::Flow, index: usize) -> String {
    use quiche_lbe::lbe_cc::qlog_name;
    qlog_name::file_name(
        &flow.name,
        match flow.direction {
            Direction::Download => qlog_name::Role::Server,
            Direction::Upload => qlog_name::Role::Client,
        },
        &qlog_name::cc_tag(flow.sender_cc().as_str()),
        &(index as u64).to_be_bytes(),
    )
}

/// A flow's analysis, shared with the event sink quiche holds: the
/// analyzer, or the first error an event gave it.
pub(super) type SharedAnalysis = std::sync::Arc<std::sync::Mutex<Result<FlowAnalyzer, String>>>;

/// The sink handed to quiche: the events the qlog reader would decode go
/// to the analyzer; after an error the rest are ignored.
pub(super) fn analysis_sink(analysis: &SharedAnalysis) -> quiche::QlogEventSink {
    let analysis = analysis.clone();
    Box::new(move |time_ms, data| {
        if !qlog_analysis::reader::is_decoded(data) {
            return;
        }
        let mut state = analysis.lock().unwrap_or_else(|e| e.into_inner());
        if let Ok(analyzer) = &mut *state {
            if let Err(e) = analyzer.record(time_ms, data) {
                *state = Err(format!("a qlog event at {time_ms} ms: {e}"));
            }
        }
    })
}
