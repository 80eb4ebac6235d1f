//! What the agent's workspace tools leave in the model: the kind of each tool (which the approval
//! policy keys on), the files a frame's own tool calls read and changed (its file trail), the
//! typed detail a tool result carries for the window's tool cards, and where a command ran (in
//! the sandbox or outside it) and what of the sandbox it asked to leave.

use serde::{Deserialize, Serialize};

/// What a workspace tool does; approval is asked (or not) per kind.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, specta::Type,
)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// Reads files: `read_file`, `list_files`, `search`.
    Reading,
    /// Changes files: `write_file`, `edit_file`.
    Changing,
    /// Runs a command: `run_command`.
    Running,
}

impl ToolKind {
    pub const ALL: [ToolKind; 3] = [ToolKind::Reading, ToolKind::Changing, ToolKind::Running];

    /// The name used in the store, the settings file and the command line's `--approve`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolKind::Reading => "read",
            ToolKind::Changing => "change",
            ToolKind::Running => "run",
        }
    }

    pub fn parse(text: &str) -> Option<ToolKind> {
        ToolKind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// Where a command ran, or would run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CommandPlace {
    /// In the sandbox: the workspace writable, the rest of the file system read-only, Flame's
    /// folders and the keyring hidden; with the network or without.
    Sandbox { network: bool },
    /// Outside the sandbox, with the person's full rights.
    Outside,
}

/// What a command asks to leave of the sandbox (`run_command`'s `leave_sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum LeaveSandbox {
    /// The network: the command runs in the sandbox with the network on.
    Network,
    /// All of it: the command runs outside the sandbox.
    All,
}

/// Why a checkpoint (a snapshot of a tree's workspace) was taken for a frame.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, specta::Type,
)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointReason {
    /// The frame started (pushed, started, retried), or the workspace was set while it ran: what
    /// a rollback puts back.
    Start,
    /// Just before one of the frame's changing tool calls (write, edit, command).
    BeforeCall,
    /// Just after it: what differs from the checkpoint before is what the call changed.
    AfterCall,
    /// Just before a rollback of the frame: the files as the rollback found them.
    BeforeRollback,
    /// Just after it: what differs from the checkpoint before is what the rollback changed.
    AfterRollback,
}

impl CheckpointReason {
    pub const ALL: [CheckpointReason; 5] = [
        CheckpointReason::Start,
        CheckpointReason::BeforeCall,
        CheckpointReason::AfterCall,
        CheckpointReason::BeforeRollback,
        CheckpointReason::AfterRollback,
    ];

    /// The name used in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckpointReason::Start => "start",
            CheckpointReason::BeforeCall => "before_call",
            CheckpointReason::AfterCall => "after_call",
            CheckpointReason::BeforeRollback => "before_rollback",
            CheckpointReason::AfterRollback => "after_rollback",
        }
    }

    pub fn parse(text: &str) -> Option<CheckpointReason> {
        CheckpointReason::ALL.into_iter().find(|r| r.as_str() == text)
    }

    /// Whether the checkpoint closes a change (a call or a rollback) whose changed files are
    /// recorded with it.
    pub fn closes_a_change(self) -> bool {
        matches!(self, CheckpointReason::AfterCall | CheckpointReason::AfterRollback)
    }
}

/// The files a frame's own tool calls read and changed: workspace-relative paths, each list
/// sorted and without repeats, and a file that was changed listed only as changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct FileTrail {
    pub read: Vec<String>,
    pub changed: Vec<String>,
}

impl FileTrail {
    pub fn is_empty(&self) -> bool {
        self.read.is_empty() && self.changed.is_empty()
    }

    /// A trail from paths in any order, with repeats: sorted, deduplicated, and a path both read
    /// and changed kept only as changed.
    pub fn new(
        read: impl IntoIterator<Item = String>,
        changed: impl IntoIterator<Item = String>,
    ) -> FileTrail {
        let mut changed: Vec<String> = changed.into_iter().collect();
        changed.sort();
        changed.dedup();
        let mut read: Vec<String> =
            read.into_iter().filter(|p| changed.binary_search(p).is_err()).collect();
        read.sort();
        read.dedup();
        FileTrail { read, changed }
    }
}

/// What a workspace tool's result was, beyond the text the model reads: the window draws its
/// tool card from this. Stored with the result; results of other tools have none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolDetail {
    /// Lines `first_line..=last_line` of `path` were read (none when the file is empty).
    Read { path: String, first_line: u64, last_line: u64, total_lines: Option<u64> },
    /// `count` files matched the glob; `truncated` when more did than the list holds.
    List { count: u64, truncated: bool },
    /// `hits` matching lines in `files` files; `truncated` when the search stopped at its cap.
    Search { hits: u64, files: u64, truncated: bool },
    /// `path` was created or changed; `diff` is the unified diff, itself capped.
    Change { path: String, created: bool, diff: String },
    /// `command` ran; `exit_code` is absent when a signal, the timeout or Stop ended it, which
    /// `ending` says in words. `output_file` holds the whole output when it was kept. `place`
    /// says where it ran; results stored before there was a sandbox have none (they ran outside).
    Command {
        command: String,
        exit_code: Option<i32>,
        ending: String,
        duration_ms: u64,
        output_bytes: u64,
        output_file: Option<String>,
        place: Option<CommandPlace>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_result_stored_before_the_sandbox_reads_back_without_a_place() {
        let stored = r#"{"kind":"command","command":"ls","exit_code":0,"ending":"exit code 0","duration_ms":3,"output_bytes":0,"output_file":null}"#;
        let detail: ToolDetail = serde_json::from_str(stored).expect("an old detail");
        assert!(matches!(detail, ToolDetail::Command { place: None, .. }), "{detail:?}");
        let now = ToolDetail::Command {
            command: "ls".into(),
            exit_code: Some(0),
            ending: "exit code 0".into(),
            duration_ms: 3,
            output_bytes: 0,
            output_file: None,
            place: Some(CommandPlace::Sandbox { network: false }),
        };
        let text = serde_json::to_string(&now).expect("json");
        assert!(text.contains(r#""place":{"kind":"sandbox","network":false}"#), "{text}");
        assert_eq!(serde_json::from_str::<ToolDetail>(&text).expect("back"), now);
    }
}
