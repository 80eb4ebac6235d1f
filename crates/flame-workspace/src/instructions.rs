//! The workspace's project instructions (`flame_model::instructions`): in the root and in every
//! folder above the files a frame works in, its `AGENTS.md`, or its `CLAUDE.md` where it has no
//! `AGENTS.md`, in the order an opening sends them: the root's first, then each folder after the
//! folders above it (sorted by their names' components), so a nearer file comes later.
//!
//! They are read like `read_file` reads: the name is resolved inside the workspace (a link is
//! followed only while it stays inside), then opened from the workspace's handle one name at a
//! time without following links. A file found but not readable (a link out, a hard link, a
//! folder, not UTF-8 text) is listed with why, so the person and the model learn it was skipped.
//! At most [`MAX_INSTRUCTION_FOLDERS`] folders are looked in, and at most
//! [`MAX_INSTRUCTIONS_BYTES`] are read of all the files together: past it, a file is listed with
//! its size and nothing read.

use std::collections::BTreeSet;
use std::io::Read;

use flame_model::instructions::MAX_INSTRUCTIONS_BYTES;
use flame_model::{InstructionFile, InstructionScope};

use crate::{Workspace, WorkspaceError};

/// The names looked for in a folder, the first found used: `AGENTS.md`, the file most agents
/// read, then Claude Code's `CLAUDE.md`.
pub const INSTRUCTION_FILE_NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// The most folders looked in for one opening, the root included: those nearest the root are
/// kept. A frame's files seldom span more than a few dozen folders, and what the files may send
/// together is bounded anyway.
pub const MAX_INSTRUCTION_FOLDERS: usize = 64;

impl Workspace {
    /// The instruction files for work on `files` (workspace-relative paths, as a file trail
    /// holds them), in the order they are sent. A folder without either file has none; nothing
    /// here fails, since an opening goes on without instructions it cannot read.
    pub fn instruction_files<'a>(
        &self,
        files: impl IntoIterator<Item = &'a str>,
    ) -> Vec<InstructionFile> {
        let mut left = MAX_INSTRUCTIONS_BYTES;
        let mut found = Vec::new();
        for folder in folders_above(files) {
            if let Some(file) = self.instruction_file(&folder, &mut left) {
                found.push(file);
            }
        }
        found
    }

    /// The instruction file of `folder` (its components, the root empty), reading at most `left`
    /// bytes of it and taking them from `left`.
    fn instruction_file(&self, folder: &[String], left: &mut usize) -> Option<InstructionFile> {
        for name in INSTRUCTION_FILE_NAMES {
            let path =
                folder.iter().map(String::as_str).chain([name]).collect::<Vec<_>>().join("/");
            let listed = |text: String, size: u64, problem: Option<String>| InstructionFile {
                path: path.clone(),
                scope: InstructionScope::Workspace,
                text,
                size,
                problem,
            };
            let opened = self.resolve(&path).and_then(|r| self.open_regular(&r.relative));
            let (file, size) = match opened {
                Ok(opened) => opened,
                Err(WorkspaceError::NotFound { .. }) => continue,
                Err(err) => return Some(listed(String::new(), 0, Some(err.to_string()))),
            };
            return Some(match read_instruction_text(file, *left) {
                Ok(text) => {
                    *left -= text.len();
                    listed(text, size, None)
                }
                Err(problem) => listed(String::new(), size, Some(problem)),
            });
        }
        None
    }
}

/// The folders above `files`, the root first, each after the folders above it, at most
/// [`MAX_INSTRUCTION_FOLDERS`] (the shallowest), as their names' components.
fn folders_above<'a>(files: impl IntoIterator<Item = &'a str>) -> Vec<Vec<String>> {
    let mut folders: BTreeSet<Vec<String>> = BTreeSet::from([Vec::new()]);
    for file in files {
        let parts: Vec<&str> = file.split('/').collect();
        // A trail's paths are plain names; anything else names no folder of the workspace.
        if parts.iter().any(|p| p.is_empty() || *p == "." || *p == "..") {
            continue;
        }
        for depth in 1..parts.len() {
            folders.insert(parts[..depth].iter().map(|p| (*p).to_owned()).collect());
        }
    }
    let mut folders: Vec<Vec<String>> = folders.into_iter().collect();
    if folders.len() > MAX_INSTRUCTION_FOLDERS {
        // The sort is stable: folders of one depth stay in name order.
        folders.sort_by_key(Vec::len);
        folders.truncate(MAX_INSTRUCTION_FOLDERS);
        folders.sort();
    }
    folders
}

/// At most `limit` bytes of the start of `file` as text, cut at a character; why not, in words,
/// when they are not UTF-8 text. The facade reads the person's own file of instructions with it.
pub fn read_instruction_text(file: impl Read, limit: usize) -> Result<String, String> {
    let mut bytes = Vec::new();
    file.take(limit as u64)
        .read_to_end(&mut bytes)
        .map_err(|err| format!("reading it failed: {err}"))?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(err) => {
            let error = err.utf8_error();
            // Only a character cut by the limit may be incomplete at the end; anything else is
            // not text.
            if error.error_len().is_some() {
                return Err("it is not UTF-8 text".to_owned());
            }
            let mut bytes = err.into_bytes();
            bytes.truncate(error.valid_up_to());
            Ok(String::from_utf8(bytes).unwrap_or_default())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(folders: &[Vec<String>]) -> Vec<String> {
        folders.iter().map(|f| f.join("/")).collect()
    }

    #[test]
    fn folders_come_root_first_each_after_those_above_it() {
        let folders = folders_above(["src/ui/app.ts", "README.md", "src/lib.rs", "docs/a/b.md"]);
        assert_eq!(names(&folders), ["", "docs", "docs/a", "src", "src/ui"]);
    }

    #[test]
    fn past_the_limit_the_folders_nearest_the_root_are_kept() {
        let files: Vec<String> =
            (0..MAX_INSTRUCTION_FOLDERS).map(|n| format!("deep/f{n:03}/x.rs")).collect();
        let folders = folders_above(files.iter().map(String::as_str));
        assert_eq!(folders.len(), MAX_INSTRUCTION_FOLDERS);
        assert_eq!(names(&folders[..3]), ["", "deep", "deep/f000"]);
        assert!(!names(&folders).contains(&format!("deep/f{:03}", MAX_INSTRUCTION_FOLDERS - 1)));
    }

    #[test]
    fn a_path_that_is_not_plain_names_names_no_folder() {
        assert_eq!(names(&folders_above(["../up/x.rs", "a//b.rs", "./c/d.rs"])), [""]);
    }
}
