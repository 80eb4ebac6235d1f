//! The project instructions an opening starts with (`flame_model::instructions`), read when the
//! facade assembles a call that makes an opening (`calls.rs`) and at no other time, so a frame's
//! requests repeat them byte for byte until its next opening.
//!
//! They are the person's own file, when the configuration names one and it is there, then the
//! workspace's files for the files the frame works in: those its own tool calls and its
//! ancestors' read and changed (their trails), since a child works on a part of its parent's
//! task. The workspace's are read by `flame-workspace` (confined to the folder); the person's
//! here, at the path the configuration gives, at most `MAX_INSTRUCTIONS_BYTES`. Nothing here
//! fails: what cannot be read is listed with why, or left out with a warning in the log when
//! the workspace itself cannot be opened (its calls say why).

use std::io;
use std::path::Path;

use flame_model::instructions::MAX_INSTRUCTIONS_BYTES;
use flame_model::{InstructionFile, InstructionScope};
use flame_store::Store;
use flame_workspace::Workspace;

use crate::Flame;
use crate::path_frames::ShownFrames;

impl Flame {
    /// The instructions a new opening of `shown.focus` starts with, in the order they are sent;
    /// `personal` is the person's own file, if any.
    pub(crate) fn read_instructions(
        &self,
        store: &Store,
        shown: &ShownFrames,
        personal: Option<&Path>,
    ) -> Vec<InstructionFile> {
        let mut files: Vec<InstructionFile> =
            personal.and_then(read_personal).into_iter().collect();
        let Some(folder) = &shown.workspace else { return files };
        let workspace = match Workspace::open(folder) {
            Ok(workspace) => workspace,
            Err(err) => {
                tracing::warn!("no project instructions from the workspace: {err}");
                return files;
            }
        };
        if let Err(err) = self.check_workspace_in_use(workspace.root()) {
            tracing::warn!("no project instructions from the workspace: {}", err.message);
            return files;
        }
        let trails = store.file_trails(&shown.path).unwrap_or_else(|err| {
            // The root's instructions are still read.
            tracing::warn!(
                "the frame's files are not known, so only the root's instructions are read: {err}"
            );
            Default::default()
        });
        let worked_in = trails.values().flat_map(|t| t.read.iter().chain(&t.changed));
        files.extend(workspace.instruction_files(worked_in.map(String::as_str)));
        files
    }
}

/// The person's own file of instructions at `path`; `None` when there is none.
fn read_personal(path: &Path) -> Option<InstructionFile> {
    let listed = |text: String, size: u64, problem: Option<String>| InstructionFile {
        path: path.display().to_string(),
        scope: InstructionScope::Personal,
        text,
        size,
        problem,
    };
    // A FIFO or a folder in its place is named, never opened: opening a FIFO would wait.
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return None,
        Err(err) => {
            return Some(listed(String::new(), 0, Some(format!("it cannot be read: {err}"))));
        }
    };
    if !meta.is_file() {
        return Some(listed(String::new(), 0, Some("it is not a regular file".to_owned())));
    }
    let read = std::fs::File::open(path)
        .map_err(|err| format!("it cannot be read: {err}"))
        .and_then(|file| flame_workspace::read_instruction_text(file, MAX_INSTRUCTIONS_BYTES));
    Some(match read {
        Ok(text) => listed(text, meta.len(), None),
        Err(problem) => listed(String::new(), meta.len(), Some(problem)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_persons_file_is_read_when_there_and_named_with_why_when_not_readable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("AGENTS.md");
        assert_eq!(read_personal(&path), None, "no file, no instructions");
        std::fs::write(&path, "Answer in French.\n").unwrap();
        let file = read_personal(&path).unwrap();
        assert_eq!((file.text.as_str(), file.size), ("Answer in French.\n", 18));
        assert_eq!(file.scope, InstructionScope::Personal);
        assert_eq!(file.path, path.display().to_string());

        let big = "y".repeat(MAX_INSTRUCTIONS_BYTES + 10);
        std::fs::write(&path, &big).unwrap();
        let file = read_personal(&path).unwrap();
        assert_eq!((file.text.len(), file.size), (MAX_INSTRUCTIONS_BYTES, big.len() as u64));

        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert_eq!(
            read_personal(&path).unwrap().problem.as_deref(),
            Some("it is not a regular file")
        );
    }
}
