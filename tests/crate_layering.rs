//! The workspace's layering and layout: the libraries outside `apps/` (the
//! controllers, the plug-in bridge, the link and scenario models under
//! `crates/`, the simulator, the analysis) never depend on a crate inside
//! `apps/` (the tools: sockets, CLIs, servers). Read from `cargo metadata`,
//! so a new dependency that runs back up fails here, naming the edge. The
//! top level holds the design card's entries only (README's "Layout"), and
//! every library below the tools lives in `crates/NAME`, named after its
//! package.
//!
//! What counts: a package outside `apps/` with a library target, and its
//! normal and build dependencies. Dev-dependencies are its tests' (the
//! root crate's end-to-end tests run the apps), and a package without a
//! library (`lbe-fuzz`, a tool that fuzzes the apps' parsers) is a tool
//! itself.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Every edge from a library outside `apps/` to a crate inside it, as
/// `"PACKAGE -> DEPENDENCY (apps/DIR)"`, from `cargo metadata
/// --format-version 1 --no-deps` output.
fn edges_into_apps(metadata: &Value) -> Vec<String> {
    let root = Path::new(metadata["workspace_root"].as_str().expect("workspace_root"));
    let apps = root.join("apps");
    let dir_of = |manifest: &str| Path::new(manifest).parent().map(Path::to_path_buf);
    let mut edges = Vec::new();
    for package in metadata["packages"].as_array().expect("packages") {
        let name = package["name"].as_str().unwrap_or("?");
        let Some(dir) = package["manifest_path"].as_str().and_then(dir_of) else {
            continue;
        };
        let is_library = package["targets"].as_array().is_some_and(|targets| {
            targets.iter().any(|t| {
                t["kind"]
                    .as_array()
                    .is_some_and(|k| k.iter().any(|k| k == "lib"))
            })
        });
        if dir.starts_with(&apps) || !is_library {
            continue;
        }
        for dep in package["dependencies"].as_array().into_iter().flatten() {
            if dep["kind"].as_str() == Some("dev") {
                continue;
            }
            let Some(path) = dep["path"].as_str().map(Path::new) else {
                continue;
            };
            if path.starts_with(&apps) {
                edges.push(format!(
                    "{name} -> {} ({})",
                    dep["name"].as_str().unwrap_or("?"),
                    path.strip_prefix(root).unwrap_or(path).display()
                ));
            }
        }
    }
    edges
}

#[test]
fn no_library_outside_apps_depends_on_a_crate_inside_it() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .arg("--manifest-path")
        .arg(&manifest)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON");
    // The check sees the workspace: the libraries it guards are there.
    let names: Vec<&str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    for expected in ["lbe-link", "lbe-sim", "lbe-netem"] {
        assert!(names.contains(&expected), "{expected} not in {names:?}");
    }
    assert_eq!(
        edges_into_apps(&metadata),
        Vec::<String>::new(),
        "libraries outside apps/ depending on crates inside it"
    );
    assert_eq!(
        misplaced_packages(&metadata),
        Vec::<String>::new(),
        "packages outside the layout of README's \"Layout\""
    );
}

/// The entries the top level may hold: the design card's (`Cargo.toml`,
/// `src`, `cc`, `apps`, `qlog-analysis`, `tests`), the folders beside them,
/// and the usual files.
const ROOT_ENTRIES: &[&str] = &[
    "Cargo.toml",
    "Cargo.lock",
    "src",
    "cc",
    "apps",
    "qlog-analysis",
    "tests",
    "crates",
    "fuzz",
    "docs",
    "patches",
    "scenarios",
    "sweeps",
    "scripts",
    "examples",
    "README.md",
    "Makefile",
    "LICENSE",
    ".ci",
    ".cargo",
    ".git",
    ".gitignore",
];

/// Every workspace package that sits where the layout does not put it, as
/// `"PACKAGE (DIR)"`: the root package, `cc/` (lbe-cc) and `qlog-analysis/`
/// at the top, the tools in `apps/NAME`, the fuzzer in `fuzz/`, examples in
/// `examples/NAME`, every other library in `crates/NAME`; below the top,
/// a package's folder is named after it.
fn misplaced_packages(metadata: &Value) -> Vec<String> {
    let root = Path::new(metadata["workspace_root"].as_str().expect("workspace_root"));
    let mut misplaced = Vec::new();
    for package in metadata["packages"].as_array().expect("packages") {
        let name = package["name"].as_str().unwrap_or("?");
        let Some(dir) = package["manifest_path"]
            .as_str()
            .and_then(|m| Path::new(m).parent())
        else {
            continue;
        };
        let relative = dir.strip_prefix(root).unwrap_or(dir);
        let parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        let placed = match parts.as_slice() {
            [] => true,
            ["cc"] => name == "lbe-cc",
            ["qlog-analysis"] | ["fuzz"] => true,
            ["apps" | "crates" | "examples", folder] => *folder == name,
            _ => false,
        };
        if !placed {
            misplaced.push(format!("{name} ({})", relative.display()));
        }
    }
    misplaced
}

#[test]
fn the_top_level_holds_the_layouts_entries_only() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // What .gitignore keeps out of the repository at the top (build and
    // run output) is not part of the layout.
    let ignored: Vec<String> = std::fs::read_to_string(root.join(".gitignore"))
        .expect(".gitignore")
        .lines()
        .filter_map(|line| line.trim().strip_prefix('/'))
        .map(|entry| entry.trim_end_matches('/').to_string())
        .collect();
    let mut unexpected: Vec<String> = std::fs::read_dir(root)
        .expect("the workspace root")
        .map(|entry| {
            entry
                .expect("a root entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| !ROOT_ENTRIES.contains(&name.as_str()) && !ignored.contains(name))
        .collect();
    unexpected.sort();
    assert_eq!(
        unexpected,
        Vec::<String>::new(),
        "top-level entries outside the layout (libraries go under crates/)"
    );
}

#[test]
fn a_package_out_of_place_is_named() {
    let metadata = serde_json::json!({
        "workspace_root": "/ws",
        "packages": [
            {"name": "root", "manifest_path": "/ws/Cargo.toml"},
            {"name": "lbe-cc", "manifest_path": "/ws/cc/Cargo.toml"},
            {"name": "lbe-link", "manifest_path": "/ws/crates/lbe-link/Cargo.toml"},
            {"name": "lbe-lab", "manifest_path": "/ws/apps/lbe-lab/Cargo.toml"},
            {"name": "lbe-units", "manifest_path": "/ws/lbe-units/Cargo.toml"},
            {"name": "lbe-sim", "manifest_path": "/ws/crates/sim/Cargo.toml"},
            {"name": "lbe-cc-two", "manifest_path": "/ws/cc/two/Cargo.toml"}
        ]
    });
    assert_eq!(
        misplaced_packages(&metadata),
        vec![
            "lbe-units (lbe-units)".to_string(),
            "lbe-sim (crates/sim)".to_string(),
            "lbe-cc-two (cc/two)".to_string(),
        ]
    );
}

#[test]
fn an_edge_into_apps_is_named_and_dev_and_tool_edges_are_not() {
    let metadata = serde_json::json!({
        "workspace_root": "/ws",
        "packages": [
            {
                "name": "lib-a",
                "manifest_path": "/ws/lib-a/Cargo.toml",
                "targets": [{"kind": ["lib"]}],
                "dependencies": [
                    {"name": "tool-x", "kind": null, "path": "/ws/apps/tool-x"},
                    {"name": "tool-y", "kind": "dev", "path": "/ws/apps/tool-y"},
                    {"name": "lib-b", "kind": null, "path": "/ws/lib-b"},
                    {"name": "serde", "kind": null},
                    {"name": "tool-z", "kind": "build", "path": "/ws/apps/tool-z"}
                ]
            },
            {
                "name": "lib-c",
                "manifest_path": "/ws/crates/lib-c/Cargo.toml",
                "targets": [{"kind": ["lib"]}],
                "dependencies": [{"name": "tool-y", "kind": null, "path": "/ws/apps/tool-y"}]
            },
            {
                "name": "fuzzer",
                "manifest_path": "/ws/fuzzer/Cargo.toml",
                "targets": [{"kind": ["bin"]}],
                "dependencies": [{"name": "tool-x", "kind": null, "path": "/ws/apps/tool-x"}]
            },
            {
                "name": "tool-x",
                "manifest_path": "/ws/apps/tool-x/Cargo.toml",
                "targets": [{"kind": ["lib"]}],
                "dependencies": [{"name": "tool-y", "kind": null, "path": "/ws/apps/tool-y"}]
            }
        ]
    });
    assert_eq!(
        edges_into_apps(&metadata),
        vec![
            "lib-a -> tool-x (apps/tool-x)".to_string(),
            "lib-a -> tool-z (apps/tool-z)".to_string(),
            "lib-c -> tool-y (apps/tool-y)".to_string(),
        ]
    );
}
