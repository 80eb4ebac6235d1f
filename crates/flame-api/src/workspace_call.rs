//! One workspace tool call in a frame, as the facade runs it: whether it waits for the person
//! (the approval policy per kind of tool, against the kinds the person allowed for the rest of the
//! tree), what it would do ([`Preview`]: the diff of a write or edit, the exact command), and the
//! person's [`Answer`].

use flame_model::{ToolCall, ToolKind};
use flame_workspace::{Workspace, WorkspaceCall};
use serde::{Deserialize, Serialize};

/// Whether calls of one kind run at once or wait for the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    Auto,
    Ask,
}

/// The approval policy for the workspace tools, per kind: reading runs at once, changing and
/// running ask, unless the settings say otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct ApprovalPolicy {
    /// `read_file`, `list_files`, `search`.
    pub read: Approval,
    /// `write_file`, `edit_file`.
    pub change: Approval,
    /// `run_command`.
    pub run: Approval,
}

impl Default for ApprovalPolicy {
    fn default() -> ApprovalPolicy {
        ApprovalPolicy { read: Approval::Auto, change: Approval::Ask, run: Approval::Ask }
    }
}

impl ApprovalPolicy {
    pub fn for_kind(&self, kind: ToolKind) -> Approval {
        match kind {
            ToolKind::Reading => self.read,
            ToolKind::Changing => self.change,
            ToolKind::Running => self.run,
        }
    }

    /// The policy with `kinds` set to run at once: the command line's `--approve`.
    pub fn allowing(mut self, kinds: &[ToolKind]) -> ApprovalPolicy {
        for kind in kinds {
            match kind {
                ToolKind::Reading => self.read = Approval::Auto,
                ToolKind::Changing => self.change = Approval::Auto,
                ToolKind::Running => self.run = Approval::Auto,
            }
        }
        self
    }
}

/// What a waiting workspace call would do, computed when the question is read.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Preview {
    /// A write or edit: the unified diff it would apply (capped), whether it creates the file,
    /// and the file it was made from (`flame_workspace::PreparedChange::base`), which the answer
    /// hands back so that only this change, on this file, is applied.
    Change { path: String, created: bool, diff: String, base: String },
    /// A command, exactly as it would run, in `folder`, with its timeout. Commands are not
    /// sandboxed: the window says so beside this.
    Command { command: String, folder: String, timeout_seconds: u64 },
    /// A read, list or search, in words.
    Reading { summary: String },
    /// The call cannot run as it is (arguments that do not fit, a path outside the workspace,
    /// an edit whose text is not found). Such a call is not put to the person: the agent runs
    /// it at once and the model reads the error. Only a question stored by an older version
    /// carries it; accepting that one sends the model this error.
    Invalid { message: String },
}

/// The person's answer to a waiting call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Answer {
    /// Run this call. For a write or edit, `shown` is the `base` of the change the person was
    /// shown ([`Preview::Change`]): if the file changed since (or `shown` is missing), nothing is
    /// written and the person is asked again with the change as it would be now.
    Accept {
        #[serde(default)]
        #[specta(optional)]
        shown: Option<String>,
    },
    /// Run this call and, without asking, the rest of the tree's calls of its kind; `shown` as
    /// for [`Answer::Accept`].
    AcceptKind {
        #[serde(default)]
        #[specta(optional)]
        shown: Option<String>,
    },
    /// Do not run it; the model gets a tool error with the person's words, if any.
    Refuse { reason: Option<String> },
}

/// The longest reason for a refusal passed to the model, in bytes; the rest is cut.
pub const MAX_REFUSAL_BYTES: usize = 4 * 1024;

/// What a call would do, for the person deciding on it. Reading the file an edit changes is
/// the only effect.
pub fn preview(workspace: Option<&Workspace>, call: &ToolCall) -> Preview {
    let invalid = |message: String| Preview::Invalid { message };
    let Some(workspace) = workspace else {
        return invalid("this tree has no workspace folder".to_owned());
    };
    if let Some(why) = call.unreadable_arguments() {
        return invalid(format!("the arguments are not JSON: {why}"));
    }
    let parsed = match WorkspaceCall::parse(&call.name, &call.arguments) {
        Some(Ok(parsed)) => parsed,
        Some(Err(err)) => return invalid(err.to_string()),
        None => return invalid(format!("{} is not a workspace tool", call.name)),
    };
    let change = match &parsed {
        WorkspaceCall::WriteFile(args) => workspace.prepare_write(&args.path, args.content.clone()),
        WorkspaceCall::EditFile(args) => {
            workspace.prepare_edit(&args.path, &args.old_string, &args.new_string, args.replace_all)
        }
        WorkspaceCall::RunCommand(args) => {
            let request = args.request();
            return Preview::Command {
                command: request.command,
                folder: workspace.root().display().to_string(),
                timeout_seconds: request
                    .timeout
                    .unwrap_or(flame_workspace::DEFAULT_COMMAND_TIMEOUT)
                    .as_secs(),
            };
        }
        WorkspaceCall::ReadFile(args) => {
            let range = match (args.start_line, args.end_line) {
                (None, None) => String::new(),
                (start, end) => format!(
                    ", lines {}–{}",
                    start.unwrap_or(1),
                    end.map_or_else(|| "end".to_owned(), |e| e.to_string())
                ),
            };
            return Preview::Reading { summary: format!("Read {}{range}", args.path) };
        }
        WorkspaceCall::ListFiles(args) => {
            return Preview::Reading {
                summary: format!("List files matching {}", args.glob.as_deref().unwrap_or("*")),
            };
        }
        WorkspaceCall::Search(args) => {
            return Preview::Reading {
                summary: format!(
                    "Search for /{}/{}",
                    args.pattern,
                    args.glob.as_deref().map(|g| format!(" in {g}")).unwrap_or_default()
                ),
            };
        }
    };
    match change {
        Ok(change) => Preview::Change {
            base: change.base(),
            path: change.path,
            created: change.creates,
            diff: change.diff,
        },
        Err(err) => invalid(err.to_string()),
    }
}

