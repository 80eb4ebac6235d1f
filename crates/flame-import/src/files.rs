//! The files a transcript's tool calls read and changed, for the frames' file trails.
//!
//! Claude Code's `Read` reads its `file_path`; `Edit`, `Write` and `MultiEdit` change their
//! `file_path` and `NotebookEdit` its `notebook_path`. `Glob` and `Grep` read a file only when
//! they name one: a `Glob` pattern with no wildcard, or a `Grep` `path` whose last component
//! has an extension (a transcript does not say whether a path was a folder, and searching a
//! folder reads no file in particular). OpenCode's `read`, `edit` and `write` tools name theirs
//! as `filePath`. Only calls whose result is not an error count: a failed edit changed nothing.
//!
//! A path inside the session's working folder is made relative to it, as the live trail's
//! workspace-relative paths are; any other path is kept as written.

use std::path::Path;

use serde_json::Value;

/// One file a tool call touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileTouch {
    /// Relative to the session's folder when inside it, else as written.
    pub path: String,
    pub changed: bool,
}

/// Characters that make a `Glob` pattern match more than one named path.
const WILDCARDS: [char; 4] = ['*', '?', '[', '{'];

/// The files a Claude Code tool call `name` with arguments `input` touches, its paths made
/// relative to `cwd` when inside it.
pub fn claude_code(name: &str, input: &Value, cwd: Option<&str>) -> Vec<FileTouch> {
    let text = |key: &str| input[key].as_str().filter(|p| !p.trim().is_empty());
    let (path, changed) = match name {
        "Read" => (text("file_path"), false),
        "Edit" | "Write" | "MultiEdit" => (text("file_path"), true),
        "NotebookEdit" => (text("notebook_path"), true),
        "Glob" => {
            let Some(pattern) = text("pattern").filter(|p| !p.contains(WILDCARDS)) else {
                return Vec::new();
            };
            // A relative pattern is searched for under `path`, or the session's folder.
            let joined = match text("path") {
                Some(base) if !pattern.starts_with('/') => {
                    format!("{}/{pattern}", base.trim_end_matches('/'))
                }
                _ => pattern.to_owned(),
            };
            return vec![FileTouch { path: relative(&joined, cwd), changed: false }];
        }
        "Grep" => (text("path").filter(|p| names_a_file(p)), false),
        _ => (None, false),
    };
    path.map(|p| vec![FileTouch { path: relative(p, cwd), changed }]).unwrap_or_default()
}

/// The files an OpenCode tool call touches (`read`, `edit`, `write` and their `filePath`).
pub fn opencode(name: &str, input: &Value, cwd: Option<&str>) -> Vec<FileTouch> {
    let changed = match name {
        "read" => false,
        "edit" | "write" => true,
        _ => return Vec::new(),
    };
    input["filePath"]
        .as_str()
        .filter(|p| !p.trim().is_empty())
        .map(|p| vec![FileTouch { path: relative(p, cwd), changed }])
        .unwrap_or_default()
}

/// Whether `path` looks like a file rather than a folder: its last component has an extension
/// and no wildcard.
fn names_a_file(path: &str) -> bool {
    let last = path.trim_end_matches('/').rsplit('/').next().unwrap_or_default();
    !path.ends_with('/')
        && !last.contains(WILDCARDS)
        && last.rfind('.').is_some_and(|dot| dot > 0 && dot + 1 < last.len())
}

/// `path` relative to `cwd` when it lies inside it (a leading `./` dropped), else as written.
pub fn relative(path: &str, cwd: Option<&str>) -> String {
    if let Some(cwd) = cwd
        && let Ok(inside) = Path::new(path).strip_prefix(cwd)
        && !inside.as_os_str().is_empty()
    {
        return inside.to_string_lossy().into_owned();
    }
    path.strip_prefix("./").unwrap_or(path).to_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn touches(name: &str, input: Value) -> Vec<(String, bool)> {
        claude_code(name, &input, Some("/home/u/proj"))
            .into_iter()
            .map(|t| (t.path, t.changed))
            .collect()
    }

    #[test]
    fn reads_and_changes_are_named_relative_to_the_session_folder() {
        let r = |p: &str| vec![(p.to_owned(), false)];
        let c = |p: &str| vec![(p.to_owned(), true)];
        assert_eq!(touches("Read", json!({"file_path": "/home/u/proj/src/a.rs"})), r("src/a.rs"));
        assert_eq!(touches("Edit", json!({"file_path": "/home/u/proj/b.rs"})), c("b.rs"));
        assert_eq!(touches("Write", json!({"file_path": "/tmp/x.txt"})), c("/tmp/x.txt"));
        assert_eq!(touches("MultiEdit", json!({"file_path": "./m.rs"})), c("m.rs"));
        assert_eq!(
            touches("NotebookEdit", json!({"notebook_path": "/home/u/proj/n.ipynb"})),
            c("n.ipynb")
        );
        // A sibling folder that shares the prefix is outside.
        assert_eq!(
            touches("Read", json!({"file_path": "/home/u/project2/a"})),
            r("/home/u/project2/a")
        );
        assert!(touches("Read", json!({"file_path": 7})).is_empty());
        assert!(touches("Bash", json!({"command": "cat a.rs"})).is_empty());
    }

    #[test]
    fn glob_and_grep_count_only_when_they_name_a_file() {
        let r = |p: &str| vec![(p.to_owned(), false)];
        assert_eq!(
            touches("Glob", json!({"pattern": "Cargo.toml", "path": "/home/u/proj/crates/a"})),
            r("crates/a/Cargo.toml")
        );
        assert_eq!(touches("Glob", json!({"pattern": "/home/u/proj/README.md"})), r("README.md"));
        assert!(touches("Glob", json!({"pattern": "**/*.rs"})).is_empty());
        assert_eq!(
            touches("Grep", json!({"pattern": "fn", "path": "/home/u/proj/src/lib.rs"})),
            r("src/lib.rs")
        );
        assert!(touches("Grep", json!({"pattern": "fn", "path": "/home/u/proj/src"})).is_empty());
        assert!(
            touches("Grep", json!({"pattern": "fn", "path": "/home/u/proj/.github"})).is_empty()
        );
        assert!(touches("Grep", json!({"pattern": "fn"})).is_empty());
    }

    #[test]
    fn opencode_tools_name_their_file_path() {
        let input = json!({"filePath": "/w/src/a.ts"});
        assert_eq!(
            opencode("edit", &input, Some("/w")),
            [FileTouch { path: "src/a.ts".into(), changed: true }]
        );
        assert_eq!(opencode("read", &input, None)[0].path, "/w/src/a.ts");
        assert!(opencode("bash", &input, Some("/w")).is_empty());
    }
}
