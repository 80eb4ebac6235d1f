//! Flame's settings: what the person chose, checked, kept and read back.
//!
//! `settings.rs` holds the schema ([`Settings`]: the default model, the autonomy, the approval
//! policy, the per-turn budget, providers, models, prices, the checkpoint cap, `keep_tool_results`,
//! `project_instructions` and `local_servers`), its checks, the merge of the window's edit, what the UI may see
//! (`redacted`), a model resolved to where it is called with which key, the facade's
//! configuration (`Settings::facade_config`, which the front ends pass to `Flame::open`, naming the
//! person's own `AGENTS.md` beside the settings file), and the
//! settings file ([`SettingsFile`]). Keys are kept in the system keyring or in that file
//! (`key_store.rs`), which is written only by its owner and replaced whole (`private_file.rs`).
//! `local_model.rs` names the models of servers on this computer, which both the settings and the
//! model list read; `model_list.rs` lists the models a person can pick; `mcp_servers.rs` holds the
//! MCP servers whose tools the agent is offered, and how their calls are approved.
//!
//! This is the only crate that reads or writes the settings file: the front ends and the agent
//! come here for a setting, and the facade is handed what it needs as a `FlameConfig`.

mod gateway;
mod key_store;
mod local_model;
pub mod mcp_servers;
pub mod model_list;
mod private_file;
mod settings;

pub use gateway::{DEFAULT_GATEWAY_PORT, GatewayMode, GatewaySettings};
pub use key_store::{KeyLocation, KeyStore};
pub use local_model::{LOCAL_DEFAULT_WINDOW, LOCAL_PREFIX, LocalModel, local_reply_tokens};
pub use mcp_servers::{McpApproval, McpServerSettings};
pub use settings::{
    Autonomy, DEFAULT_TURN_BUDGET, MAX_CHECKPOINT_CAP_MB, MAX_KEEP_TOOL_RESULTS, MIB,
    ModelSettings, PERSONAL_INSTRUCTIONS, ProviderSettings, REDACTED, ResolvedModel, Settings,
    SettingsFile, is_on_this_computer,
};
