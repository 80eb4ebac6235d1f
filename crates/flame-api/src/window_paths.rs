//! Paths that arrive from the window.
//!
//! The webview shows untrusted text (model replies, imported sessions). Flame renders it inertly,
//! but if a flaw ever let a script reach the IPC, the export and import commands must not become
//! a way to write or read any file the person can. So a path typed in (or chosen in) the window is
//! held to what a person exporting or importing would actually name, in Rust, whatever the UI
//! checked: an export writes only a file with its format's extension, outside hidden folders
//! (`~/.ssh`, `~/.config`, …) and outside Flame's own data and settings folders; an import reads
//! only a session file, an export or an OpenCode data folder, never Flame's own folders (where the
//! keys live). The command line is not held to this: its paths come from the person's own shell.

use std::path::{Component, Path, PathBuf};

use crate::{ApiError, ErrorCode, ExportFormat};

/// The extension an export of `format` must carry. The assembled context is Markdown.
pub fn export_extension(format: ExportFormat) -> &'static str {
    match format {
        ExportFormat::Json => "json",
        ExportFormat::Markdown => "md",
    }
}

/// Refuses an export target from the window that is not an ordinary `.json`/`.md` file of the
/// person's: the wrong extension, a hidden folder or file on the way, or inside one of `guarded`
/// (Flame's data and settings folders). Symbolic links in the existing part of the path are
/// followed first, so a link cannot lead the write somewhere the rules forbid.
pub fn check_export_target(
    path: &Path,
    format: ExportFormat,
    guarded: &[PathBuf],
) -> Result<(), ApiError> {
    let extension = export_extension(format);
    if path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref()
        != Some(extension)
    {
        return Err(refused(format!(
            "the window exports only to a .{extension} file, not to {}; name a file ending in .{extension}",
            path.display()
        )));
    }
    let real = resolve_existing(path);
    if let Some(hidden) = hidden_component(&real) {
        return Err(refused(format!(
            "the window does not export into hidden files or folders ({hidden} in {}); choose a visible folder",
            real.display()
        )));
    }
    check_not_guarded(&real, guarded, "export into")
}

/// Refuses an import source from the window inside one of `guarded` (Flame's data and settings
/// folders), or one that is neither a folder nor a `.jsonl`, `.json` or `.db` file.
pub fn check_import_source(path: &Path, guarded: &[PathBuf]) -> Result<(), ApiError> {
    let real = resolve_existing(path);
    if !real.is_dir() {
        let extension = real.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        if !matches!(extension.as_deref(), Some("jsonl" | "json" | "db")) {
            return Err(refused(format!(
                "the window imports a session (.jsonl), an export (.json) or an OpenCode data folder or database (.db), not {}",
                path.display()
            )));
        }
    }
    check_not_guarded(&real, guarded, "import from")
}

fn refused(message: String) -> ApiError {
    ApiError::new(ErrorCode::Invalid, message)
}

fn check_not_guarded(real: &Path, guarded: &[PathBuf], verb: &str) -> Result<(), ApiError> {
    for folder in guarded {
        let folder = resolve_existing(folder);
        if real.starts_with(&folder) {
            return Err(refused(format!(
                "the window does not {verb} Flame's own folder {}; choose a file elsewhere",
                folder.display()
            )));
        }
    }
    Ok(())
}

/// The path with its longest existing prefix resolved (symbolic links followed, `..` taken
/// away), and the part that does not exist yet appended as written.
fn resolve_existing(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut prefix = path.to_path_buf();
    loop {
        if let Ok(real) = prefix.canonicalize() {
            let mut resolved = real;
            for part in missing.iter().rev() {
                resolved.push(part);
            }
            return lexically_normal(&resolved);
        }
        match (prefix.file_name().map(ToOwned::to_owned), prefix.parent()) {
            (Some(name), Some(parent)) => {
                missing.push(name);
                prefix = parent.to_path_buf();
            }
            _ => return lexically_normal(path),
        }
    }
}

/// `path` with `.` dropped and `..` applied to what precedes it, without touching the disk.
fn lexically_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn hidden_component(path: &Path) -> Option<String> {
    path.components().find_map(|c| match c {
        Component::Normal(name) => {
            let name = name.to_string_lossy();
            name.starts_with('.').then(|| name.into_owned())
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A temporary folder whose own name is not hidden (tempfile's default starts with `.tmp`).
    fn visible_tempdir() -> tempfile::TempDir {
        tempfile::Builder::new().prefix("flame-paths-").tempdir().unwrap()
    }

    #[test]
    fn an_export_needs_its_formats_extension() {
        let tmp = visible_tempdir();
        let ok = tmp.path().join("tree.json");
        check_export_target(&ok, ExportFormat::Json, &[]).unwrap();
        check_export_target(&tmp.path().join("tree.MD"), ExportFormat::Markdown, &[]).unwrap();
        for bad in ["tree.md", "bashrc", "tree.json.sh", "authorized_keys"] {
            let err =
                check_export_target(&tmp.path().join(bad), ExportFormat::Json, &[]).unwrap_err();
            assert_eq!(err.code, ErrorCode::Invalid);
            assert!(err.message.contains(".json"), "{}", err.message);
        }
    }

    #[test]
    fn an_export_stays_out_of_hidden_folders_and_flames_own() {
        let tmp = visible_tempdir();
        let home = tmp.path().canonicalize().unwrap();
        let err =
            check_export_target(&home.join(".ssh/x.md"), ExportFormat::Markdown, &[]).unwrap_err();
        assert!(err.message.contains(".ssh"), "{}", err.message);
        let err =
            check_export_target(&home.join(".notes.md"), ExportFormat::Markdown, &[]).unwrap_err();
        assert!(err.message.contains("hidden"), "{}", err.message);
        // `..` cannot climb out of a visible folder into a hidden one, nor into a guarded one.
        std::fs::create_dir_all(home.join("docs")).unwrap();
        let climbing = home.join("docs/../.config/x.md");
        assert!(check_export_target(&climbing, ExportFormat::Markdown, &[]).is_err());
        let data = home.join("flame-data");
        std::fs::create_dir_all(&data).unwrap();
        let err = check_export_target(
            &data.join("x.json"),
            ExportFormat::Json,
            std::slice::from_ref(&data),
        )
        .unwrap_err();
        assert!(err.message.contains("Flame's own folder"), "{}", err.message);
        let err = check_export_target(
            &home.join("docs/../flame-data/logs/x.md"),
            ExportFormat::Markdown,
            std::slice::from_ref(&data),
        )
        .unwrap_err();
        assert!(err.message.contains("Flame's own folder"), "{}", err.message);
    }

    #[test]
    fn a_symbolic_link_cannot_lead_an_export_somewhere_forbidden() {
        let tmp = visible_tempdir();
        let home = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::os::unix::fs::symlink(home.join(".ssh"), home.join("innocent")).unwrap();
        let err = check_export_target(&home.join("innocent/x.md"), ExportFormat::Markdown, &[])
            .unwrap_err();
        assert!(err.message.contains(".ssh"), "{}", err.message);
    }

    #[test]
    fn an_import_reads_sessions_exports_and_opencode_folders_only() {
        let tmp = visible_tempdir();
        let home = tmp.path().canonicalize().unwrap();
        // Claude Code keeps its sessions in a hidden folder, so imports may read from one.
        check_import_source(&home.join(".claude/projects/p/s.jsonl"), &[]).unwrap();
        check_import_source(&home.join("export.json"), &[]).unwrap();
        check_import_source(&home.join("opencode.db"), &[]).unwrap();
        check_import_source(&home, &[]).unwrap();
        let err = check_import_source(&home.join(".bash_history"), &[]).unwrap_err();
        assert!(err.message.contains(".jsonl"), "{}", err.message);
        let config = home.join("config/flame");
        std::fs::create_dir_all(&config).unwrap();
        let err = check_import_source(&config.join("settings.json"), std::slice::from_ref(&config))
            .unwrap_err();
        assert!(err.message.contains("Flame's own folder"), "{}", err.message);
    }
}
