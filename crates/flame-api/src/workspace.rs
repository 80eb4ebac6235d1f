//! A tree's workspace as the facade keeps it: the folder (checked and stored canonical), the
//! kinds of tool call the person allowed for the rest of the tree, the file trail recorded with
//! each tool result, and where a command's whole output is kept beside the frame's log.
//!
//! `create_tree` and `set_workspace` take a folder that must exist and be a folder, stored
//! canonical (links resolved), and that neither lies inside one of Flame's own folders nor holds
//! one (`check_workspace`, which the window also calls on the settings' folder): the data directory
//! and those the front ends add with `Flame::add_own_folders` (the settings' folder, the window's
//! data and caches). `command_output_path` is where a `run_command` call's whole output goes,
//! `logs/<tree>/<frame>.outputs/<call id>.log`, removed with the tree's logs; the call id is
//! written as a name no other id gets (`[A-Za-z0-9_-]` kept, any other byte as `.xx`; past
//! `MAX_OUTPUT_NAME_CHARS` it is cut and ended with a hash of the whole id), so `call.1` and
//! `call_1` get two files.

use std::path::{Path, PathBuf};

use flame_model::{Actor, FileTrail, FrameId, Message, NewMessage, ToolKind, Tree, TreeId};

use crate::frames::count_message;
use crate::{ApiError, ErrorCode, Flame, frame_log};

/// The longest a command output's file name may be (before `.log`); the provider's ids are far
/// shorter, and the file name must stay well under the file system's limit.
pub const MAX_OUTPUT_NAME_CHARS: usize = 64;

/// Checks a folder offered as a workspace and returns it canonical (absolute, links resolved):
/// it must exist, be a folder, have a UTF-8 path, and neither lie inside one of `guarded` nor
/// hold one (Flame's own folders: the agent's tools could rewrite the store, or read the keys).
pub fn check_workspace(path: &Path, guarded: &[PathBuf]) -> Result<String, ApiError> {
    let invalid = |message: String| ApiError::new(ErrorCode::Invalid, message);
    let real = path.canonicalize().map_err(|err| {
        invalid(format!(
            "the workspace folder {} cannot be used ({err}); choose an existing folder",
            path.display()
        ))
    })?;
    if !real.is_dir() {
        return Err(invalid(format!(
            "the workspace {} is a file, not a folder; choose the folder the work happens in",
            path.display()
        )));
    }
    for folder in guarded {
        let folder = folder.canonicalize().unwrap_or_else(|_| folder.clone());
        if real.starts_with(&folder) {
            return Err(invalid(format!(
                "the workspace {} is inside Flame's own folder {}, where the agent's tools could rewrite Flame's data; choose a project folder elsewhere",
                real.display(),
                folder.display()
            )));
        }
        if folder.starts_with(&real) {
            return Err(invalid(format!(
                "the workspace {} holds Flame's own folder {}, where the agent's tools could rewrite Flame's data; choose a project folder that does not contain it",
                real.display(),
                folder.display()
            )));
        }
    }
    real.into_os_string().into_string().map_err(|real| {
        invalid(format!(
            "the workspace path {} is not valid UTF-8, which Flame cannot store; choose a folder whose path is",
            PathBuf::from(real).display()
        ))
    })
}

/// A call id as a file name, one name per id: `[A-Za-z0-9_-]` kept, every other byte of its
/// UTF-8 written `.xx` (two hex digits; `.` itself too), so `call.1` and `call_1` stay apart.
/// A name that would be longer than [`MAX_OUTPUT_NAME_CHARS`] keeps its first characters and
/// ends with a 64-bit hash of the whole id instead. Never empty.
fn output_file_stem(call_id: &str) -> String {
    let mut stem = String::with_capacity(call_id.len());
    for byte in call_id.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_' {
            stem.push(char::from(byte));
        } else {
            stem.push_str(&format!(".{byte:02x}"));
        }
    }
    if stem.is_empty() {
        return "call".to_owned();
    }
    if stem.len() > MAX_OUTPUT_NAME_CHARS {
        // FNV-1a: a hash with no key and no seed, so the name is the same in every process.
        let hash = call_id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        let suffix = format!("~{hash:016x}");
        stem.truncate(MAX_OUTPUT_NAME_CHARS - suffix.len());
        stem.push_str(&suffix);
    }
    stem
}

impl Flame {
    /// Adds folders of Flame's own besides the data directory — the settings' folder, where keys
    /// and the approval policy may be kept; the window's caches — which no workspace may lie in
    /// or hold. Every front end adds its own when it opens Flame.
    pub fn add_own_folders(&self, folders: impl IntoIterator<Item = PathBuf>) {
        let mut own = self.own_folders.lock().unwrap_or_else(|p| p.into_inner());
        for folder in folders {
            if !own.contains(&folder) {
                own.push(folder);
            }
        }
    }

    /// Flame's own folders: the data directory and those the front end added.
    pub fn own_folders(&self) -> Vec<PathBuf> {
        let added = self.own_folders.lock().unwrap_or_else(|p| p.into_inner());
        std::iter::once(self.data_dir.path().to_path_buf()).chain(added.iter().cloned()).collect()
    }

    /// The workspace `path` checked against Flame's own folders.
    fn checked_workspace(&self, path: Option<&Path>) -> Result<Option<String>, ApiError> {
        path.map(|p| check_workspace(p, &self.own_folders())).transpose()
    }

    /// Checks a tree's workspace folder as it is now, where `real` is where it resolves to at
    /// this moment (through a handle the caller holds open): a folder set long ago may have been
    /// replaced by a link since, to Flame's own data. Called every time a workspace is opened for
    /// the agent's tools or a checkpoint.
    pub fn check_workspace_in_use(&self, real: &Path) -> Result<(), ApiError> {
        check_workspace(real, &self.own_folders()).map(|_| ())
    }

    /// Creates a tree (its root frame in progress and focused) and makes it current.
    /// `workspace` is the folder the agent's workspace tools work in (see [`check_workspace`]);
    /// it is stored canonical.
    pub fn create_tree(
        &self,
        actor: Actor,
        title: &str,
        criteria: &str,
        workspace: Option<&Path>,
    ) -> Result<Tree, ApiError> {
        let workspace = self.checked_workspace(workspace)?;
        let tree = self.write(actor, |store, change, env| {
            crate::frames::with_fresh_ids(|| {
                store.create_tree(
                    change,
                    &env.ids.tree_id(),
                    &env.ids.frame_id(),
                    title,
                    criteria,
                    workspace.as_deref(),
                )
            })
        })?;
        self.checkpoint_running(&tree);
        Ok(tree)
    }

    /// Sets or (with `None`) clears tree `tree`'s workspace folder, with the same checks as
    /// [`Flame::create_tree`]; recorded in the root frame's log. The kinds of call allowed for
    /// the rest of the tree are cleared: they were allowed for the folder it had.
    pub fn set_workspace(
        &self,
        actor: Actor,
        tree: &TreeId,
        workspace: Option<&Path>,
    ) -> Result<Tree, ApiError> {
        let workspace = self.checked_workspace(workspace)?;
        let tree = self.write(actor, |store, change, _| {
            store.set_workspace(change, tree, workspace.as_deref())
        })?;
        self.checkpoint_running(&tree);
        Ok(tree)
    }

    /// The kinds of workspace tool call the person allowed for the rest of tree `tree`.
    pub fn allowed_kinds(&self, tree: &TreeId) -> Result<Vec<ToolKind>, ApiError> {
        Ok(self.store().allowed_kinds(tree)?)
    }

    /// Allows the rest of tree `tree`'s workspace tool calls of `kind` without asking, until its
    /// workspace changes.
    pub fn allow_kind(&self, actor: Actor, tree: &TreeId, kind: ToolKind) -> Result<(), ApiError> {
        self.write(actor, |store, change, _| store.allow_kind(change, tree, kind))
    }

    /// Stores a workspace tool's result in frame `frame` and records the files its call read
    /// and changed (`trail`: workspace-relative paths) in the frame's trail, in one
    /// transaction. Paths past `flame_store::MAX_TRAIL_PATHS` for the frame, or longer than
    /// `flame_store::MAX_TRAIL_PATH_BYTES`, are left out of the trail (the result is stored).
    pub fn add_tool_result(
        &self,
        actor: Actor,
        frame: &FrameId,
        message: &NewMessage,
        trail: &FileTrail,
    ) -> Result<Message, ApiError> {
        let tokens = count_message(message);
        let stored = self.write(actor, |store, change, _| {
            store.add_tool_result(change, frame, message, tokens, trail)
        })?;
        if stored.paths_left_out > 0 {
            tracing::warn!(
                %frame,
                left_out = stored.paths_left_out,
                "paths past the file trail's caps were not recorded"
            );
        }
        Ok(stored.message)
    }

    /// The files frame `frame`'s own tool calls read and changed, each list sorted.
    pub fn file_trail(&self, frame: &FrameId) -> Result<FileTrail, ApiError> {
        Ok(self.store().file_trail(frame)?)
    }

    /// Where the whole output of frame `frame`'s `run_command` call `call_id` is kept:
    /// `<frame id>.outputs/<call id>.log` beside the frame's Markdown log, the call id written as
    /// a file name no other id gets (at most [`MAX_OUTPUT_NAME_CHARS`], see `output_file_stem`).
    /// The folder is created; deleting the tree removes it with the tree's logs.
    pub fn command_output_path(&self, frame: &FrameId, call_id: &str) -> Result<PathBuf, ApiError> {
        let tree = self.store().frame(frame)?.tree;
        let folder = frame_log::tree_log_folder(self.data_dir.path(), &tree)
            .join(format!("{frame}.outputs"));
        std::fs::create_dir_all(&folder)
            .map_err(|e| ApiError::internal(&format!("create {}", folder.display()), e))?;
        Ok(folder.join(format!("{}.log", output_file_stem(call_id))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_id_becomes_a_plain_file_name_of_its_own() {
        assert_eq!(output_file_stem("call_ABC-12"), "call_ABC-12");
        assert_eq!(output_file_stem("../../etc/passwd"), ".2e.2e.2f.2e.2e.2fetc.2fpasswd");
        assert_eq!(output_file_stem(""), "call");
        assert_eq!(output_file_stem("é/x"), ".c3.a9.2fx");
        // Ids that differ only in punctuation get names of their own.
        assert_ne!(output_file_stem("call.1"), output_file_stem("call_1"));
        assert_ne!(output_file_stem("call.1"), output_file_stem("call/1"));
        // Past the cap the name stays unique through the hash of the whole id.
        let long = "a".repeat(MAX_OUTPUT_NAME_CHARS + 10);
        let longer = "a".repeat(MAX_OUTPUT_NAME_CHARS + 11);
        assert_eq!(output_file_stem(&long).len(), MAX_OUTPUT_NAME_CHARS);
        assert_ne!(output_file_stem(&long), output_file_stem(&longer));
        assert!(output_file_stem(&long).starts_with("aaaa"));
    }
}
