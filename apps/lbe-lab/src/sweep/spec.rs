//! What a sweep file declares and its `results.json` repeats: the swept
//! axes and the `[[figure]]`s.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::Serialize;

/// One swept key and its values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    pub name: String,
    /// As written in the file (`"10ms"`, `0.01`, `3`).
    pub values: Vec<String>,
}

/// A `[[figure]]` of a sweep file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureSpec {
    pub name: String,
    pub x: String,
    pub y: String,
    #[serde(default)]
    pub series: Option<Vec<String>>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub log_x: bool,
    #[serde(default)]
    pub reference: Option<Vec<(f64, f64)>>,
    #[serde(default)]
    pub reference_label: Option<String>,
    /// Only the runs whose axes have these values (`where = { "link.buffer" = "500ms" }`).
    #[serde(default, rename = "where")]
    pub filter: Option<BTreeMap<String, String>>,
}
