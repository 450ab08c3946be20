//! The workspace's layering: the libraries outside `apps/` (the
//! controllers, the plug-in bridge, the link and scenario models, the
//! simulator, the analysis) never depend on a crate inside `apps/` (the
//! tools: sockets, CLIs, servers). Read from `cargo metadata`, so a new
//! dependency that runs back up fails here, naming the edge.
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
        ]
    );
}
