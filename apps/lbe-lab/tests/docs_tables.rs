//! The tables in docs/ are what their data in docs/data/ gives
//! (`lbe-lab docs-tables --check`; `make docs-tables` regenerates them),
//! and the check fails when one number in one table is edited.

use std::path::Path;
use std::path::PathBuf;

use lbe_lab::docs_tables::process;
use lbe_test_support::Scratch;

fn repo_docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs")
}

/// A copy of `from` (its pages and docs/data/) in `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

/// The repository's docs/ copied into a scratch directory.
fn docs_copy(name: &str) -> (Scratch, PathBuf) {
    let scratch = Scratch::new(name);
    let docs = scratch.join("docs");
    copy_dir(&repo_docs(), &docs);
    (scratch, docs)
}

#[test]
fn every_table_in_docs_is_what_its_data_gives() {
    let report = process(&repo_docs(), true).unwrap();
    assert_eq!(report.errors, Vec::<String>::new());
    assert_eq!(
        report.differs,
        Vec::<String>::new(),
        "regenerate them: make docs-tables"
    );
    assert!(report.tables >= 2, "{report:?}");
}

/// The first data row of the first marked table in `page`: its line index
/// and text.
fn first_row(page: &str) -> (usize, String) {
    let lines: Vec<&str> = page.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("<!-- table: "))
        .expect("a marked table");
    // The marker, the heading row, the |---| row, then the first row.
    (start + 3, lines[start + 3].to_string())
}

#[test]
fn one_edited_number_fails_the_check_and_regenerating_restores_it() {
    let (_scratch, docs) = docs_copy("docs-tables-edit");
    let page = docs.join("seeds/ledbat-optimal-parameters.md");
    let original = std::fs::read_to_string(&page).unwrap();
    let (i, row) = first_row(&original);
    // The row's last digit, one more (mod 10): one number edited.
    let at = row.rfind(|c: char| c.is_ascii_digit()).unwrap();
    let digit = row.as_bytes()[at] - b'0';
    let edited_row = format!("{}{}{}", &row[..at], (digit + 1) % 10, &row[at + 1..]);
    let mut lines: Vec<&str> = original.lines().collect();
    lines[i] = &edited_row;
    std::fs::write(&page, lines.join("\n") + "\n").unwrap();

    let report = process(&docs, true).unwrap();
    assert_eq!(report.errors, Vec::<String>::new());
    assert_eq!(
        report.differs,
        [format!(
            "{}:{}: table seed004-table1 differs from docs/data/seed004-table1.csv: the page has `{edited_row}`, the data gives `{row}`",
            page.display(),
            i + 1
        )]
    );
    assert_eq!(report.rewritten, Vec::<PathBuf>::new());

    // The command exits 1 with that line.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lbe-lab"))
        .args(["docs-tables", "--check", "--docs"])
        .arg(&docs)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("docs-tables: {}", report.differs[0])),
        "{stderr}"
    );

    // Without --check the table is regenerated, the page as it was.
    let report = process(&docs, false).unwrap();
    assert_eq!(report.rewritten, std::slice::from_ref(&page));
    assert_eq!(std::fs::read_to_string(&page).unwrap(), original);
    assert_eq!(process(&docs, true).unwrap().differs, Vec::<String>::new());
}

#[test]
fn a_marker_without_data_or_with_an_unknown_column_names_page_and_line() {
    let (_scratch, docs) = docs_copy("docs-tables-errors");
    let page = docs.join("extra.md");
    std::fs::write(
        &page,
        "# Extra\n\ntext\n<!-- table: no-such-table -->\n<!-- /table -->\n",
    )
    .unwrap();
    let spec = docs.join("data/seed002-cdg-alone.toml");
    let text = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(&spec, text.replace("{utilization_of_max}", "{utilization}")).unwrap();
    let report = process(&docs, true).unwrap();
    let cdg_page = docs.join("seeds/cdg-deadline-aware-lbe.md");
    let cdg_line = std::fs::read_to_string(&cdg_page)
        .unwrap()
        .lines()
        .position(|l| l == "<!-- table: seed002-cdg-alone -->")
        .unwrap()
        + 1;
    assert_eq!(
        report.errors,
        [
            format!(
                "{}:4: table no-such-table: cannot read {}: No such file or directory (os error 2)",
                page.display(),
                docs.join("data/no-such-table.toml").display()
            ),
            format!(
                "{}:{cdg_line}: table seed002-cdg-alone: unknown column 'utilization' (docs/data/seed002-cdg-alone.csv has flow1.cc, seed, utilization_of_max, runs)",
                cdg_page.display()
            ),
        ]
    );
    // The command exits 1 and changes nothing.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lbe-lab"))
        .args(["docs-tables", "--docs"])
        .arg(&docs)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(&cdg_page).unwrap(),
        std::fs::read_to_string(repo_docs().join("seeds/cdg-deadline-aware-lbe.md")).unwrap()
    );
}

/// `lbe-lab` at `args`: its exit status, stdout and stderr.
fn lab(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lbe-lab"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn docs_data_of_a_lab_table_simulates_its_scenarios_and_writes_the_comparison() {
    let scratch = Scratch::new("docs-data-lab");
    let (docs, scenarios) = (scratch.join("docs"), scratch.join("scenarios"));
    std::fs::create_dir_all(docs.join("data")).unwrap();
    std::fs::create_dir_all(&scenarios).unwrap();
    std::fs::write(
        scenarios.join("short.toml"),
        "[link]\nrate = \"5mbit\"\nrtt = \"20ms\"\nbuffer = \"50ms\"\n[analysis]\nfrom = \"1s\"\nto = \"3s\"\n[[flow]]\ncc = \"cubic\"\nstop = \"3s\"\n",
    )
    .unwrap();
    std::fs::write(
        docs.join("data/t.lab.toml"),
        "[[scenario]]\nfile = \"short.toml\"\nutilization = 0.5\nqueue_ms = [20.0]\n",
    )
    .unwrap();
    std::fs::write(
        docs.join("data/t.toml"),
        "lab = \"docs/data/t.lab.toml\"\n[[column]]\nheading = \"scenario\"\nvalue = \"{scenario}\"\n[[column]]\nheading = \"u\"\nvalue = \"{lab.utilization} / {sim.utilization}\"\ndecimals = 1\n[[column]]\nheading = \"ok\"\nvalue = \"{verdict}\"\n",
    )
    .unwrap();
    std::fs::write(
        docs.join("p.md"),
        "# P\n\n<!-- table: t -->\n<!-- /table -->\n",
    )
    .unwrap();
    let d = docs.to_str().unwrap();
    // `lbe-lab docs-data ARGS` on the scratch docs/.
    let docs_data = |args: &[&str]| {
        let at = ["--docs", d, "--commit", "abc", "--date", "2026-11-29"];
        lab(&[&["docs-data"][..], args, &at].concat())
    };
    let (ok, _, err) = docs_data(&["t", "some-results"]);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "lbe-lab: error: table t compares the lab's figures (docs/data/t.lab.toml) with the simulator's: it takes no results directory"
    );
    let (ok, out, err) = docs_data(&["t", "--jobs", "2"]);
    assert!(ok, "{err}");
    assert!(out.contains("wrote"), "{out}");
    let csv = std::fs::read_to_string(docs.join("data/t.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("scenario,lab.utilization,sim.utilization,lab.jain,sim.jain,lab.queue1,sim.queue1,verdict")
    );
    // A CUBIC flow fills 5 Mbit/s: far from the recorded 0.5, so the
    // verdict names the utilisation (and the queue if it is off too).
    let row = lines.next().unwrap();
    assert!(row.starts_with("short,0.5,0.9"), "{row}");
    assert!(row.contains(",**no**: utilization 0.500 vs 0.9"), "{row}");
    let measured = std::fs::read_to_string(docs.join("data/t.measured.toml")).unwrap();
    assert!(
        measured.contains("mode = \"sim\"") && measured.contains("runs = 3"),
        "{measured}"
    );
    let (ok, _, err) = lab(&["docs-tables", "--docs", d]);
    assert!(ok, "{err}");
    let page = std::fs::read_to_string(docs.join("p.md")).unwrap();
    assert!(
        page.contains("| short | 0.5 / 0.9 | **no**: utilization 0.500 vs 0.9"),
        "{page}"
    );
    assert!(
        page.contains(
            "the lab's figures (`docs/data/t.lab.toml`, real-time runs through lbe-netem"
        ),
        "{page}"
    );
    // --jobs belongs to a lab table only.
    std::fs::write(
        docs.join("data/s.toml"),
        "sweeps = [\"sweeps/x.toml\"]\n[[column]]\nheading = \"x\"\nvalue = \"{x}\"\n",
    )
    .unwrap();
    let (ok, _, err) = docs_data(&["s", "r", "--jobs", "2"]);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "lbe-lab: error: --jobs is for a table of the lab's figures; table s's sweeps ran already"
    );
}
