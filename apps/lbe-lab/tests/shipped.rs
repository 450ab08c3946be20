//! Every scenario file the repository ships is valid.

use std::path::Path;
use std::path::PathBuf;

fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            toml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "toml") {
            out.push(path);
        }
    }
}

#[test]
fn shipped_scenarios_parse() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files = Vec::new();
    toml_files(&dir, &mut files);
    assert!(
        files.len() >= 18,
        "found only {} scenario files in {}",
        files.len(),
        dir.display()
    );
    for file in files {
        let scenario = lbe_lab::scenario::load(&file).unwrap_or_else(|e| panic!("{e}"));
        assert!(!scenario.flows.is_empty());
        assert!(
            scenario.window.is_some(),
            "{}: no [analysis] window",
            file.display()
        );
    }
}
