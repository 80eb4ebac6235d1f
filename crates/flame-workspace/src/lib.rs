//! The agent's hands in a workspace folder: read a file's lines, list files, search contents,
//! write and edit files, and run commands — with every path confined to the folder, writes
//! atomic, replies bounded, commands' process groups killed and their environment scrubbed of
//! keys. No Tauri, no network, no store: the agent offers these tools, asks for approval by
//! [`ToolKind`] and records the [`Touched`] files in its trail.
//!
//! Changes come in two steps — [`Workspace::prepare_write`] / [`Workspace::prepare_edit`] give
//! the diff for the approval prompt, [`Workspace::apply`] writes it — or one
//! ([`Workspace::write_file`], [`Workspace::edit_file`]).
//!
//! `read_file` returns numbered lines a capped piece at a time and says how to read on.
//! `list_files` and `search` walk with ripgrep's `ignore` crate (`.gitignore` honoured inside a git
//! repository or not, `.ignore`, hidden files and `.git` skipped, the global excludes not read).
//! `apply_shown` applies a change only on the file the person was shown (`PreparedChange::base`),
//! and `apply` refuses a file changed since it was prepared. `tool_specs()` gives the six tools'
//! JSON schemas with their `ToolKind` (`flame-model`'s, shared with the store and the settings),
//! `WorkspaceCall::parse` gives typed arguments, and each result's `touched()` names the files it
//! read and changed (`run_command`'s is `Touched::Unknown`). A file with more than one hard link is
//! refused (`HardLinked`) and skipped by `search`, since its other name may be outside and nothing
//! cheap tells where; a name that became a link is `WorkspaceError::Replaced`. A command's run ends
//! at most about 1.6 s after its timeout or Stop whatever it does with its output
//! (`TERMINATE_GRACE`, `DRAIN_GRACE`), its log takes at most `MAX_COMMAND_LOG_BYTES` with the rest
//! counted, and Flame's own variables and the usual key names are removed from its environment.
//! It runs where the caller says (`Confinement`): with the person's full rights, or in the
//! bubblewrap sandbox (`sandbox.rs`: the workspace but its `.git` writable, the rest read-only,
//! Flame's folders and the keyring hidden, the network off unless the rules allow it), which
//! `Sandbox::check` finds out once whether this computer can start;
//! `Environment::withdraw_secrets` takes the keys out of the front end's own environment block,
//! which `/proc/<pid>/environ` shows to every process of the account. The tests are one binary
//! (`tests/workspace/`) and `tests/kill_write.rs`, which runs without the test harness because it
//! runs itself again as the writer it kills.
//!
//! `Workspace::instruction_files` reads the project instructions (`AGENTS.md`, else `CLAUDE.md`)
//! of the root and of the folders above the files a frame works in, confined like `read_file`
//! and bounded in all (`instructions.rs`).

mod change;
mod command;
mod confine;
mod environment;
mod error;
mod instructions;
mod list;
mod read;
mod sandbox;
mod search;
mod tools;

pub use change::{
    AppliedChange, MAX_DIFF_BYTES, MAX_DIFF_INPUT_BYTES, MAX_EDIT_FILE_BYTES, PreparedChange,
};
pub use command::{
    CancelHandle, CommandOutcome, CommandRequest, Confinement, DEFAULT_COMMAND_TIMEOUT, Ending,
    Exit, MAX_COMMAND_LOG_BYTES, MAX_COMMAND_TIMEOUT, OUTPUT_HEAD_BYTES, OUTPUT_TAIL_BYTES,
};
pub use confine::{ResolvedPath, Workspace};
pub use environment::{Environment, is_scrubbed_variable, is_secret_variable};
pub use error::WorkspaceError;
pub use instructions::{INSTRUCTION_FILE_NAMES, MAX_INSTRUCTION_FOLDERS, read_instruction_text};
pub use list::{FileList, MAX_LISTED_FILES};
pub use read::{
    BINARY_SNIFF_BYTES, FileRead, LineRange, MAX_LINE_BYTES, MAX_LINE_COUNT_SCAN_BYTES,
    MAX_READ_BYTES, Remaining,
};
pub use sandbox::{
    MAX_SANDBOX_COMPLAINT_BYTES, SANDBOX_CHECK_TIMEOUT, SANDBOX_PROGRAM, Sandbox, SandboxRules,
    SandboxUnavailable,
};
pub use search::{
    ContextLine, MAX_CONTEXT_LINES, MAX_HIT_LINE_BYTES, MAX_SEARCH_HITS,
    MAX_SEARCH_LINE_BUFFER_BYTES, MAX_SEARCH_OUTPUT_BYTES, SearchHit, SearchQuery, SearchResult,
};
pub use tools::{
    ArgumentsError, EditFileArgs, LeaveSandbox, ListFilesArgs, MAX_LEAVE_REASON_BYTES,
    ReadFileArgs, RunCommandArgs, SearchArgs, ToolKind, Touched, WorkspaceCall, WorkspaceToolSpec,
    WriteFileArgs, tool_kind, tool_specs,
};
