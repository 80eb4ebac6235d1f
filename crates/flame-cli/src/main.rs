//! `flame`: the frame tree from a terminal or a script, over the same data directory as the app.
//!
//! Every command is a thin call into `flame-api`; this crate only parses arguments and prints.
//! A refusal exits with status 1 and one line naming the frame, its status and what is allowed
//! (with `--json`, that line is `{"code", "message"}`); a usage error exits with status 2.
//!
//! `flame replay` (`replay.rs` draws its table, in tokens and in input dollars under `--provider
//! anthropic|openai`'s cache) and `flame models` (`flame_settings::model_list`'s list with each
//! model's window and source) open no data directory. `flame sessions`, `flame follow [--once]`
//! (then the facade's follower until stopped) and `flame unfollow` are in `follow.rs`; `flame
//! context FRAME` prints what the frame's next call sends, with lines on its opening and the cache,
//! and `--rebuild` has the opening made again first. `flame tree new --workspace DIR` and `flame
//! tree workspace TREE DIR|--none` set a tree's workspace; `flame search WORDS [--tree ID] [--limit
//! N]` prints each hit's frame id, path and snippet with the matched words in brackets. `flame
//! status` ends each frame's line with its cost, and `--json` gives every frame a `cost`
//! (`render::StatusJson`), at the settings' prices, which every command hands to the facade. `flame
//! chat --approve read,change,run` lets those kinds of workspace call run and, having no one to
//! ask, refuses any other call that would ask, telling the person and the model which `--approve`
//! would allow it.

// The command line's whole job is printing to the terminal.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod chat;
mod follow;
mod gateway;
mod mcp_servers;
mod render;
mod replay;
mod terminal;

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use flame_api::{
    ApiError, DataDir, ExportFormat, ExportScope, Flame, FlameConfig, ImportFormat, PlanSpec,
    PopRequest,
};
use flame_model::budget::FrameBudget;
use flame_model::lifecycle::PopStatus;
use flame_model::{Actor, FrameId, Role, TreeId};
use flame_settings::{Settings, SettingsFile};
use flame_workspace::{Environment, Sandbox};
use serde::Serialize;
use serde_json::json;

use args::{
    Cli, Command, ContextFormat, ExportFormatArg, ExportScopeArg, SourceFormat, TreeCommand,
};

const ACTOR: Actor = Actor::Cli;

fn main() -> ExitCode {
    // Before anything else runs: the keys are read from this copy, and no command `flame chat`
    // runs can read them from this process (see `Environment::withdraw_secrets`).
    let (environment, withdrawn) = Environment::withdraw_secrets();
    let cli = Cli::parse();
    let filter = environment.get("FLAME_LOG").unwrap_or_else(|| "warn".to_owned());
    let data_dir = match &cli.home {
        Some(home) => {
            let cwd = std::env::current_dir().ok();
            DataDir::resolve(Some(home.as_os_str()), None, cwd.as_deref())
        }
        None => DataDir::from_env(),
    };
    let log_dir = data_dir.as_ref().ok().map(DataDir::diagnostics_dir);
    // A data directory that cannot take the diagnostic log is reported by the command itself,
    // in its one line, so the logging problem is not printed as well.
    let _logging = flame_api::logging::init(&filter, log_dir.as_deref());
    if let Err(err) = withdrawn {
        eprintln!("flame: keys in the environment stay readable by the commands run: {err}");
    }
    let environment = Arc::new(environment);

    // A replay reads a file and nothing else, so it needs no data directory.
    let result = match &cli.command {
        Command::Replay { path, format, session, calls, provider, cache_lifetime } => {
            let options = replay::options(*provider, *cache_lifetime);
            replay::run(
                path,
                format.map(source_format),
                session.as_deref(),
                &options,
                *calls,
                cli.json,
            )
        }
        // The models come from the settings, the providers and local servers, not the data.
        Command::Models { refresh } => list_models(*refresh, cli.json, &environment),
        // The MCP servers are settings, and other agents' files.
        Command::McpServers { command } => mcp_servers::run(command, cli.json, &environment),
        _ => {
            data_dir.and_then(open).map(Arc::new).and_then(|flame| run(&flame, &cli, &environment))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            if cli.json {
                eprintln!("{}", json!({ "code": err.code, "message": err.message }));
            } else {
                eprintln!("flame: {}", err.message);
            }
            ExitCode::FAILURE
        }
    }
}

/// Opens Flame on `data_dir` with what the facade works with from the person's settings, read
/// without the keys: costs (status, exports) at their prices, contexts with their masking, their
/// checkpoint cap. Settings that cannot be read leave the defaults and are reported once Flame is
/// open (in its diagnostic log), so a data directory that cannot be used is the one line a failed
/// command prints.
fn open(data_dir: DataDir) -> Result<Flame, ApiError> {
    let path = Settings::default_path();
    let settings = Settings::without_keys(path.as_deref());
    let config = settings
        .as_ref()
        .map_or_else(|_| FlameConfig::default(), |s| s.facade_config(path.as_deref()));
    let flame = Flame::open(data_dir, config)?;
    if let Err(err) = settings {
        tracing::warn!("using the default settings: {}", err.message);
    }
    Ok(flame)
}

fn run(flame: &Arc<Flame>, cli: &Cli, environment: &Arc<Environment>) -> Result<(), ApiError> {
    let out = Output { json: cli.json };
    let settings = Settings::default_path();
    // The settings' folder may hold keys and the approval policy: never a workspace.
    flame.add_own_folders(settings.as_deref().and_then(Path::parent).map(Path::to_path_buf));
    // Commands `flame chat` runs start from this environment, and run in its sandbox.
    flame.use_sandbox(Sandbox::from_environment(environment));
    match &cli.command {
        Command::Tree { command: TreeCommand::New { title, criteria, workspace } } => {
            let tree = flame.create_tree(ACTOR, title, criteria, workspace.as_deref())?;
            out.print(&json!({ "tree": tree.id, "root": tree.root }), || {
                format!("tree {}\nroot {}", tree.id, tree.root)
            })
        }
        Command::Tree { command: TreeCommand::Workspace { tree, dir, none: _ } } => {
            let tree = flame.set_workspace(ACTOR, &TreeId::parse(tree)?, dir.as_deref())?;
            out.print(&json!({ "tree": tree.id, "workspace": tree.workspace }), || {
                render::workspace_line(&tree)
            })
        }
        Command::Tree { command: TreeCommand::List } => {
            let trees = flame.trees()?;
            out.print(&trees, || render::tree_list(&trees))
        }
        Command::Status { tree } => {
            let tree = tree.as_deref().map(TreeId::parse).transpose()?;
            let status = flame.status(tree.as_ref())?;
            let costs = flame.tree_costs(Some(&status.tree.id))?;
            let budgets = flame.tree_budgets(Some(&status.tree.id))?;
            out.print(&render::StatusJson::new(&status, &costs, &budgets), || {
                render::status(&status, &costs, &budgets)
            })
        }
        Command::Push { title, criteria, parent } => {
            let frame = flame.push(ACTOR, frame_id(parent)?.as_ref(), title, criteria)?;
            out.frame(flame, &frame.id)
        }
        Command::Plan { title, criteria, parent, position } => {
            let spec = PlanSpec {
                title: title.clone(),
                success_criteria: criteria.clone(),
                budget: None,
                children: vec![],
            };
            let frames = flame.plan(ACTOR, frame_id(parent)?.as_ref(), *position, &[spec])?;
            out.frame(flame, &frames[0].id)
        }
        Command::Start { id } => out.frame(flame, &flame.start(ACTOR, &FrameId::parse(id)?)?.id),
        Command::Resume { id } => out.frame(flame, &flame.resume(ACTOR, &FrameId::parse(id)?)?.id),
        Command::Retry { id, from_start } => {
            let id = FrameId::parse(id)?;
            let retried = if *from_start {
                flame.retry_from_start(ACTOR, &id)?
            } else {
                flame.retry(ACTOR, &id)?
            };
            out.frame(flame, &retried.id)
        }
        Command::Diff { id, subtree } => {
            let changes = flame.frame_changes(&FrameId::parse(id)?, *subtree)?;
            out.print(&changes, || render::changes(&changes))
        }
        Command::Rollback { id } => {
            let outcome = flame.rollback(ACTOR, &FrameId::parse(id)?)?;
            out.print(&outcome, || render::rollback(&outcome))
        }
        Command::Budget { id, usd, tokens, calls, clear } => {
            let id = FrameId::parse(id)?;
            let view = if *clear {
                flame.set_budget(ACTOR, &id, None)?
            } else if usd.is_none() && tokens.is_none() && calls.is_none() {
                flame.frame_budget(&id)?
            } else {
                let micro_usd = usd
                    .map(flame_model::budget::micro_usd)
                    .transpose()
                    .map_err(|why| ApiError::new(flame_api::ErrorCode::Invalid, why))?;
                let budget = FrameBudget { micro_usd, tokens: *tokens, tool_calls: *calls };
                flame.set_budget(ACTOR, &id, Some(budget))?
            };
            out.print(&view, || render::budget(&view, |frame| flame.frame_name(frame)))
        }
        Command::Focus { id } => out.frame(flame, &flame.focus(ACTOR, &FrameId::parse(id)?)?.id),
        Command::Delete { id } => {
            let deleted = flame.delete(ACTOR, &FrameId::parse(id)?)?;
            out.print(&json!({ "deleted": deleted }), || render::id_list("deleted", &deleted))
        }
        Command::Pop { id, frame, status, results, compacted, artifact, decision, reason } => {
            let request = PopRequest {
                status: PopStatus::parse(status)?,
                results: results.clone(),
                results_compacted: compacted.clone(),
                artifacts: artifact.clone(),
                decisions: decision.clone(),
                reason: reason.clone(),
            };
            let popped = match frame_id(frame)? {
                Some(expected) => flame.pop_focused(ACTOR, &expected, &request)?,
                None => flame.pop(ACTOR, frame_id(id)?.as_ref(), &request)?,
            };
            out.frame(flame, &popped.id)
        }
        Command::Invalidate { id, reason } => {
            let invalidated = flame.invalidate(ACTOR, &FrameId::parse(id)?, reason.as_deref())?;
            out.print(&json!({ "invalidated": invalidated }), || {
                render::id_list("invalidated", &invalidated)
            })
        }
        Command::Move { id, parent, position } => {
            let frame = flame.move_frame(
                ACTOR,
                &FrameId::parse(id)?,
                frame_id(parent)?.as_ref(),
                *position,
            )?;
            out.frame(flame, &frame.id)
        }
        Command::Edit { id, title, criteria } => {
            let frame =
                flame.edit(ACTOR, &FrameId::parse(id)?, title.as_deref(), criteria.as_deref())?;
            out.frame(flame, &frame.id)
        }
        Command::Append { id, role, text } => {
            let role = match role.as_str() {
                "user" => Role::User,
                "assistant" => Role::Assistant,
                "note" => Role::Note,
                other => {
                    return Err(flame_model::FrameError::Invalid(format!(
                        "--role is user, assistant or note, not {other:?}"
                    ))
                    .into());
                }
            };
            // `-` reads the text from standard input, for messages too long for an argument.
            let text = if text == "-" { terminal::read_stdin_message()? } else { text.clone() };
            let message = flame.append(ACTOR, &FrameId::parse(id)?, role, &text)?;
            out.print(&message, || {
                format!(
                    "message {} added to {} ({} tokens)",
                    message.id, message.frame, message.tokens
                )
            })
        }
        Command::Chat { id, text, provider, model, approve } => {
            let approve: Vec<_> = approve.iter().map(|a| a.kind()).collect();
            let frame = FrameId::parse(id)?;
            chat::run(flame, environment, &frame, text, *provider, model.as_deref(), &approve)
        }
        Command::Mcp { tree } => {
            let tree = tree.as_deref().map(TreeId::parse).transpose()?;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| ApiError::internal("start the MCP runtime", e))?;
            let server = flame_mcp::FlameServer::new(flame.clone(), tree);
            runtime
                .block_on(flame_mcp::serve_stdio(server))
                .map_err(|e| ApiError::internal("serve MCP", e))
        }
        Command::Context { id, budget, format, rebuild } => {
            let id = FrameId::parse(id)?;
            if *rebuild {
                flame.rebuild_context(ACTOR, &id)?;
            }
            let doc = flame.context(Some(&id), budget.map(flame_api::Budget::of))?;
            let json = cli.json || *format == ContextFormat::Json;
            Output { json }.print(&doc, || render::context(&doc))
        }
        Command::Import { path, format, no_segment, session } => {
            let mut last_percent = u64::MAX;
            // Progress is for a person watching; scripts and pipes get only the one result.
            let interactive = !cli.json && std::io::IsTerminal::is_terminal(&std::io::stderr());
            let summary = flame.import_file(
                ACTOR,
                path,
                format.map(source_format),
                !no_segment,
                session.as_deref(),
                &mut |p| {
                    let percent = (p.bytes_read * 100).checked_div(p.total_bytes).unwrap_or(100);
                    if interactive && percent / 10 != last_percent / 10 {
                        last_percent = percent;
                        eprint!("\rreading {} {percent:>3}%", p.file);
                        if percent >= 100 {
                            eprintln!();
                        }
                    }
                },
            )?;
            out.print(&summary, || render::import_summary(&summary))
        }
        Command::Sessions { agent } => follow::sessions(flame, &follow::agents(agent), cli.json),
        Command::Follow { sessions, agent, once } => follow::follow(
            flame,
            sessions,
            &follow::agents(agent),
            !agent.is_empty(),
            *once,
            cli.json,
        ),
        Command::Gateway { port, mode, upstreams } => {
            gateway::run(flame, *port, *mode, upstreams, cli.json)
        }
        Command::Unfollow { sessions, agent } => {
            follow::unfollow(flame, sessions, &follow::agents(agent), !agent.is_empty(), cli.json)
        }
        Command::Export { id, format, scope } => {
            let format = match format {
                ExportFormatArg::Json => ExportFormat::Json,
                ExportFormatArg::Markdown => ExportFormat::Markdown,
            };
            let scope = match scope {
                ExportScopeArg::Frame => ExportScope::Frame,
                ExportScopeArg::Subtree => ExportScope::Subtree,
                ExportScopeArg::Tree => ExportScope::Tree,
            };
            let text = flame.export_text(id, scope, format)?;
            let to_terminal = std::io::IsTerminal::is_terminal(&std::io::stdout());
            terminal::print_line(&export_shown(text.trim_end(), to_terminal))
        }
        Command::Replay { .. } => unreachable!("a replay runs without a data directory"),
        Command::Models { .. } => unreachable!("the models are listed without a data directory"),
        Command::McpServers { .. } => unreachable!("the MCP servers need no data directory"),
        Command::Search { query, tree, limit } => {
            let tree = tree.as_deref().map(TreeId::parse).transpose()?;
            let query = query.join(" ");
            let hits = flame.search(&query, tree.as_ref(), *limit)?;
            let limit = limit.unwrap_or(flame_api::DEFAULT_SEARCH_HITS);
            out.print(&hits, || render::search_hits(&query, &hits, limit))
        }
        Command::Log { id } => {
            let id = FrameId::parse(id)?;
            let log = flame.log(&id)?;
            let entry = flame.frame(&id)?;
            out.print(&json!({ "frame": id, "log_path": entry.log_path, "log": log }), || {
                log.trim_end().to_owned()
            })
        }
    }
}

/// `flame models`: the models to pick, as the window's picker lists them (see
/// `flame_settings::model_list`), at this moment's time.
fn list_models(refresh: bool, json: bool, environment: &Environment) -> Result<(), ApiError> {
    let file = SettingsFile::at(Settings::default_path())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ApiError::internal("start the network runtime", e))?;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| i64::try_from(since.as_millis()).unwrap_or(i64::MAX));
    let options = flame_settings::model_list::ListOptions { refresh, ..Default::default() };
    let env = |name: &str| environment.get(name);
    let list = runtime
        .block_on(flame_settings::model_list::list_models_for(&file, &env, now_ms, &options))?;
    Output { json }.print(&list, || render::model_list(&list, now_ms))
}

/// An export as printed: to a terminal with its control characters escaped like every other
/// human form, to a file or a pipe byte for byte, so `flame export … > file` keeps the text.
fn export_shown(text: &str, to_terminal: bool) -> std::borrow::Cow<'_, str> {
    if to_terminal { terminal::escape_controls(text) } else { std::borrow::Cow::Borrowed(text) }
}

fn source_format(format: SourceFormat) -> ImportFormat {
    match format {
        SourceFormat::ClaudeCode => ImportFormat::ClaudeCode,
        SourceFormat::Codex => ImportFormat::Codex,
        SourceFormat::OpenCode => ImportFormat::OpenCode,
        SourceFormat::Flame => ImportFormat::Flame,
    }
}

fn frame_id(text: &Option<String>) -> Result<Option<FrameId>, ApiError> {
    Ok(text.as_deref().map(FrameId::parse).transpose()?)
}

/// Prints either JSON or the human form.
pub(crate) struct Output {
    pub(crate) json: bool,
}

impl Output {
    pub(crate) fn print<T: Serialize>(
        &self,
        value: &T,
        human: impl FnOnce() -> String,
    ) -> Result<(), ApiError> {
        if self.json {
            let text = serde_json::to_string_pretty(value)
                .map_err(|e| ApiError::internal("write JSON", e))?;
            terminal::print_line(&text)
        } else {
            terminal::print_line(&terminal::escape_controls(&human()))
        }
    }

    /// Prints a frame as it is after the operation.
    fn frame(&self, flame: &Flame, id: &FrameId) -> Result<(), ApiError> {
        let entry = flame.frame(id)?;
        self.print(&entry, || render::frame_line(&entry.frame))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_export_is_escaped_for_a_terminal_and_kept_for_a_file() {
        let text = "# \x1b[31mRed\x1b]0;pwned\x07\n";
        assert_eq!(export_shown(text, true), "# \\x1b[31mRed\\x1b]0;pwned\\x07\n");
        assert_eq!(export_shown(text, false), text);
    }
}
