//! The modules of one crate and which of them each names, to find circles: two modules that
//! reach each other through `crate::` paths. A circle makes neither module readable alone, and
//! it is where a third module that both need is missing.
//!
//! A module is a top-level one of the crate (`walk` for `src/walk.rs` and everything under
//! `src/walk/`); `lib.rs` and `main.rs` are the crate's root, which every module may name and
//! which names them all. What a module names is read from its code with comments, literals and
//! tests blanked: every `crate::name` path and every name at the first level of a
//! `use crate::{…}` group.

use std::collections::{BTreeMap, BTreeSet};

/// The top-level module a file below a crate's `src/` belongs to, or `None` for the root.
pub fn module_of(relative: &str) -> Option<String> {
    let first = relative.split('/').next()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then(|| name.to_owned())
}

/// The names a module's code (comments, literals and tests blanked) refers to below `crate::`.
pub fn crate_names(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        // `crate::` inside a longer word (`mycrate::`) is not the crate's root.
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = matching_brace(group).unwrap_or(group.len());
            for item in top_level_items(&group[..end]) {
                names.insert(item);
            }
        } else {
            let name: String =
                rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                names.insert(name);
            }
        }
    }
    names
}

/// Where the brace that closes a group opened just before `text` is.
fn matching_brace(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return Some(i),
            '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// The first name of each item of a `use` group's inside (`a, b::c, d::{e, f}` gives a, b, d).
fn top_level_items(group: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut start = true;
    let mut current = String::new();
    for c in group.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                if !current.is_empty() {
                    items.push(std::mem::take(&mut current));
                }
                start = true;
                continue;
            }
            _ => {}
        }
        if depth > 0 {
            continue;
        }
        if start {
            if c.is_alphanumeric() || c == '_' {
                current.push(c);
            } else if !current.is_empty() {
                items.push(std::mem::take(&mut current));
                start = false;
            }
        }
    }
    if !current.is_empty() {
        items.push(current);
    }
    items
}

/// The circles of a graph of modules (module → the modules it names): each strongly connected
/// set of two or more modules, sorted, in sorted order. Names that are not modules of the graph
/// (types and functions of the root) are left out.
pub fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Two modules are in one circle when each reaches the other.
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_owned()];
        while let Some(module) = stack.pop() {
            for next in graph.get(&module).into_iter().flatten() {
                if graph.contains_key(next) && seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut found: BTreeSet<Vec<String>> = BTreeSet::new();
    for (module, reaches) in &reached {
        let circle: Vec<String> =
            reaches.iter().filter(|other| reached[other].contains(*module)).cloned().collect();
        if circle.len() > 1 {
            found.insert(circle);
        }
    }
    found.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &[&str])]) -> BTreeMap<String, BTreeSet<String>> {
        edges
            .iter()
            .map(|(m, to)| (m.to_string(), to.iter().map(|t| t.to_string()).collect()))
            .collect()
    }

    #[test]
    fn names_are_read_from_paths_and_use_groups() {
        let code = "use crate::walk::{a, b};\nuse crate::{index::Stat, Error, git, name::{x, y}};\n\
                    fn f() { crate::restore::run(); mycrate::no(); }";
        let names: Vec<String> = crate_names(code).into_iter().collect();
        assert_eq!(names, ["Error", "git", "index", "name", "restore", "walk"]);
    }

    #[test]
    fn a_file_belongs_to_its_top_level_module() {
        assert_eq!(module_of("walk.rs").as_deref(), Some("walk"));
        assert_eq!(module_of("frames/contexts.rs").as_deref(), Some("frames"));
        assert_eq!(module_of("lib.rs"), None);
    }

    #[test]
    fn a_circle_is_found_and_a_chain_is_not() {
        let chain =
            graph(&[("decode", &["anthropic"]), ("anthropic", &["limits"]), ("limits", &[])]);
        assert!(circles(&chain).is_empty());
        let planted = graph(&[
            ("walk", &["restore", "Error"]),
            ("restore", &["git", "walk"]),
            ("git", &[]),
            ("a", &["b"]),
            ("b", &["c"]),
            ("c", &["a"]),
        ]);
        assert_eq!(circles(&planted), [vec!["a", "b", "c"], vec!["restore", "walk"]]);
    }
}
