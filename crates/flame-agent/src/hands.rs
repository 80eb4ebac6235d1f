//! The workspace tools as the agent offers and runs them (`flame-workspace` does the work): their
//! specs for the model, what a waiting call would do for the approval prompt, and a call's run
//! as the text the model reads, the detail the window's tool card draws and the files it touched
//! for the frame's trail.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use flame_model::{FileTrail, ToolCall, ToolDetail, ToolSpec};
use flame_models::CancellationToken;
use flame_workspace::{
    CancelHandle, CommandOutcome, Ending, Environment, Exit, Touched, Workspace, WorkspaceCall,
    WorkspaceError,
};


/// The workspace tools as offered to a model.
pub(crate) fn specs() -> Vec<ToolSpec> {
    flame_workspace::tool_specs()
        .into_iter()
        .map(|spec| ToolSpec {
            name: spec.name.to_owned(),
            description: spec.description.to_owned(),
            schema: spec.schema,
        })
        .collect()
}

/// What running a workspace call gave.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HandsOutcome {
    /// The text the model reads.
    pub content: String,
    pub is_error: bool,
    pub detail: Option<ToolDetail>,
    pub trail: FileTrail,
}

impl HandsOutcome {
    pub(crate) fn error(message: String) -> HandsOutcome {
        HandsOutcome { content: message, is_error: true, detail: None, trail: FileTrail::default() }
    }

    fn done(content: String, detail: ToolDetail, touched: Touched) -> HandsOutcome {
        let trail = match touched {
            Touched::Files { read, changed } => FileTrail::new(read, changed),
            // A command may read or change anything; which files is not known, so it adds
            // nothing to the trail rather than a guess.
            Touched::Unknown => FileTrail::default(),
        };
        HandsOutcome { content, is_error: false, detail: Some(detail), trail }
    }
}

/// Where a command's whole output goes, and the environment it runs with.
pub(crate) struct CommandSetting<'a> {
    pub environment: &'a Environment,
    /// The file that keeps the whole output; `None` keeps only what the model reads.
    pub output_file: Option<PathBuf>,
}

/// Runs `call` in `workspace`. Blocking work (files, the command) runs off the async thread; Stop
/// (`cancel`) kills a running command's process group. `shown` is the base of the change the
/// person allowed (`Preview::Change`), which a write or edit must still apply to.
pub(crate) async fn run(
    workspace: &Workspace,
    call: &ToolCall,
    command: CommandSetting<'_>,
    shown: Option<String>,
    cancel: &CancellationToken,
) -> HandsOutcome {
    if let Some(why) = call.unreadable_arguments() {
        return HandsOutcome::error(format!(
            "the arguments of {} are not JSON ({why}); call it again with a JSON object",
            call.name
        ));
    }
    let parsed = match WorkspaceCall::parse(&call.name, &call.arguments) {
        Some(Ok(parsed)) => parsed,
        Some(Err(err)) => return HandsOutcome::error(err.to_string()),
        None => return HandsOutcome::error(format!("{} is not a workspace tool", call.name)),
    };
    let workspace = workspace.clone();
    match parsed {
        WorkspaceCall::RunCommand(args) => {
            let request = args.request();
            let environment = command.environment.clone();
            let output_file = command.output_file;
            let handle = CancelHandle::new();
            let stopper = handle.clone();
            let started = Instant::now();
            let mut job = tokio::task::spawn_blocking(move || {
                let kept = output_file.clone();
                let mut log: Box<dyn Write> = match output_file.as_ref().map(std::fs::File::create)
                {
                    Some(Ok(file)) => Box::new(std::io::BufWriter::new(file)),
                    Some(Err(err)) => {
                        tracing::warn!("cannot keep the command's whole output: {err}");
                        Box::new(std::io::sink())
                    }
                    None => Box::new(std::io::sink()),
                };
                let outcome = workspace.run_command(&request, &environment, &handle, &mut log);
                let flushed = log.flush().is_ok();
                (outcome, kept.filter(|_| flushed))
            });
            let joined = tokio::select! {
                joined = &mut job => joined,
                () = cancel.cancelled() => {
                    stopper.cancel();
                    job.await
                }
            };
            match joined {
                Ok((Ok(outcome), output_file)) => {
                    let detail = command_detail(&outcome, started, output_file);
                    let is_error =
                        !matches!(outcome.exit, Exit::Code(0)) || outcome.ending != Ending::Exited;
                    let mut done = HandsOutcome::done(outcome.render(), detail, outcome.touched());
                    // A failing command is still a result the model reads; it is marked an
                    // error so the window and the model see at once that it did not succeed.
                    done.is_error = is_error;
                    done
                }
                Ok((Err(err), _)) => HandsOutcome::error(err.to_string()),
                Err(err) => HandsOutcome::error(format!("the command could not be run: {err}")),
            }
        }
        other => {
            match tokio::task::spawn_blocking(move || run_file_call(&workspace, other, shown)).await
            {
                Ok(Ok(done)) => done,
                Ok(Err(err)) => HandsOutcome::error(err.to_string()),
                Err(err) => HandsOutcome::error(format!("the tool could not be run: {err}")),
            }
        }
    }
}

fn run_file_call(
    workspace: &Workspace,
    call: WorkspaceCall,
    shown: Option<String>,
) -> Result<HandsOutcome, WorkspaceError> {
    Ok(match call {
        WorkspaceCall::ReadFile(args) => {
            let read = workspace.read_file(&args.path, args.range())?;
            let (first_line, last_line) = read.lines.unwrap_or((0, 0));
            let total_lines = match read.remaining {
                None => Some(last_line),
                Some(rest) => rest.lines.map(|left| last_line + left),
            };
            let detail =
                ToolDetail::Read { path: read.path.clone(), first_line, last_line, total_lines };
            HandsOutcome::done(read.render(), detail, read.touched())
        }
        WorkspaceCall::ListFiles(args) => {
            let list = workspace.list_files(args.glob.as_deref())?;
            let detail = ToolDetail::List {
                count: list.total,
                truncated: list.total > list.files.len() as u64,
            };
            HandsOutcome::done(list.render(), detail, list.touched())
        }
        WorkspaceCall::Search(args) => {
            let found = workspace.search(&args.query())?;
            let detail = ToolDetail::Search {
                hits: found.total_matches,
                files: found.files_with_matches,
                truncated: found.total_matches > found.hits.len() as u64,
            };
            HandsOutcome::done(found.render(), detail, found.touched())
        }
        WorkspaceCall::WriteFile(args) => {
            let change = workspace.prepare_write(&args.path, args.content)?;
            change_outcome(workspace.apply_shown(change, shown.as_deref())?)
        }
        WorkspaceCall::EditFile(args) => {
            let change = workspace.prepare_edit(
                &args.path,
                &args.old_string,
                &args.new_string,
                args.replace_all,
            )?;
            change_outcome(workspace.apply_shown(change, shown.as_deref())?)
        }
        // Commands run in `run`, which can stop them; this is never reached with one.
        WorkspaceCall::RunCommand(_) => {
            HandsOutcome::error("run_command cannot run here".to_owned())
        }
    })
}

fn change_outcome(applied: flame_workspace::AppliedChange) -> HandsOutcome {
    let detail = ToolDetail::Change {
        path: applied.path.clone(),
        created: applied.created,
        diff: applied.diff.clone(),
    };
    HandsOutcome::done(applied.render(), detail, applied.touched())
}

fn command_detail(
    outcome: &CommandOutcome,
    started: Instant,
    output_file: Option<PathBuf>,
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
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        output_bytes: outcome.output_bytes,
        output_file: output_file.map(|p| p.display().to_string()),
    }
}
