//! Reads the workspace so that `tests/tidy.rs` can check the repository's own rules, in the
//! manner of rust-analyzer's tidy tests.
//!
//! Dependency rules walk the resolved graph: `Workspace::reachable_avoiding` gives what a crate
//! reaches without passing through named crates, with the chain that reaches it; a crate's own
//! dev-dependencies count, its dependencies' never do. Source rules read Rust with comments,
//! literals and `#[cfg(test)]` items blanked (`rust_source.rs`), and public types with `syn`
//! (`public_api.rs`: an item is public when it is declared `pub` in `pub` modules or re-exported by
//! a `pub use`). Each failure names the file and line, or the dependency chain, that breaks the
//! rule.

pub mod module_graph;
pub mod public_api;
pub mod rust_source;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tidy/ has a parent").to_path_buf()
}

/// A workspace member as `cargo metadata` describes it.
#[derive(Debug, Clone)]
pub struct Member {
    pub name: String,
    /// The member's folder, relative to the repository root (`crates/flame-store`).
    pub dir: PathBuf,
    pub description: Option<String>,
    /// The dependencies its manifest declares, each with what it asks of it.
    pub declared: Vec<Declared>,
    /// The features it turns on in itself by default.
    pub default_features: Vec<String>,
}

/// A dependency as a member's manifest declares it.
#[derive(Debug, Clone)]
pub struct Declared {
    pub name: String,
    /// `"normal"`, `"dev"` or `"build"`.
    pub kind: String,
    /// The features it turns on.
    pub features: Vec<String>,
}

/// One edge of the resolved dependency graph.
#[derive(Debug, Clone)]
struct Edge {
    to: String,
    /// Whether the edge is only a dev-dependency (tests, benches, examples).
    dev_only: bool,
}

/// The workspace as `cargo metadata` resolves it.
#[derive(Debug)]
pub struct Workspace {
    pub members: Vec<Member>,
    /// Package id → the packages it depends on, of every kind (normal, build and dev).
    deps: BTreeMap<String, Vec<Edge>>,
    /// Package id → package name.
    names: BTreeMap<String, String>,
    member_ids: BTreeMap<String, String>,
}

impl Workspace {
    /// Runs `cargo metadata` on the repository.
    pub fn load() -> Workspace {
        let root = repo_root();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let output = Command::new(cargo)
            .args(["metadata", "--format-version", "1", "--locked"])
            .current_dir(&root)
            .output()
            .expect("cargo metadata runs");
        assert!(
            output.status.success(),
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let meta: Value = serde_json::from_slice(&output.stdout).expect("cargo metadata is JSON");

        let mut names = BTreeMap::new();
        let mut members = Vec::new();
        let mut member_ids = BTreeMap::new();
        let workspace_ids: BTreeSet<&str> = meta["workspace_members"]
            .as_array()
            .expect("workspace_members")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        for package in meta["packages"].as_array().expect("packages") {
            let id = package["id"].as_str().expect("id").to_owned();
            let name = package["name"].as_str().expect("name").to_owned();
            if workspace_ids.contains(id.as_str()) {
                let manifest = Path::new(package["manifest_path"].as_str().expect("manifest"));
                let dir = manifest.parent().expect("manifest has a folder");
                let strings = |value: &Value| -> Vec<String> {
                    let items = value.as_array().into_iter().flatten();
                    items.filter_map(Value::as_str).map(str::to_owned).collect()
                };
                let declared = package["dependencies"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|dep| Declared {
                        name: dep["name"].as_str().unwrap_or_default().to_owned(),
                        kind: dep["kind"].as_str().unwrap_or("normal").to_owned(),
                        features: strings(&dep["features"]),
                    })
                    .collect();
                members.push(Member {
                    name: name.clone(),
                    dir: dir.strip_prefix(&root).unwrap_or(dir).to_path_buf(),
                    description: package["description"].as_str().map(str::to_owned),
                    declared,
                    default_features: strings(&package["features"]["default"]),
                });
                member_ids.insert(name.clone(), id.clone());
            }
            names.insert(id, name);
        }
        let mut deps = BTreeMap::new();
        for node in meta["resolve"]["nodes"].as_array().expect("resolve nodes") {
            let id = node["id"].as_str().expect("node id").to_owned();
            let targets = node["deps"]
                .as_array()
                .expect("node deps")
                .iter()
                .filter_map(|dep| {
                    let to = dep["pkg"].as_str()?.to_owned();
                    let dev_only = dep["dep_kinds"]
                        .as_array()
                        .is_some_and(|kinds| kinds.iter().all(|k| k["kind"] == "dev"));
                    Some(Edge { to, dev_only })
                })
                .collect();
            deps.insert(id, targets);
        }
        Workspace { members, deps, names, member_ids }
    }

    /// The names of the packages `member` depends on directly, through any kind of dependency.
    pub fn direct_dependencies(&self, member: &str) -> BTreeSet<String> {
        let id = &self.member_ids[member];
        self.deps.get(id).into_iter().flatten().map(|dep| self.names[&dep.to].clone()).collect()
    }

    /// The names of every package `member` depends on, directly or not, through any kind of
    /// dependency.
    pub fn transitive_dependencies(&self, member: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![self.member_ids[member].clone()];
        while let Some(id) = stack.pop() {
            for dep in self.deps.get(&id).into_iter().flatten() {
                if seen.insert(dep.to.clone()) {
                    stack.push(dep.to.clone());
                }
            }
        }
        seen.iter().map(|id| self.names[id].clone()).collect()
    }

    /// Every package `member` reaches without passing through a package named in `through`,
    /// each with one chain that reaches it (`member -> a -> b`). `member`'s own
    /// dev-dependencies count when `with_dev` (its tests and benches then count as part of it);
    /// those of the packages it depends on never do, since cargo never builds them for it.
    pub fn reachable_avoiding(
        &self,
        member: &str,
        through: &[&str],
        with_dev: bool,
    ) -> BTreeMap<String, String> {
        let start = &self.member_ids[member];
        let mut chains: BTreeMap<String, String> = BTreeMap::new();
        let mut seen = BTreeSet::from([start.clone()]);
        let mut stack = vec![(start.clone(), member.to_owned())];
        while let Some((id, chain)) = stack.pop() {
            for dep in self.deps.get(&id).into_iter().flatten() {
                let name = &self.names[&dep.to];
                if (dep.dev_only && (id != *start || !with_dev)) || through.contains(&name.as_str())
                {
                    continue;
                }
                if seen.insert(dep.to.clone()) {
                    let chain = format!("{chain} -> {name}");
                    chains.entry(name.clone()).or_insert_with(|| chain.clone());
                    stack.push((dep.to.clone(), chain));
                }
            }
        }
        chains
    }
}

/// Every file below `dir` (relative to the repository root) whose name ends with `extension`.
pub fn files_with_extension(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![repo_root().join(dir)];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == extension) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}
