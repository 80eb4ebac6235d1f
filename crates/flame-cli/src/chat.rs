//! `flame chat`: one message answered by the agent, streamed to the terminal. The reply's text
//! goes to stdout as it arrives; tool calls, frame moves and notices go to stderr in brackets, so
//! the reply can be piped on its own. A workspace call that would ask the person is refused,
//! since a script has no one to ask, unless `--approve` lets its kind run; so is a call of an MCP
//! server's tool that the settings do not allow. The MCP servers the agent started are stopped
//! before the command ends.

use std::io::{IsTerminal as _, Write as _};
use std::sync::Arc;

use flame_agent::{Agent, Answer, Ask, ChatEvent, Stopped};
use flame_api::{ApiError, ErrorCode, Flame};
use flame_model::{Actor, FrameId, ToolKind};
use flame_models::{CancellationToken, ProviderKind, RetryPolicy};
use flame_settings::Settings;
use flame_workspace::Environment;

use crate::args::ProviderArg;
use crate::terminal::escape_controls;

/// How many workspace calls that would ask `flame chat` refuses in one run before it stops:
/// each refusal lets the model go on, and a model that asks again and again is not answered
/// for ever.
const MAX_REFUSED_ASKS: usize = 50;

pub fn run(
    flame: &Arc<Flame>,
    environment: &Arc<Environment>,
    frame: &FrameId,
    text: &str,
    provider: Option<ProviderArg>,
    model: Option<&str>,
    approve: &[ToolKind],
) -> Result<(), ApiError> {
    let mut agent = Agent::from_settings_file(
        flame.clone(),
        Settings::default_path(),
        Environment::clone(environment),
        RetryPolicy::default(),
    )?;
    if let Some(provider) = provider {
        // A model named on the command line with its provider is taken as given.
        let kind = match provider {
            ProviderArg::Anthropic => ProviderKind::Anthropic,
            ProviderArg::Openai => ProviderKind::Openai,
        };
        let name = model.map(str::to_owned).or_else(|| agent.settings().default_model.clone()).ok_or_else(|| {
            ApiError::new(ErrorCode::Invalid, "--provider needs a model: give --model NAME or set default_model in Flame's settings")
        })?;
        agent.use_provider(kind, &name)?;
    }
    agent.allow_kinds(approve);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ApiError::internal("start the network runtime", e))?;
    let cancel = CancellationToken::new();
    let mut stdout = std::io::stdout();
    // The model's text is outside input: on a terminal its control characters are shown escaped,
    // as titles and logs are, so a reply cannot drive the terminal; piped, it is kept as sent.
    let on_terminal = stdout.is_terminal();
    let mut reader_gone = false;
    let mut print = |event: ChatEvent| match event {
        ChatEvent::Text { text, .. } => {
            if reader_gone {
                return;
            }
            let shown = if on_terminal { escape_controls(&text) } else { text.as_str().into() };
            if stdout.write_all(shown.as_bytes()).and_then(|()| stdout.flush()).is_err() {
                // The reader went away (`flame chat … | head`): stop the model; what streamed
                // is kept, marked interrupted, as after any stop.
                reader_gone = true;
                cancel.cancel();
            }
        }
        ChatEvent::ToolCall { name, .. } => eprintln!("\n[calling {}]", escape_controls(&name)),
        ChatEvent::ToolResult { name, content, is_error, .. } => {
            let first = content.lines().next().unwrap_or_default();
            let verdict = if is_error { "refused" } else { "done" };
            eprintln!("[{} {verdict}: {}]", escape_controls(&name), escape_controls(first));
        }
        ChatEvent::Moved { to, .. } => eprintln!("[now in frame {to}]"),
        ChatEvent::Notice { text } => eprintln!("[{text}]"),
        ChatEvent::Suggestion { suggestion, .. } => {
            eprintln!("[suggestion: {}]", suggestion.reason)
        }
        ChatEvent::Saved { .. } => {}
    };
    let mut outcome =
        runtime.block_on(agent.send(Actor::Cli, Some(frame), text, model, &cancel, &mut print));
    // Each refusal lets the model go on, and it may ask again, at most this many times.
    for _ in 0..MAX_REFUSED_ASKS {
        let Ok(answered) = &outcome else { break };
        let Stopped::AwaitingApproval { request } = &answered.stopped else { break };
        let (reason, hint) = match &request.ask {
            Ask::Workspace { tool_kind, .. } => (
                format!(
                    "flame chat runs without anyone to ask, and {} calls need approval; it was run without --approve {}",
                    request.call.name,
                    tool_kind.as_str()
                ),
                format!("give flame chat --approve {} to let such calls run", tool_kind.as_str()),
            ),
            Ask::Mcp { server, .. } => (
                format!(
                    "flame chat runs without anyone to ask, and the MCP server {server}'s calls need approval"
                ),
                format!(
                    "allow the MCP server {server}'s calls in Flame's settings to let them run"
                ),
            ),
            Ask::FrameChange => break,
        };
        eprintln!(
            "\n[refused {}: it needs approval; {}]",
            escape_controls(&request.call.name),
            escape_controls(&hint)
        );
        let at = answered.frame.clone();
        let refusal = Answer::Refuse { reason: Some(reason) };
        outcome = runtime.block_on(agent.answer_request(&at, refusal, model, &cancel, &mut print));
    }
    // The MCP servers the agent started end with the command.
    runtime.block_on(agent.stop_mcp_servers());
    // A closed reader is the end of a pipeline, not a failure.
    if reader_gone || writeln!(std::io::stdout()).is_err() {
        return Ok(());
    }
    let outcome = outcome?;
    match outcome.stopped {
        Stopped::Finished => {}
        Stopped::TurnBudget { reason } => eprintln!("[{reason}]"),
        // A spent budget is a failure for a script: the work stopped unfinished, and only the
        // person can let it go on.
        Stopped::BudgetSpent { reason, .. } => {
            return Err(ApiError::new(ErrorCode::Refused, reason));
        }
        Stopped::AwaitingApproval { request } => {
            eprintln!(
                "[the agent asks to run {}; accept or refuse it in the app]",
                escape_controls(&request.call.name)
            );
        }
    }
    if outcome.frame != *frame {
        eprintln!("[the conversation is now in frame {}]", outcome.frame);
    }
    Ok(())
}
