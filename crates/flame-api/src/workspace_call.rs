//! One workspace tool call in a frame, as one facade operation (`Flame::run_workspace_call`):
//! whether it waits for the person, what it would do, a checkpoint before a call that may change
//! files, the run, a checkpoint after, and the result stored with the files it touched.
//!
//! A call waits when the approval policy (per kind of tool, the settings') asks for its kind and
//! the person has not allowed that kind for the rest of the tree (`Flame::allowed_kinds`). What it
//! would do is a [`Preview`]: the diff of a write or edit, the exact command, a read in words. The
//! call is parsed, and a write or edit prepared, once: the change shown to the person is the one
//! applied, and an accepted change whose file changed since (its `base` is not the one the answer
//! names) is put to the person again as it would be now, never written. A call that cannot run as
//! it is (arguments that do not fit, a path outside the workspace, an edit whose text is not found)
//! is not put to the person: it fails at once and the model reads why. A call that would ask after
//! a push or pop earlier in the same turn is refused, since the window shows the other frame.
//!
//! A command runs in the sandbox or outside it, and asks or not, by the rules of
//! `command_place.rs` ([`RunApproval`]); the preview says where it would run and, when it asks to
//! leave the sandbox, in the model's words why, and [`Answer::AllowNetwork`] lets it and the rest
//! of the tree's sandboxed commands have the network. Commands run through the [`CommandRunner`]
//! the caller passes in, which holds what the facade does not know: the environment the command
//! starts from, how to stop it, and the clock that times it; the facade says where it runs
//! (`Confinement`). Their whole output goes to `Flame::command_output_path`. A checkpoint that
//! cannot be taken does not stop the call; it comes back as a notice, as does, once, a sandbox
//! that cannot start.

use std::io::Write;
use std::time::Duration;

use flame_model::lifecycle::{self, Operation};
use flame_model::{
    Actor, CheckpointReason, CommandPlace, FileTrail, FrameId, LeaveSandbox, MessageId, NewMessage,
    Role, ToolCall, ToolDetail, ToolKind, ToolResult, TreeId,
};
use flame_workspace::{
    CommandOutcome, CommandRequest, Confinement, Ending, Exit, ListFilesArgs, PreparedChange,
    ReadFileArgs, RunCommandArgs, SearchArgs, Touched, Workspace, WorkspaceCall, WorkspaceError,
};
use serde::{Deserialize, Serialize};

use crate::command_place::{CommandFacts, RunApproval};
use crate::{ApiError, ErrorCode, Flame};

/// Whether calls of one kind run at once or wait for the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    Auto,
    Ask,
}

/// The approval policy for the workspace tools, per kind: reading runs at once, changing and
/// running ask, unless the settings say otherwise. Commands have a third level, automatic in the
/// sandbox ([`RunApproval`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct ApprovalPolicy {
    /// `read_file`, `list_files`, `search`.
    pub read: Approval,
    /// `write_file`, `edit_file`.
    pub change: Approval,
    /// `run_command`.
    pub run: RunApproval,
}

impl Default for ApprovalPolicy {
    fn default() -> ApprovalPolicy {
        ApprovalPolicy { read: Approval::Auto, change: Approval::Ask, run: RunApproval::Ask }
    }
}

impl ApprovalPolicy {
    /// Whether a call of `kind` may ask the person: for reads and changes, whether it does; a
    /// command's question also depends on where it would run (see `command_place.rs`).
    pub fn may_ask(&self, kind: ToolKind) -> bool {
        match kind {
            ToolKind::Reading => self.read == Approval::Ask,
            ToolKind::Changing => self.change == Approval::Ask,
            ToolKind::Running => self.run != RunApproval::Auto,
        }
    }

    /// The policy with `kinds` set to run at once: the command line's `--approve`.
    pub fn allowing(mut self, kinds: &[ToolKind]) -> ApprovalPolicy {
        for kind in kinds {
            match kind {
                ToolKind::Reading => self.read = Approval::Auto,
                ToolKind::Changing => self.change = Approval::Auto,
                ToolKind::Running => self.run = RunApproval::Auto,
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
    /// A command, exactly as it would run, in `folder`, with its timeout, and where it would
    /// run.
    Command { command: String, folder: String, timeout_seconds: u64, place: PlacePreview },
    /// A read, list or search, in words.
    Reading { summary: String },
    /// The call cannot run as it is (arguments that do not fit, a path outside the workspace,
    /// an edit whose text is not found). Such a call is not put to the person: the agent runs
    /// it at once and the model reads the error. Only a question stored by an older version
    /// carries it; accepting that one sends the model this error.
    Invalid { message: String },
}

/// Where a waiting command would run, for the person deciding on it.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlacePreview {
    /// In the sandbox, with the network (the tree allows it) or without.
    Sandbox { network: bool },
    /// It asks to leave the sandbox: for the network (then it runs in the sandbox with the
    /// network on) or all of it, for `reason`, in the model's words.
    LeaveSandbox { leave: LeaveSandbox, reason: String },
    /// There is no sandbox on this computer (`why`): with the person's full rights.
    NoSandbox { why: String },
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
    /// Run this command, which asked for the network, with it, and let the rest of the tree's
    /// sandboxed commands have the network too, without asking.
    AllowNetwork,
    /// Do not run it; the model gets a tool error with the person's words, if any.
    Refuse { reason: Option<String> },
}

/// The longest reason for a refusal passed to the model, in bytes; the rest is cut.
pub const MAX_REFUSAL_BYTES: usize = 4 * 1024;

/// Runs a workspace command for the facade. The caller holds what the facade does not know: the
/// environment the command starts from, how to stop it, and the clock that times it.
pub trait CommandRunner {
    /// Runs `request` in `workspace`, confined as the facade decided, writing its whole output
    /// to `log`; returns how it ended and how long it took.
    fn run(
        &self,
        workspace: &Workspace,
        request: &CommandRequest,
        confinement: Confinement<'_>,
        log: &mut dyn Write,
    ) -> (Result<CommandOutcome, WorkspaceError>, Duration);
}

/// A workspace tool call in a frame, as [`Flame::run_workspace_call`] takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallInFrame {
    pub frame: FrameId,
    pub call: ToolCall,
    /// The person's answer, when this is the call that waited for one.
    pub answer: Option<Answer>,
    pub policy: ApprovalPolicy,
    /// The frame a push or pop earlier in the same turn moved the conversation to, if one did.
    pub moved_to: Option<FrameId>,
}

/// How a workspace call went.
#[derive(Debug, Clone, PartialEq)]
pub enum CallOutcome {
    /// The call waits for the person: what to put to them. Nothing ran and nothing was stored.
    Waiting { tool_kind: ToolKind, preview: Preview },
    /// The call ran, failed or was refused.
    Done(CallResult),
}

/// What a tool call gave: the text the model reads, the detail the window's tool card draws, and
/// the files it read and changed for the frame's trail.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutcome {
    pub content: String,
    pub is_error: bool,
    pub detail: Option<ToolDetail>,
    pub trail: FileTrail,
}

impl ToolOutcome {
    /// A failure the model reads.
    pub fn error(content: String) -> ToolOutcome {
        ToolOutcome { content, is_error: true, ..ToolOutcome::default() }
    }

    fn done(content: String, detail: ToolDetail, touched: Touched) -> ToolOutcome {
        let trail = match touched {
            Touched::Files { read, changed } => FileTrail::new(read, changed),
            // A command may read or change anything; which files is not known here (the
            // checkpoint after it says), so it adds nothing rather than a guess.
            Touched::Unknown => FileTrail::default(),
        };
        ToolOutcome { content, is_error: false, detail: Some(detail), trail }
    }
}

/// A workspace call that ran, failed or was refused.
#[derive(Debug, Clone, PartialEq)]
pub struct CallResult {
    pub outcome: ToolOutcome,
    /// The stored result; `None` when the frame takes no more messages.
    pub saved: Option<MessageId>,
    /// What went wrong around the call without stopping it: a checkpoint not taken.
    pub notices: Vec<String>,
}

/// What the model is told when the person refuses `call`, with their words (cut to
/// [`MAX_REFUSAL_BYTES`]).
pub fn refusal_text(call: &ToolCall, reason: Option<&str>) -> String {
    let what = if flame_workspace::tool_kind(&call.name).is_some() {
        format!("The person refused this {} call", call.name)
    } else {
        "The person refused this frame change; carry on in the current frame".to_owned()
    };
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(reason) => {
            let mut end = reason.len().min(MAX_REFUSAL_BYTES);
            while !reason.is_char_boundary(end) {
                end -= 1;
            }
            format!("{what}. They said: {}", &reason[..end])
        }
        None => format!("{what}."),
    }
}

/// What the model is told of a call that would ask the person after the conversation moved to
/// frame `to` in the same turn: the question would be asked in a frame the window no longer
/// shows.
pub fn refusal_after_move(to: &FrameId) -> String {
    format!(
        "This call came after a frame change in the same turn, which moved the conversation to frame {to}; make it again there if it is still needed."
    )
}

/// A workspace call parsed, and a write or edit prepared, against the workspace it runs in.
struct Prepared {
    workspace: Workspace,
    action: Action,
}

enum Action {
    Change(PreparedChange),
    Command(RunCommandArgs),
    ReadFile(ReadFileArgs),
    ListFiles(ListFilesArgs),
    Search(SearchArgs),
}

impl Prepared {
    /// `call` against `tree`'s workspace, or the error the model reads when it cannot run.
    fn new(
        workspace: Result<Option<Workspace>, String>,
        call: &ToolCall,
    ) -> Result<Prepared, String> {
        let workspace = match workspace {
            Ok(Some(workspace)) => workspace,
            Ok(None) => {
                return Err("This tree has no workspace folder, so there are no files to work on; ask the person to choose one for the tree.".to_owned());
            }
            Err(message) => {
                return Err(format!(
                    "{message}; ask the person to choose the tree's workspace folder again"
                ));
            }
        };
        if let Some(why) = call.unreadable_arguments() {
            return Err(format!(
                "the arguments of {} are not JSON ({why}); call it again with a JSON object",
                call.name
            ));
        }
        let parsed = match WorkspaceCall::parse(&call.name, &call.arguments) {
            Some(Ok(parsed)) => parsed,
            Some(Err(err)) => return Err(err.to_string()),
            None => return Err(format!("{} is not a workspace tool", call.name)),
        };
        let action = match parsed {
            WorkspaceCall::WriteFile(args) => Action::Change(
                workspace.prepare_write(&args.path, args.content).map_err(|e| e.to_string())?,
            ),
            WorkspaceCall::EditFile(args) => Action::Change(
                workspace
                    .prepare_edit(&args.path, &args.old_string, &args.new_string, args.replace_all)
                    .map_err(|e| e.to_string())?,
            ),
            WorkspaceCall::RunCommand(args) => Action::Command(args),
            WorkspaceCall::ReadFile(args) => Action::ReadFile(args),
            WorkspaceCall::ListFiles(args) => Action::ListFiles(args),
            WorkspaceCall::Search(args) => Action::Search(args),
        };
        Ok(Prepared { workspace, action })
    }

    /// What the call would do, for the person deciding on it; a command's place is decided from
    /// `facts`.
    fn preview(&self, facts: Option<&CommandFacts>) -> Preview {
        match &self.action {
            Action::Change(change) => Preview::Change {
                base: change.base(),
                path: change.path.clone(),
                created: change.creates,
                diff: change.diff.clone(),
            },
            Action::Command(args) => Preview::Command {
                command: args.command.clone(),
                folder: self.workspace.root().display().to_string(),
                timeout_seconds: args
                    .request()
                    .timeout
                    .unwrap_or(flame_workspace::DEFAULT_COMMAND_TIMEOUT)
                    .as_secs(),
                place: match (facts.map(|f| &f.sandbox), args.leave_sandbox) {
                    (None, _) => PlacePreview::NoSandbox {
                        why: "whether the sandbox starts here was not checked".to_owned(),
                    },
                    (Some(Err(unavailable)), _) => {
                        PlacePreview::NoSandbox { why: unavailable.reason.clone() }
                    }
                    (Some(Ok(_)), Some(leave)) => PlacePreview::LeaveSandbox {
                        leave,
                        reason: args.reason.clone().unwrap_or_default(),
                    },
                    (Some(Ok(_)), None) => {
                        PlacePreview::Sandbox { network: facts.is_some_and(|f| f.network_allowed) }
                    }
                },
            },
            Action::ReadFile(args) => {
                let range = match (args.start_line, args.end_line) {
                    (None, None) => String::new(),
                    (start, end) => format!(
                        ", lines {}–{}",
                        start.unwrap_or(1),
                        end.map_or_else(|| "end".to_owned(), |e| e.to_string())
                    ),
                };
                Preview::Reading { summary: format!("Read {}{range}", args.path) }
            }
            Action::ListFiles(args) => Preview::Reading {
                summary: format!("List files matching {}", args.glob.as_deref().unwrap_or("*")),
            },
            Action::Search(args) => Preview::Reading {
                summary: format!(
                    "Search for /{}/{}",
                    args.pattern,
                    args.glob.as_deref().map(|g| format!(" in {g}")).unwrap_or_default()
                ),
            },
        }
    }

    /// What a command asks to leave of the sandbox; `None` for any other call.
    fn leave(&self) -> Option<LeaveSandbox> {
        match &self.action {
            Action::Command(args) => args.leave_sandbox,
            _ => None,
        }
    }

    /// The base of the change the call would make now, for a write or edit.
    fn base(&self) -> Option<String> {
        match &self.action {
            Action::Change(change) => Some(change.base()),
            _ => None,
        }
    }

    /// Runs the call. `shown` is the base of the change the person allowed, which a write or
    /// edit must still apply to; `output_file` keeps a command's whole output, which runs where
    /// `place` says.
    fn run(
        self,
        shown: Option<&str>,
        output_file: Option<std::path::PathBuf>,
        runner: &dyn CommandRunner,
        place: Option<Placed<'_>>,
    ) -> ToolOutcome {
        let done = match self.action {
            Action::Change(change) => self.workspace.apply_shown(change, shown).map(|applied| {
                let detail = ToolDetail::Change {
                    path: applied.path.clone(),
                    created: applied.created,
                    diff: applied.diff.clone(),
                };
                ToolOutcome::done(applied.render(), detail, applied.touched())
            }),
            Action::Command(args) => {
                let Some(place) = place else {
                    return ToolOutcome::error("the command's place was not decided".to_owned());
                };
                return run_command(&self.workspace, &args.request(), output_file, runner, place);
            }
            Action::ReadFile(args) => read_file(&self.workspace, &args),
            Action::ListFiles(args) => {
                self.workspace.list_files(args.glob.as_deref()).map(|list| {
                    let detail = ToolDetail::List {
                        count: list.total,
                        truncated: list.total > list.files.len() as u64,
                    };
                    ToolOutcome::done(list.render(), detail, list.touched())
                })
            }
            Action::Search(args) => self.workspace.search(&args.query()).map(|found| {
                let detail = ToolDetail::Search {
                    hits: found.total_matches,
                    files: found.files_with_matches,
                    truncated: found.total_matches > found.hits.len() as u64,
                };
                ToolOutcome::done(found.render(), detail, found.touched())
            }),
        };
        done.unwrap_or_else(|err| ToolOutcome::error(err.to_string()))
    }
}

/// Where a command runs, with what the sandbox needs when it is there.
struct Placed<'a> {
    place: CommandPlace,
    facts: &'a CommandFacts,
    rules: flame_workspace::SandboxRules,
}

fn read_file(workspace: &Workspace, args: &ReadFileArgs) -> Result<ToolOutcome, WorkspaceError> {
    let read = workspace.read_file(&args.path, args.range())?;
    let (first_line, last_line) = read.lines.unwrap_or((0, 0));
    let total_lines = match read.remaining {
        None => Some(last_line),
        Some(rest) => rest.lines.map(|left| last_line + left),
    };
    let detail = ToolDetail::Read { path: read.path.clone(), first_line, last_line, total_lines };
    Ok(ToolOutcome::done(read.render(), detail, read.touched()))
}

fn run_command(
    workspace: &Workspace,
    request: &CommandRequest,
    output_file: Option<std::path::PathBuf>,
    runner: &dyn CommandRunner,
    placed: Placed<'_>,
) -> ToolOutcome {
    let confinement = match (placed.place, &placed.facts.sandbox) {
        (CommandPlace::Sandbox { .. }, Ok(sandbox)) => Confinement::Sandbox(sandbox, &placed.rules),
        (CommandPlace::Sandbox { .. }, Err(unavailable)) => {
            return ToolOutcome::error(format!("the command did not run: {unavailable}"));
        }
        (CommandPlace::Outside, _) => Confinement::None,
    };
    let mut log: Box<dyn Write> = match output_file.as_ref().map(std::fs::File::create) {
        Some(Ok(file)) => Box::new(std::io::BufWriter::new(file)),
        Some(Err(err)) => {
            tracing::warn!("cannot keep the command's whole output: {err}");
            Box::new(std::io::sink())
        }
        None => Box::new(std::io::sink()),
    };
    let (outcome, took) = runner.run(workspace, request, confinement, &mut log);
    let kept = output_file.filter(|_| log.flush().is_ok());
    match outcome {
        Ok(outcome) => {
            let detail = command_detail(&outcome, took, kept, placed.place);
            let mut done = ToolOutcome::done(outcome.render(), detail, outcome.touched());
            // A failing command is still a result the model reads; it is marked an error so the
            // window and the model see at once that it did not succeed.
            done.is_error =
                !matches!(outcome.exit, Exit::Code(0)) || outcome.ending != Ending::Exited;
            done
        }
        Err(err) => ToolOutcome::error(err.to_string()),
    }
}

fn command_detail(
    outcome: &CommandOutcome,
    took: Duration,
    output_file: Option<std::path::PathBuf>,
    place: CommandPlace,
) -> ToolDetail {
    let (exit_code, ending) = match (outcome.ending, outcome.exit) {
        (Ending::TimedOut, _) => (None, format!("timed out after {} s", outcome.timeout.as_secs())),
        (Ending::Cancelled, _) => (None, "stopped".to_owned()),
        (Ending::Exited, Exit::Code(code)) => (Some(code), format!("exit code {code}")),
        (Ending::Exited, Exit::Signal(signal)) => (None, format!("killed by signal {signal}")),
    };
    ToolDetail::Command {
        command: outcome.command.clone(),
        exit_code,
        ending,
        duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        output_bytes: outcome.output_bytes,
        output_file: output_file.map(|p| p.display().to_string()),
        place: Some(place),
    }
}

impl Flame {
    /// Runs one workspace tool call in a frame, or says what to ask the person first (see the
    /// module's documentation): the approval decision, the preview, the checkpoints around a
    /// call that may change files, the run (commands through `runner`) and the stored result
    /// with its file trail. A person's answer that allows the call's kind for the rest of the
    /// tree is recorded as theirs. Runs files and git: call it off a window's thread.
    pub fn run_workspace_call(
        &self,
        actor: Actor,
        request: CallInFrame,
        runner: &dyn CommandRunner,
    ) -> Result<CallOutcome, ApiError> {
        let CallInFrame { frame, call, answer, policy, moved_to } = request;
        let Some(kind) = flame_workspace::tool_kind(&call.name) else {
            return Err(ApiError::new(
                ErrorCode::Invalid,
                format!("{} is not a workspace tool", call.name),
            ));
        };
        let tree = self.frame(&frame)?.frame.tree;
        let prepared = Prepared::new(self.open_workspace(&tree), &call);
        // Only a command needs the sandbox, which the first one starts to check.
        let facts = match (kind, &prepared) {
            (ToolKind::Running, Ok(_)) => Some(self.command_facts(&tree)?),
            _ => None,
        };
        let waiting = |prepared: &Result<Prepared, String>| CallOutcome::Waiting {
            tool_kind: kind,
            preview: match prepared {
                Ok(prepared) => prepared.preview(facts.as_ref()),
                Err(message) => Preview::Invalid { message: message.clone() },
            },
        };
        let shown = match &answer {
            Some(Answer::Accept { shown } | Answer::AcceptKind { shown }) => shown.clone(),
            _ => None,
        };
        // An allowed write or edit is applied only on the file the person was shown; a file
        // changed since is put to them again, as the change would be now.
        if matches!(answer, Some(Answer::Accept { .. } | Answer::AcceptKind { .. }))
            && let Ok(ready) = &prepared
            && let Some(now) = ready.base()
            && shown.as_deref() != Some(now.as_str())
        {
            return Ok(waiting(&prepared));
        }
        let allowed = self.allowed_kinds(&tree)?.contains(&kind);
        let leave = prepared.as_ref().ok().and_then(Prepared::leave);
        let asks = !allowed
            && match &facts {
                Some(facts) => facts.asks(policy.run, leave),
                None => policy.may_ask(kind),
            };
        let refusal = match answer {
            Some(Answer::Refuse { reason }) => Some(refusal_text(&call, reason.as_deref())),
            Some(Answer::AcceptKind { .. }) => {
                if !allowed {
                    self.allow_kind(Actor::Person, &tree, kind)?;
                }
                None
            }
            Some(Answer::AllowNetwork) => {
                if leave != Some(LeaveSandbox::Network) {
                    return Err(ApiError::new(
                        ErrorCode::Invalid,
                        format!(
                            "only a command that asks for the network can be answered by allowing the network; answer this {} call by allowing or refusing it",
                            call.name
                        ),
                    ));
                }
                self.allow_network(Actor::Person, &tree)?;
                None
            }
            Some(Answer::Accept { .. }) => None,
            None if asks => match (&moved_to, &prepared) {
                (Some(to), _) => Some(refusal_after_move(to)),
                // A call that cannot run as it is only sends the model its error, so the person
                // is not asked to allow it.
                (None, Err(_)) => None,
                (None, Ok(_)) => return Ok(waiting(&prepared)),
            },
            None => None,
        };
        let mut notices = Vec::new();
        let outcome = match (refusal, prepared) {
            (Some(text), _) => ToolOutcome::error(text),
            (None, Err(message)) => ToolOutcome::error(message),
            (None, Ok(prepared)) => {
                let changes = kind != ToolKind::Reading;
                if changes {
                    self.checkpoint_around(
                        &frame,
                        CheckpointReason::BeforeCall,
                        &call,
                        &mut notices,
                    );
                }
                let output_file = matches!(prepared.action, Action::Command(_))
                    .then(|| self.command_output_path(&frame, &call.id).ok())
                    .flatten();
                let placed = facts.as_ref().map(|facts| {
                    let place = facts.place(leave);
                    let network = matches!(place, CommandPlace::Sandbox { network: true });
                    Placed { place, facts, rules: self.sandbox_rules(network) }
                });
                if let Some(unavailable) = facts.as_ref().and_then(CommandFacts::unavailable) {
                    notices.extend(self.sandbox_notice_once(unavailable, policy.run));
                }
                let mut outcome = prepared.run(shown.as_deref(), output_file, runner, placed);
                if changes {
                    // What the snapshot after the call finds changed is what the call changed:
                    // for a command, the only way to know.
                    let changed = self.checkpoint_around(
                        &frame,
                        CheckpointReason::AfterCall,
                        &call,
                        &mut notices,
                    );
                    outcome.trail = FileTrail::new(
                        std::mem::take(&mut outcome.trail.read),
                        outcome.trail.changed.drain(..).chain(changed),
                    );
                }
                outcome
            }
        };
        let saved = self.record_tool_result(actor, &frame, &call, &outcome)?;
        Ok(CallOutcome::Done(CallResult { outcome, saved, notices }))
    }

    /// What `call`, waiting in `tree`, would do, for the person deciding on it.
    pub fn preview_workspace_call(&self, tree: &TreeId, call: &ToolCall) -> Preview {
        match Prepared::new(self.open_workspace(tree), call) {
            Ok(prepared) => {
                // A tree whose permission cannot be read is shown as without the network.
                let facts = matches!(prepared.action, Action::Command(_)).then(|| CommandFacts {
                    sandbox: self.sandbox(),
                    network_allowed: self.network_allowed(tree).unwrap_or(false),
                });
                prepared.preview(facts.as_ref())
            }
            Err(message) => Preview::Invalid { message },
        }
    }

    /// Stores `outcome` as the result of `call` in `frame`, with the files it touched, unless the
    /// frame takes no more messages: a pop earlier in the turn finished it, its log records the
    /// pop itself, and an unanswered call is never sent again.
    pub fn record_tool_result(
        &self,
        actor: Actor,
        frame: &FrameId,
        call: &ToolCall,
        outcome: &ToolOutcome,
    ) -> Result<Option<MessageId>, ApiError> {
        let now = self.frame(frame)?.frame;
        if lifecycle::check(Operation::AddMessage, &now.id, &now.title, now.status).is_err() {
            return Ok(None);
        }
        let mut result = NewMessage::text(Role::Tool, outcome.content.clone());
        result.tool_result = Some(ToolResult {
            detail: outcome.detail.clone(),
            is_error: outcome.is_error,
            name: Some(call.name.clone()),
            tool_call_id: call.id.clone(),
        });
        Ok(Some(self.add_tool_result(actor, frame, &result, &outcome.trail)?.id))
    }

    /// The workspace of `tree`: `None` when it has none, an error message when its folder cannot
    /// be opened (moved or deleted since it was chosen) or now leads into Flame's own folders
    /// (replaced by a link since: what the opened folder is, not its name, is checked).
    pub fn open_workspace(&self, tree: &TreeId) -> Result<Option<Workspace>, String> {
        let Some(folder) = self.tree(tree).map_err(|e| e.message)?.workspace else {
            return Ok(None);
        };
        let workspace = Workspace::open(&folder).map_err(|e| e.to_string())?;
        self.check_workspace_in_use(workspace.root()).map_err(|e| e.message)?;
        Ok(Some(workspace))
    }

    /// Takes a checkpoint of `frame`'s workspace around `call`; returns the files changed since
    /// the one before (after a call). A failure becomes a notice and the call goes on: the
    /// frame's changes then say what is missing.
    fn checkpoint_around(
        &self,
        frame: &FrameId,
        reason: CheckpointReason,
        call: &ToolCall,
        notices: &mut Vec<String>,
    ) -> Vec<String> {
        match self.checkpoint(frame, reason, Some(&call.id)) {
            Ok(taken) => taken.map(|t| t.changed).unwrap_or_default(),
            Err(err) => {
                notices
                    .push(format!("No checkpoint was taken around {}: {}", call.name, err.message));
                Vec::new()
            }
        }
    }
}
