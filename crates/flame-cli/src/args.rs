//! The command line's surface. It is used by people, scripts and acceptance tests, so it changes
//! only on purpose.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "flame",
    version,
    about = "Work with Flame's frame trees from a terminal or a script"
)]
pub struct Cli {
    /// The data directory (else $FLAME_HOME, else the platform data directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Print machine-readable JSON (errors too, on stderr).
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create and list trees.
    Tree {
        #[command(subcommand)]
        command: TreeCommand,
    },
    /// Draw a tree (the current one by default) with statuses and the focus.
    Status {
        #[arg(long, value_name = "TREE")]
        tree: Option<String>,
    },
    /// Push an in-progress child (of the focused frame by default) and focus it.
    Push {
        title: String,
        #[arg(long, value_name = "TEXT")]
        criteria: String,
        #[arg(long, value_name = "ID")]
        parent: Option<String>,
    },
    /// Plan a frame (under the focused frame by default).
    Plan {
        title: String,
        #[arg(long, value_name = "TEXT")]
        criteria: String,
        #[arg(long, value_name = "ID")]
        parent: Option<String>,
        #[arg(long, value_name = "N")]
        position: Option<u32>,
    },
    /// Start a planned frame (and its planned ancestors) and focus it.
    Start { id: String },
    /// Resume a blocked frame and focus it.
    Resume { id: String },
    /// Retry a failed frame as a new sibling and focus it.
    Retry {
        id: String,
        /// Roll the failed frame's file changes back first, so the retry starts from the files
        /// as they were when it started (nothing is retried if the rollback is refused).
        #[arg(long)]
        from_start: bool,
    },
    /// Show the files a frame changed in its tree's workspace, as a unified diff from when it
    /// started to when it ended (or to now while it runs).
    Diff {
        id: String,
        /// Include the changes of the frame's descendants.
        #[arg(long)]
        subtree: bool,
    },
    /// Put the files a frame (and its descendants) changed back as they were when it started;
    /// refused, changing nothing, when later work changed the same files.
    Rollback { id: String },
    /// Give a frame a budget its whole subtree may spend — any of dollars, tokens and tool calls
    /// — or with --clear take it away; with none of them, show it. A child's budget is out of
    /// what its parent has left. The agent is told what its frame has left, and stops before
    /// a call once a budget on its path is spent.
    Budget {
        id: String,
        /// Dollars, as priced from the replies' recorded usage (cache reads and writes counted).
        #[arg(long, value_name = "DOLLARS")]
        usd: Option<f64>,
        /// Tokens the replies counted (input, cached or not, and output).
        #[arg(long, value_name = "N")]
        tokens: Option<u64>,
        /// Tool calls the replies made.
        #[arg(long, value_name = "N")]
        calls: Option<u64>,
        #[arg(long, conflicts_with_all = ["usd", "tokens", "calls"])]
        clear: bool,
    },
    /// Focus a frame and make its tree current.
    Focus { id: String },
    /// Delete a planned frame that has no messages.
    Delete { id: String },
    /// Pop a frame (the focused one by default) as completed, failed or blocked.
    Pop {
        id: Option<String>,
        /// The focused frame this pop means; refused, changing nothing, if the focus has moved
        /// (another client popped or pushed in between)
        #[arg(long, value_name = "ID", conflicts_with = "id")]
        frame: Option<String>,
        #[arg(long, value_name = "completed|failed|blocked")]
        status: String,
        #[arg(long, value_name = "TEXT")]
        results: Option<String>,
        #[arg(long, value_name = "TEXT")]
        compacted: Option<String>,
        #[arg(long, value_name = "PATH")]
        artifact: Vec<String>,
        #[arg(long, value_name = "TEXT")]
        decision: Vec<String>,
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
    },
    /// Invalidate a frame and its open descendants.
    Invalidate {
        id: String,
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
    },
    /// Move a planned frame among its siblings or under another frame.
    Move {
        id: String,
        #[arg(long, value_name = "ID")]
        parent: Option<String>,
        #[arg(long, value_name = "N")]
        position: Option<u32>,
    },
    /// Change a planned frame's title or criteria.
    Edit {
        id: String,
        #[arg(long, value_name = "TEXT")]
        title: Option<String>,
        #[arg(long, value_name = "TEXT")]
        criteria: Option<String>,
    },
    /// Add a message to a frame without calling a model.
    Append {
        id: String,
        #[arg(long, value_name = "user|assistant|note")]
        role: String,
        /// The message; `-` reads it from standard input (at most 4 MiB, a message's limit).
        text: String,
    },
    /// Print a frame's full log.
    Log { id: String },
    /// Find words in every message and every frame's title and results (of one tree with
    /// --tree): frames first, then messages, newest first. Words are matched whole, ignoring
    /// case and accents, the last one also as the start of a word; nothing in the words is
    /// search syntax. At most 500 characters.
    Search {
        /// The words to find.
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
        #[arg(long, value_name = "TREE")]
        tree: Option<String>,
        /// How many hits to print at most (default 50).
        #[arg(long, value_name = "1..200", value_parser = clap::value_parser!(u32).range(1..=200))]
        limit: Option<u32>,
    },
    /// Send a message in a frame and stream the model's answer; the agent may push and pop
    /// frames on the way. Models, keys and autonomy come from Flame's settings and the
    /// providers' environment variables.
    Chat {
        id: String,
        text: String,
        /// Which wire format the model speaks, when Flame cannot tell from its name.
        #[arg(long, value_name = "anthropic|openai")]
        provider: Option<ProviderArg>,
        /// The model (default: the settings' default model).
        #[arg(long, value_name = "NAME")]
        model: Option<String>,
        /// Kinds of workspace tool call to run without asking, whatever the settings say; a call
        /// that would ask is refused, since there is no one to ask.
        #[arg(long, value_name = "read,change,run", value_delimiter = ',')]
        approve: Vec<ApproveArg>,
    },
    /// List the models to pick and where each came from: the settings, each provider's list
    /// (with a key; cached, so offline is fine) and model servers found on this computer
    /// (Ollama, llama.cpp, LM Studio, vLLM at the settings' `local_servers`), with their context
    /// windows. A local model's name (`local:HOST:PORT/NAME`) works with `flame chat --model`.
    Models {
        /// Ask the providers for their lists even when the cached ones are recent.
        #[arg(long)]
        refresh: bool,
    },
    /// Serve the frame tools over the Model Context Protocol on stdin and stdout, for Claude
    /// Code, OpenCode and other MCP clients.
    Mcp {
        /// The tree to work in (default: the current tree, read at every call).
        #[arg(long, value_name = "TREE")]
        tree: Option<String>,
    },
    /// The MCP servers whose tools the agent is offered (Flame's settings' `mcp_servers`), and
    /// the servers other agents were given, to add them.
    McpServers {
        #[command(subcommand)]
        command: McpServersCommand,
    },
    /// Print exactly what the model would receive in a frame, fitted to a token budget.
    Context {
        id: String,
        /// The tokens the context may use (default: a 128k window less an 8k reply reserve).
        #[arg(long, value_name = "N")]
        budget: Option<u64>,
        /// `xml`: the system prompt, the frame's opening (its stack-context) and the messages,
        /// as the next call sends them; `json`: the same with the inspector's account of every
        /// section and of the cache.
        #[arg(long, value_name = "xml|json", default_value = "xml")]
        format: ContextFormat,
        /// Have the frame's opening made again at its next call, showing the tree as it is
        /// then (its notes and masked results folded in), and print that context.
        #[arg(long)]
        rebuild: bool,
    },
    /// Import an agent session (Claude Code JSONL with its subagents folder, a Codex rollout
    /// with its subagents' rollouts beside it, an OpenCode data directory, storage/ folder,
    /// session file or opencode.db) or a Flame export
    /// as a new tree, which becomes current.
    Import {
        path: PathBuf,
        /// The source format; detected from the file when not given.
        #[arg(long, value_name = "claude-code|codex|opencode|flame")]
        format: Option<SourceFormat>,
        /// Keep a session's main thread in the root frame instead of cutting it into segments.
        #[arg(long)]
        no_segment: bool,
        /// The session to import from an OpenCode store (default: the newest top-level one).
        #[arg(long, value_name = "ID")]
        session: Option<String>,
    },
    /// List the sessions Claude Code, Codex and OpenCode keep on this computer: agent, project
    /// folder, first request, last activity, size, recorded cost, what Flame's context would
    /// have cost, and whether Flame follows it (`*`). Their folders come from
    /// $CLAUDE_CONFIG_DIR, $CODEX_HOME and $XDG_DATA_HOME as the agents read them.
    Sessions {
        /// Only these agents' sessions.
        #[arg(long, value_name = "claude-code,codex,opencode", value_delimiter = ',')]
        agent: Vec<AgentArg>,
    },
    /// Follow sessions as their agent writes them, each in a tree of its own kept in step with
    /// its files: SESSION is an id `flame sessions` lists (`codex:ID`, or the agent's ID) or a
    /// Claude Code or Codex session file. With --agent and no SESSION, follow every new session
    /// of those agents. Then keep reading every followed session as its files change, until
    /// stopped (Ctrl-C), printing what each read stored; with --once, read each once and stop.
    /// Flame never writes the agents' files.
    Follow {
        sessions: Vec<String>,
        #[arg(long, value_name = "claude-code,codex,opencode", value_delimiter = ',')]
        agent: Vec<AgentArg>,
        #[arg(long)]
        once: bool,
    },
    /// Run the gateway on 127.0.0.1: point an agent's base URL at it (the lines it prints say
    /// how for Claude Code, Codex and OpenCode) and it forwards the agent's model calls to the
    /// provider, each session a tree kept live, with Flame's budgets checked before each call.
    /// `--mode context` sends Flame's context for the current frame instead of the agent's
    /// whole history. Until stopped (Ctrl-C), printing a line per call.
    Gateway {
        /// The port (default: the settings' gateway port, 8788).
        #[arg(long, value_name = "N")]
        port: Option<u16>,
        /// `observe` forwards each request byte for byte; `context` sends Flame's context
        /// (default: the settings' gateway mode, observe).
        #[arg(long, value_name = "observe|context")]
        mode: Option<GatewayModeArg>,
        /// Forward a provider's calls to URL instead of the settings' base URL (or the public
        /// API): `anthropic=URL` or `openai=URL` (with its `/v1`).
        #[arg(long = "upstream", value_name = "PROVIDER=URL")]
        upstreams: Vec<String>,
    },
    /// Stop following sessions (their trees are kept), or with --agent stop following every new
    /// session of those agents.
    Unfollow {
        sessions: Vec<String>,
        #[arg(long, value_name = "claude-code,codex,opencode", value_delimiter = ',')]
        agent: Vec<AgentArg>,
    },
    /// Export a frame's subtree (or, given a tree id, the whole tree) as JSON or Markdown.
    Export {
        /// A frame id (its subtree) or a tree id (the whole tree).
        id: String,
        #[arg(long, value_name = "json|markdown", default_value = "json")]
        format: ExportFormatArg,
        /// `frame`: the frame alone; `subtree`: it and every frame under it; `tree`: the whole
        /// tree it belongs to.
        #[arg(long, value_name = "frame|subtree|tree", default_value = "subtree")]
        scope: ExportScopeArg,
    },
    /// Compare, for every model call of a recorded session, the context the agent sent with the
    /// context Flame would send for the same frame at that moment, in tokens and in dollars
    /// under the provider's prompt cache. Reads the file only.
    Replay {
        path: PathBuf,
        #[arg(long, value_name = "claude-code|codex|opencode|flame")]
        format: Option<SourceFormat>,
        /// The session to replay from an OpenCode store (default: the newest top-level one).
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// List every call, not only the totals and the distribution.
        #[arg(long)]
        calls: bool,
        /// Whose prompt cache and list prices both sides are priced under: Anthropic's (Claude
        /// Sonnet 4.5) or OpenAI's (GPT-4.1).
        #[arg(long, value_name = "anthropic|openai", default_value = "anthropic")]
        provider: ProviderArg,
        /// How long Flame asks Anthropic to keep a frame's conversation (default: what the agent
        /// asks).
        #[arg(long, value_name = "5m|1h")]
        cache_lifetime: Option<LifetimeArg>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LifetimeArg {
    #[value(name = "5m")]
    FiveMinutes,
    #[value(name = "1h")]
    OneHour,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SourceFormat {
    ClaudeCode,
    Codex,
    #[value(name = "opencode")]
    OpenCode,
    Flame,
}

/// What the gateway sends upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GatewayModeArg {
    Observe,
    Context,
}

/// An agent whose sessions Flame follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AgentArg {
    ClaudeCode,
    Codex,
    #[value(name = "opencode")]
    OpenCode,
}

impl AgentArg {
    pub fn agent(self) -> flame_api::Agent {
        match self {
            AgentArg::ClaudeCode => flame_api::Agent::ClaudeCode,
            AgentArg::Codex => flame_api::Agent::Codex,
            AgentArg::OpenCode => flame_api::Agent::OpenCode,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormatArg {
    Json,
    Markdown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportScopeArg {
    Frame,
    Subtree,
    Tree,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProviderArg {
    Anthropic,
    Openai,
}

/// A kind of workspace tool call, as `--approve` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ApproveArg {
    Read,
    Change,
    Run,
}

impl ApproveArg {
    pub fn kind(self) -> flame_model::ToolKind {
        match self {
            ApproveArg::Read => flame_model::ToolKind::Reading,
            ApproveArg::Change => flame_model::ToolKind::Changing,
            ApproveArg::Run => flame_model::ToolKind::Running,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ContextFormat {
    Xml,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum McpServersCommand {
    /// List the settings' MCP servers: name, how each is reached, how its calls are approved.
    List,
    /// Find the MCP servers other agents were given (the workspace's .mcp.json, Claude Code's
    /// ~/.claude.json, OpenCode's opencode.json, Codex's ~/.codex/config.toml) and print them;
    /// name some (or give --all) to add them to Flame's settings, their calls asked for. Nothing
    /// is added without a name or --all.
    Import {
        /// Where to look (default: everywhere).
        #[arg(long, value_name = "project,claude-code,opencode,codex", value_delimiter = ',')]
        from: Vec<McpSourceArg>,
        /// The workspace whose .mcp.json and opencode.json are read (default: this folder).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Add every server found whose name the settings do not list yet.
        #[arg(long, conflicts_with = "names")]
        all: bool,
        /// The servers to add, by the name printed.
        names: Vec<String>,
    },
}

/// Where MCP servers are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum McpSourceArg {
    Project,
    ClaudeCode,
    #[value(name = "opencode")]
    OpenCode,
    Codex,
}

#[derive(Debug, Subcommand)]
pub enum TreeCommand {
    /// Create a tree; prints its id and its root frame's id.
    New {
        title: String,
        #[arg(long, value_name = "TEXT")]
        criteria: String,
        /// The folder the agent's workspace tools (read, search, edit, run) work in.
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
    },
    /// List every tree; `*` marks the current one.
    List,
    /// Set the folder a tree's workspace tools work in, or with --none take it away.
    Workspace {
        tree: String,
        #[arg(required_unless_present = "none")]
        dir: Option<PathBuf>,
        #[arg(long, conflicts_with = "dir")]
        none: bool,
    },
}
