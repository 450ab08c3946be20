//! Every relative link in README.md and docs/**/*.md resolves: the file it
//! names exists (relative to the page), and an `#anchor` names a heading of
//! that page, by GitHub's anchor rules. Links with a scheme (`https:`,
//! `mailto:`) are not followed.
//!
//! GitHub's anchor for a heading: the heading's text (a link's text, not
//! its target; code spans' contents without the backticks), lower-cased;
//! every character that is not a letter, a digit, a space, `-` or `_`
//! removed; each space replaced by `-`; the second heading with the same
//! anchor gets `-1`, the third `-2`, and so on.

use std::collections::BTreeSet;
use std::path::Path;
use std::path::PathBuf;

/// The anchor GitHub gives a heading whose text (after the `#`s) is `text`.
fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in strip_links(text).chars() {
        if c == ' ' {
            out.push('-');
        } else if c.is_alphanumeric() || c == '-' || c == '_' {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// `[text](target)` → `text`, everywhere in `s`.
fn strip_links(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](").map(|i| open + i) else {
            break;
        };
        let Some(end) = rest[close..].find(')').map(|i| close + i) else {
            break;
        };
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..close]);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The page's lines outside fenced code blocks (fences themselves blank),
/// so neither headings nor links are read from code.
fn prose_lines(page: &str) -> Vec<&str> {
    let mut in_fence = false;
    page.lines()
        .map(|l| {
            if l.trim_start().starts_with("```") {
                in_fence = !in_fence;
                ""
            } else if in_fence {
                ""
            } else {
                l
            }
        })
        .collect()
}

/// Every anchor the page's ATX headings (`#` to `######`) define.
fn anchors(page: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for line in prose_lines(page) {
        let hashes = line.bytes().take_while(|&b| b == b'#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(line[hashes..].trim().trim_end_matches('#').trim());
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// `line` without its inline code spans (`` `...` ``, on one line).
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    for (i, part) in line.split('`').enumerate() {
        if i % 2 == 0 {
            out.push_str(part);
        }
    }
    out
}

/// The targets of the page's inline links and images, `[text](target)`
/// (a link's text may run over lines), with the 1-based line each is on.
fn link_targets(page: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in prose_lines(page).into_iter().enumerate() {
        let line = without_code_spans(line);
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            // `(target "title")`: the target is the first word.
            let target = after[..end].split_whitespace().next().unwrap_or("");
            out.push((i + 1, target.trim_matches(['<', '>']).to_string()));
            rest = &after[end + 1..];
        }
    }
    out
}

/// One line per broken link in `page` (a file under `root`), as
/// `PAGE:LINE: what is wrong`.
fn broken_links(root: &Path, page: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(page)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", page.display()));
    let name = page
        .strip_prefix(root)
        .unwrap_or(page)
        .display()
        .to_string();
    let mut broken = Vec::new();
    for (line, target) in link_targets(&text) {
        let has_scheme = target
            .split_once(':')
            .is_some_and(|(s, _)| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphabetic()));
        if has_scheme {
            continue;
        }
        let (file, anchor) = match target.split_once('#') {
            Some((f, a)) => (f, Some(a)),
            None => (target.as_str(), None),
        };
        let dest = if file.is_empty() {
            page.to_path_buf()
        } else {
            page.parent().unwrap().join(file)
        };
        if file.is_empty() && anchor.is_none() {
            broken.push(format!("{name}:{line}: empty link target"));
            continue;
        }
        if !dest.exists() {
            broken.push(format!("{name}:{line}: '{target}': no file {file}"));
            continue;
        }
        let Some(anchor) = anchor else { continue };
        if dest.is_dir() || dest.extension().is_none_or(|e| e != "md") {
            broken.push(format!(
                "{name}:{line}: '{target}': an anchor into a file that is not a Markdown page"
            ));
            continue;
        }
        let dest_text = std::fs::read_to_string(&dest).unwrap();
        if !anchors(&dest_text).contains(anchor) {
            broken.push(format!(
                "{name}:{line}: '{target}': no heading with anchor #{anchor} in {file_name}",
                file_name = if file.is_empty() { name.as_str() } else { file }
            ));
        }
    }
    broken
}

/// The Markdown files under `dir`, recursively, sorted.
fn markdown_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_link_in_the_readme_and_docs_resolves() {
    let root = root();
    let mut pages = vec![root.join("README.md")];
    pages.extend(markdown_under(&root.join("docs")));
    assert!(pages.len() >= 10, "found only {} pages", pages.len());
    let mut links = 0;
    let mut broken = Vec::new();
    for page in &pages {
        links += link_targets(&std::fs::read_to_string(page).unwrap()).len();
        broken.extend(broken_links(&root, page));
    }
    assert!(
        links >= 30,
        "found only {links} links in {} pages",
        pages.len()
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_checker_reports_each_kind_of_broken_link() {
    let dir = root().join("tests/data/doc-links");
    let broken = broken_links(&dir, &dir.join("page.md"));
    assert_eq!(
        broken,
        [
            "page.md:11: 'missing.md': no file missing.md",
            "page.md:12: 'other.md#no-such-heading': no heading with anchor #no-such-heading in other.md",
            "page.md:13: '#a-heading-that-is-not-here': no heading with anchor #a-heading-that-is-not-here in page.md",
            "page.md:14: 'sub/gone.md#x': no file sub/gone.md",
            "page.md:16: 'other.md#a-second-heading-2': no heading with anchor #a-second-heading-2 in other.md",
        ]
    );
}

#[test]
fn anchors_follow_githubs_rules() {
    assert_eq!(slug("LEDBAT++ profiles"), "ledbat-profiles");
    assert_eq!(
        slug("Controllers (`--cc NAME[:key=value,...]`)"),
        "controllers---cc-namekeyvalue"
    );
    assert_eq!(
        slug("The CDG upper end and quiche's CUBIC"),
        "the-cdg-upper-end-and-quiches-cubic"
    );
    assert_eq!(
        slug("Measured: receiver-driven LEDBAT++"),
        "measured-receiver-driven-ledbat"
    );
    assert_eq!(
        slug("See [the design](design.md) now"),
        "see-the-design-now"
    );
    assert_eq!(slug("snake_case Ünïcode 2"), "snake_case-ünïcode-2");
    let page = "# A\n## A\n```\n# not a heading\n```\n### A\n#not-a-heading\n";
    assert_eq!(
        anchors(page),
        ["a", "a-1", "a-2"].map(String::from).into_iter().collect()
    );
}
