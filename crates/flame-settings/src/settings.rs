//! Model settings: providers, base URLs, keys, models with their context windows, the default
//! model, and the agent's autonomy. They live in `settings.json` in the platform's config
//! folder (`~/.config/flame/` on Linux), read and written through a [`SettingsFile`]; saved keys
//! are kept in the system keyring when one answers, else in that file (see
//! [`crate::key_store`]). Keys come from the providers' usual environment variables first, then
//! the saved ones; base URLs from the settings, then the environment variables the providers'
//! own SDKs read, then the providers' defaults. A model of a server on this computer is named
//! `local:<host:port>/<model>` and needs no settings (see [`crate::model_list`]); the addresses
//! looked at are `local_servers`.
//!
//! The settings hold the default model, the autonomy, the approval policy for workspace calls, the
//! tool-round limit, each provider's base URL, key and plain-http confirmation, extra models with
//! their context windows, prices, the checkpoint cap and `local_servers`. With the keyring, keys
//! live there, one entry per provider and settings path, and the file holds none; a key found in
//! the file is used and moves to the keyring at the next save. `save` refuses settings no call
//! could work with and leaves everything as it was: `check` refuses a listed model without a name
//! or listed twice, a window no larger than its reply, no tool rounds, a base URL that is not
//! `http(s)`, plain `http://` to a host that is not loopback without `allow_insecure_http`, a
//! checkpoint cap of zero or over `MAX_CHECKPOINT_CAP_MB`, prices `flame_model::cost::check_prices`
//! refuses, and `local_servers` that are not `host:port`, listed twice or more than 32.
//! `with_changes` merges the window's edit: a base URL moved to another scheme, host or port drops
//! the saved key unless a new one comes with it. `redacted(env)` is what any UI sees: whether a key
//! is set and where it is kept (`KeyLocation`), never the key (the `Debug` of the settings hides
//! keys too); it also fills in `built_in_prices` for the window to show beside the person's, which
//! is never read from the UI or the file and never written. `prices` replace or add to the built-in
//! prices by model name (`price_table()` is the table in use).
//!
//! `Settings::resolve` sends a `local:` model to `http://<host:port>/v1` over the OpenAI API
//! without a key (whatever the OpenAI settings hold), by the server's own model name, with the
//! window the settings list under that `local:` name, else `LOCAL_DEFAULT_WINDOW` until
//! `Agent::resolve_for_call` asks the server (`Discovery::context_window`, that model alone) before
//! each call; the reply gets a quarter of the window, at most 4,096 tokens.

use std::fmt;
use std::path::{Path, PathBuf};

use flame_api::{ApiError, ApprovalPolicy, Budget, ErrorCode, FlameConfig};
use flame_model::budget::FrameBudget;
use flame_model::cost::{self, ModelPrice, PriceTable};
use flame_models::discover::{self, DEFAULT_LOCAL_SERVERS, MAX_LOCAL_SERVERS, check_address};
use flame_models::{ApiKey, Provider, ProviderKind};
use serde::{Deserialize, Serialize};

use crate::key_store::{KeyLocation, KeyStore};
use crate::local_model::{LOCAL_DEFAULT_WINDOW, LocalModel, local_reply_tokens};
use crate::mcp_servers::{self, McpServerSettings};
use crate::private_file;

/// What the UI is shown instead of a saved key.
pub const REDACTED: &str = "(set)";

/// The person's own file of instructions for every workspace, beside the settings file
/// (`~/.config/flame/AGENTS.md` on Linux).
pub const PERSONAL_INSTRUCTIONS: &str = "AGENTS.md";

/// What the agent may do with frames on its own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Autonomy {
    /// The agent pushes and pops frames itself.
    #[default]
    Auto,
    /// A push or pop by the agent waits for the person to accept or refuse it.
    Ask,
}

/// One provider's place and key.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ProviderSettings {
    pub base_url: Option<String>,
    /// Stored (in the system keyring, or in the settings file where none answers), but never
    /// sent back to the UI (see [`Settings::redacted`]) nor printed by `Debug`.
    pub api_key: Option<String>,
    /// The person confirmed that the key may go unencrypted over plain `http://` to a host
    /// other than this computer (see [`Settings::check`]). Written only when given.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_insecure_http: bool,
    /// Where the key is kept: filled in when the settings are read, shown to the UI, never read
    /// from the UI or the file.
    #[serde(skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub key_location: Option<KeyLocation>,
}

impl fmt::Debug for ProviderSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderSettings")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[hidden]"))
            .field("allow_insecure_http", &self.allow_insecure_http)
            .field("key_location", &self.key_location)
            .finish()
    }
}

impl ProviderSettings {
    /// The base URL requests go to, before the environment is consulted.
    fn effective_base_url(&self, kind: ProviderKind) -> &str {
        self.base_url.as_deref().unwrap_or(kind.default_base_url())
    }
}

/// A model Flame knows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ModelSettings {
    pub name: String,
    pub provider: ProviderKind,
    pub context_window: u64,
    /// Tokens kept for the reply, and the most it may write.
    pub max_output_tokens: u32,
}

/// Bytes in a mebibyte, the unit of `checkpoint_cap_mb`.
pub const MIB: u64 = 1024 * 1024;

/// The largest checkpoint storage cap the settings accept (1 TiB), far past any disk a
/// workspace's history needs, so the cap in bytes cannot overflow.
pub const MAX_CHECKPOINT_CAP_MB: u64 = 1024 * 1024;

/// The most tool results a frame's context may be asked to send in full; past a few hundred,
/// masking no longer saves anything a context window could hold.
pub const MAX_KEEP_TOOL_RESULTS: u32 = 10_000;

/// The per-turn budget until the person sets another: 250 tool calls and $10. Sized for real
/// work: a peer's production subagents made up to 115 model calls at the 99th percentile
/// (vellum PR#39040), and one of Flame's turns may do several subtasks' work as it pushes and
/// pops; ten dollars is some 250 calls of Claude Sonnet with a 60k-token context read from the
/// cache.
pub const DEFAULT_TURN_BUDGET: FrameBudget =
    FrameBudget { micro_usd: Some(10_000_000), tokens: None, tool_calls: Some(250) };

/// Everything in `settings.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct Settings {
    pub default_model: Option<String>,
    pub autonomy: Autonomy,
    /// Which workspace tool calls run at once and which ask the person first.
    pub approval: ApprovalPolicy,
    /// What one turn — a message answered, with every call it leads to — may spend before the
    /// agent stops and waits for the person to say "go on": tool calls, and dollars where the
    /// model's price is known. It replaced a fixed limit of eight rounds of tool calls, which
    /// stopped real work long before it bounded spend. A frame's own budget bounds its subtree
    /// across turns.
    pub turn_budget: FrameBudget,
    /// The storage (MiB) a workspace's checkpoints may take before the oldest are pruned.
    pub checkpoint_cap_mb: u64,
    /// How many of a frame's newest tool results its context sends in full; older ones are sent
    /// as one-line stubs (observation masking).
    pub keep_tool_results: u32,
    /// Whether a frame's opening starts with the project instructions: the workspace's
    /// `AGENTS.md` (or `CLAUDE.md`) files and the person's own [`PERSONAL_INSTRUCTIONS`].
    pub project_instructions: bool,
    /// Prices of model calls, replacing or adding to the built-in ones by model name (see
    /// [`flame_model::cost`]); written only when there are some.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prices: Vec<ModelPrice>,
    /// The built-in prices, for the window to show beside the person's: filled in by
    /// [`Settings::redacted`], never read from the UI or the file, never written.
    #[serde(skip_deserializing, skip_serializing_if = "Vec::is_empty")]
    pub built_in_prices: Vec<ModelPrice>,
    pub anthropic: ProviderSettings,
    pub openai: ProviderSettings,
    /// Models besides the built-in ones, or overriding them.
    pub models: Vec<ModelSettings>,
    /// Where to look for model servers on this computer (`host:port`); absent: the usual ports
    /// of Ollama, llama.cpp's server, LM Studio and vLLM (see [`Settings::local_servers`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_servers: Option<Vec<String>>,
    /// The gateway: whether the window starts it, its port and its mode (`gateway.rs`).
    pub gateway: crate::GatewaySettings,
    /// MCP servers whose tools the agent is offered (`mcp_servers.rs`); written only when there
    /// are some.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<McpServerSettings>,
}

impl Default for Settings {
    fn default() -> Settings {
        // The facade's own defaults, so a Flame opened without settings works as with new ones.
        let facade = FlameConfig::default();
        Settings {
            default_model: None,
            autonomy: Autonomy::Auto,
            approval: ApprovalPolicy::default(),
            turn_budget: DEFAULT_TURN_BUDGET,
            checkpoint_cap_mb: facade.checkpoint_cap_bytes / MIB,
            keep_tool_results: u32::try_from(facade.keep_tool_results).unwrap_or(u32::MAX),
            project_instructions: facade.project_instructions,
            prices: Vec::new(),
            built_in_prices: Vec::new(),
            anthropic: ProviderSettings::default(),
            openai: ProviderSettings::default(),
            models: Vec::new(),
            local_servers: None,
            gateway: crate::GatewaySettings::default(),
            mcp_servers: Vec::new(),
        }
    }
}

/// The models Flame knows without being told, with their context windows.
fn built_in(name: &str) -> Option<ModelSettings> {
    let (provider, window, output) = match name {
        n if n.starts_with("claude") => (ProviderKind::Anthropic, 200_000, 8_192),
        n if n.starts_with("gpt-4.1") => (ProviderKind::Openai, 1_047_576, 16_384),
        n if n.starts_with("gpt-5") => (ProviderKind::Openai, 400_000, 16_384),
        n if n.starts_with("gpt-4o")
            || n.starts_with("o1")
            || n.starts_with("o3")
            || n.starts_with("o4") =>
        {
            (ProviderKind::Openai, 128_000, 16_384)
        }
        _ => return None,
    };
    Some(ModelSettings {
        name: name.to_owned(),
        provider,
        context_window: window,
        max_output_tokens: output,
    })
}

/// A model ready to call: where, with which key, and how much context it takes.
#[derive(Debug, Clone)]
pub struct ResolvedModel {
    pub model: ModelSettings,
    pub provider: Provider,
    /// For a model of a local server the settings do not list, the server's address: its window
    /// is the server's to say ([`ResolvedModel::with_window`]).
    pub local_server: Option<String>,
}

impl ResolvedModel {
    /// The model with the window its server gives it, and the reply that leaves room for.
    pub fn with_window(mut self, context_window: u64) -> ResolvedModel {
        self.model.context_window = context_window;
        self.model.max_output_tokens = local_reply_tokens(context_window);
        self
    }

    /// The context budget before tool schemas: the window less the reply.
    pub fn budget(&self, tool_schemas: u64) -> Budget {
        Budget {
            context_window: self.model.context_window,
            reply_reserve: u64::from(self.model.max_output_tokens),
            tool_schemas,
        }
    }
}

/// Settings files and where their keys are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsFile {
    path: PathBuf,
    keys: KeyStore,
}

impl SettingsFile {
    pub fn new(path: PathBuf, keys: KeyStore) -> SettingsFile {
        SettingsFile { path, keys }
    }

    /// The settings file of a front end: [`SettingsFile::detect`] at `path`, where `None` means
    /// the system has no configuration folder, refused with the same message by every front end.
    pub fn at(path: Option<PathBuf>) -> Result<SettingsFile, ApiError> {
        let path = path.ok_or_else(|| {
            ApiError::new(
                ErrorCode::Invalid,
                "this system has no configuration folder for Flame's settings",
            )
        })?;
        Ok(SettingsFile::detect(path))
    }

    /// The settings at `path`, their keys in the system keyring if one answers now, else in the
    /// file (see [`KeyStore::detect`]).
    pub fn detect(path: PathBuf) -> SettingsFile {
        let keys = KeyStore::detect(&path);
        SettingsFile { path, keys }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn key_store(&self) -> KeyStore {
        self.keys
    }

    /// Reads the settings (a missing file is the defaults) with their keys, each provider's
    /// saying where its key is. A key found in the file while the keyring is in use (saved
    /// before there was one) is used, and moves to the keyring at the next save.
    pub fn load(&self) -> Result<Settings, ApiError> {
        let mut settings = read(&self.path)?;
        let store_location = self.keys.location(&self.path);
        let file_location = KeyStore::SettingsFile.location(&self.path);
        for (kind, provider) in settings.providers_mut() {
            provider.key_location = Some(store_location.clone());
            match self.keys.read(&self.path, kind)? {
                Some(key) => provider.api_key = Some(key),
                None if provider.api_key.is_some() => {
                    provider.key_location = Some(file_location.clone());
                }
                None => {}
            }
        }
        Ok(settings)
    }

    /// Saves the settings, refusing settings that could not work (see [`Settings::check`]) and
    /// leaving everything as it was. Keys go to the keyring when it is in use, and the file
    /// then holds none; the file is replaced whole and only its owner may read it.
    pub fn save(&self, settings: &Settings) -> Result<(), ApiError> {
        settings.check()?;
        let mut stored = settings.clone();
        stored.built_in_prices.clear();
        for (kind, provider) in stored.providers_mut() {
            provider.key_location = None;
            if self.keys == KeyStore::Keyring {
                self.keys.write(&self.path, kind, provider.api_key.as_deref())?;
                provider.api_key = None;
            }
        }
        let text = serde_json::to_string_pretty(&stored)
            .map_err(|e| ApiError::internal("write the settings", e))?;
        private_file::replace(&self.path, text.as_bytes())
            .map_err(|e| ApiError::internal(&format!("write {}", self.path.display()), e))
    }
}

/// Reads the settings file at `path` alone; a missing file is the defaults.
fn read(path: &Path) -> Result<Settings, ApiError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            ApiError::new(
                ErrorCode::Invalid,
                format!("the settings file {} is not valid: {e}", path.display()),
            )
        }),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Settings::default()),
        Err(err) => Err(ApiError::internal(&format!("read {}", path.display()), err)),
    }
}

/// The scheme, host and port requests to `url` go to; `None` for what is not a URL.
fn origin(url: &str) -> Option<url::Origin> {
    url::Url::parse(url.trim()).ok().map(|u| u.origin())
}

/// Whether `base_url` names a server on this computer: `localhost`, 127.0.0.0/8 or ::1.
pub fn is_on_this_computer(base_url: &str) -> bool {
    url::Url::parse(base_url).ok().is_some_and(|url| url.host().is_some_and(|h| is_loopback(&h)))
}

fn is_loopback(host: &url::Host<&str>) -> bool {
    match host {
        url::Host::Domain(name) => name.eq_ignore_ascii_case("localhost"),
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
    }
}

impl Settings {
    /// Where the settings live: `<config dir>/flame/settings.json`.
    pub fn default_path() -> Option<PathBuf> {
        dirs::config_dir().map(|d| d.join("flame").join("settings.json"))
    }

    fn providers_mut(&mut self) -> [(ProviderKind, &mut ProviderSettings); 2] {
        [(ProviderKind::Anthropic, &mut self.anthropic), (ProviderKind::Openai, &mut self.openai)]
    }

    fn providers(&self) -> [(ProviderKind, &ProviderSettings); 2] {
        [(ProviderKind::Anthropic, &self.anthropic), (ProviderKind::Openai, &self.openai)]
    }

    /// Refuses what no model call could work with: a listed model without a name or listed
    /// twice, a context window no larger than the reply it must leave room for, a reply of no
    /// tokens, or a per-turn budget of nothing; and a base URL that is not an `https://` or `http://`
    /// URL, or that would send the key unencrypted (plain `http://`) to another computer
    /// without the person's confirmation (`allow_insecure_http`). Plain `http://` to this
    /// computer (`localhost`, 127.0.0.0/8, ::1) is allowed: local model servers speak it.
    pub fn check(&self) -> Result<(), ApiError> {
        let invalid = |message: String| Err(ApiError::new(ErrorCode::Invalid, message));
        if self.turn_budget.limits().any(|(_, limit)| limit == 0) {
            return invalid(
                "a per-turn budget of nothing would stop every turn before its first call; leave the unit empty for no limit".to_owned(),
            );
        }
        if self.checkpoint_cap_mb == 0 || self.checkpoint_cap_mb > MAX_CHECKPOINT_CAP_MB {
            return invalid(format!(
                "the checkpoint storage cap must be between 1 and {MAX_CHECKPOINT_CAP_MB} MiB"
            ));
        }
        if self.gateway.port == 0 {
            return invalid("the gateway's port must be a port number, 1 to 65535".to_owned());
        }
        if self.keep_tool_results == 0 || self.keep_tool_results > MAX_KEEP_TOOL_RESULTS {
            return invalid(format!(
                "the tool results sent in full must be between 1 and {MAX_KEEP_TOOL_RESULTS}"
            ));
        }
        cost::check_prices(&self.prices).map_err(|why| ApiError::new(ErrorCode::Invalid, why))?;
        for (kind, provider) in self.providers() {
            let Some(base_url) = provider.base_url.as_deref() else { continue };
            let url = match url::Url::parse(base_url.trim()) {
                Ok(url) => url,
                Err(err) => {
                    return invalid(format!(
                        "the {} base URL {base_url:?} is not a URL: {err}",
                        kind.name()
                    ));
                }
            };
            let Some(host) = url.host() else {
                return invalid(format!("the {} base URL {base_url:?} names no host", kind.name()));
            };
            match url.scheme() {
                "https" => {}
                "http" if is_loopback(&host) || provider.allow_insecure_http => {}
                "http" => {
                    return invalid(format!(
                        "the {} base URL {base_url} would send the key unencrypted to {host}: use https://, or confirm plain http:// for this provider",
                        kind.name()
                    ));
                }
                other => {
                    return invalid(format!(
                        "the {} base URL must start with https:// or http://, not {other}://",
                        kind.name()
                    ));
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        for (n, model) in self.models.iter().enumerate() {
            let name = model.name.trim();
            if name.is_empty() {
                return invalid(format!("listed model {} has no name", n + 1));
            }
            if name != model.name {
                return invalid(format!(
                    "the model name {:?} starts or ends with white space",
                    model.name
                ));
            }
            if !seen.insert(name) {
                return invalid(format!("the model {name} is listed twice"));
            }
            if model.max_output_tokens == 0 {
                return invalid(format!(
                    "the model {name} must be allowed a reply of 1 token or more"
                ));
            }
            if model.context_window <= u64::from(model.max_output_tokens) {
                return invalid(format!(
                    "the model {name}'s context window ({}) must be larger than its reply ({} tokens)",
                    model.context_window, model.max_output_tokens
                ));
            }
        }
        mcp_servers::check(&self.mcp_servers)
            .map_err(|why| ApiError::new(ErrorCode::Invalid, why))?;
        let addresses = self.local_servers.as_deref().unwrap_or_default();
        if addresses.len() > MAX_LOCAL_SERVERS {
            return invalid(format!(
                "at most {MAX_LOCAL_SERVERS} addresses of local model servers may be listed, not {}",
                addresses.len()
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for address in addresses {
            let address = check_address(address).map_err(|reason| {
                ApiError::new(
                    ErrorCode::Invalid,
                    format!("the local model server address {address:?} is not one: {reason}"),
                )
            })?;
            if !seen.insert(address.clone()) {
                return invalid(format!(
                    "the local model server address {address} is listed twice"
                ));
            }
        }
        Ok(())
    }

    /// The addresses to look for model servers at: the settings' list, else
    /// [`DEFAULT_LOCAL_SERVERS`].
    pub fn local_servers(&self) -> Vec<String> {
        match &self.local_servers {
            Some(addresses) => addresses.iter().map(|a| a.trim().to_owned()).collect(),
            None => DEFAULT_LOCAL_SERVERS.iter().map(|a| (*a).to_owned()).collect(),
        }
    }

    /// `self` updated from settings edited in the UI, which never saw the keys: a key still
    /// shown as set (or absent) keeps the saved one, an empty key removes it, any other replaces
    /// it. A base URL moved to another host (scheme, host or port) drops the saved key unless a
    /// new one comes with it: a key is only ever sent where the person gave it.
    pub fn with_changes(&self, edited: Settings) -> Settings {
        let merge = |kind: ProviderKind, saved: &ProviderSettings, edited: ProviderSettings| {
            let base_url = edited.base_url.filter(|u| !u.trim().is_empty());
            let same_host = origin(saved.effective_base_url(kind))
                == origin(base_url.as_deref().unwrap_or(kind.default_base_url()));
            ProviderSettings {
                base_url,
                api_key: match edited.api_key.as_deref() {
                    Some("") => None,
                    None | Some(REDACTED) if same_host => saved.api_key.clone(),
                    None | Some(REDACTED) => None,
                    Some(key) => Some(key.to_owned()),
                },
                allow_insecure_http: edited.allow_insecure_http,
                key_location: saved.key_location.clone(),
            }
        };
        Settings {
            anthropic: merge(ProviderKind::Anthropic, &self.anthropic, edited.anthropic.clone()),
            openai: merge(ProviderKind::Openai, &self.openai, edited.openai.clone()),
            mcp_servers: mcp_servers::merged(
                &self.mcp_servers,
                edited.mcp_servers.clone(),
                REDACTED,
            ),
            ..edited
        }
    }

    /// The settings as the UI may see them: whether a key is set, never the key, and where it
    /// is kept — the environment variable `env` has it in (used before a saved key), else where
    /// the settings were read from.
    pub fn redacted(&self, env: &dyn Fn(&str) -> Option<String>) -> Settings {
        let hide = |kind: ProviderKind, p: &ProviderSettings| ProviderSettings {
            base_url: p.base_url.clone(),
            api_key: p.api_key.as_ref().map(|_| REDACTED.to_owned()),
            allow_insecure_http: p.allow_insecure_http,
            key_location: match env(kind.key_variable()).filter(|k| !k.is_empty()) {
                Some(_) => {
                    Some(KeyLocation::Environment { variable: kind.key_variable().to_owned() })
                }
                None => p.key_location.clone(),
            },
        };
        Settings {
            anthropic: hide(ProviderKind::Anthropic, &self.anthropic),
            openai: hide(ProviderKind::Openai, &self.openai),
            built_in_prices: cost::built_in_prices(),
            mcp_servers: mcp_servers::redacted(&self.mcp_servers, REDACTED),
            ..self.clone()
        }
    }

    /// What model calls cost: the built-in prices with these settings' over them.
    pub fn price_table(&self) -> PriceTable {
        PriceTable::with_overrides(&self.prices)
    }

    /// The settings file at `path` read without its keys, for front ends that only need the
    /// facade's configuration ([`Settings::facade_config`]); `None` (a system without a
    /// configuration folder) and a missing file are the defaults.
    pub fn without_keys(path: Option<&Path>) -> Result<Settings, ApiError> {
        Ok(path.map(read).transpose()?.unwrap_or_default())
    }

    /// [`Settings::without_keys`], where a file that cannot be read is reported in the log and
    /// the defaults are used: showing costs or a context is no reason to refuse a command.
    pub fn at_or_default(path: Option<&Path>) -> Settings {
        Settings::without_keys(path).unwrap_or_else(|err| {
            tracing::warn!("using the default settings: {}", err.message);
            Settings::default()
        })
    }

    /// What the facade works with from these settings, read from `settings_path`: the
    /// checkpoint storage cap, the tool results a context sends in full, the prices, and whether
    /// openings start with the project instructions, with the person's own file of them beside
    /// the settings file. Front ends pass it to `Flame::open` and, when the settings are saved,
    /// to `Flame::reconfigure`, so the window, the command line and the agent agree.
    pub fn facade_config(&self, settings_path: Option<&Path>) -> FlameConfig {
        FlameConfig {
            checkpoint_cap_bytes: self.checkpoint_cap_mb.saturating_mul(MIB),
            keep_tool_results: self.keep_tool_results as usize,
            prices: self.price_table(),
            project_instructions: self.project_instructions,
            personal_instructions: settings_path
                .and_then(Path::parent)
                .map(|folder| folder.join(PERSONAL_INSTRUCTIONS)),
        }
    }

    /// The model to use: `name`, else the default model. `env` reads environment variables
    /// (passed in, so tests need not touch the process environment).
    pub fn resolve(
        &self,
        name: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ResolvedModel, ApiError> {
        let name = name.or(self.default_model.as_deref()).ok_or_else(|| {
            ApiError::new(
                ErrorCode::Invalid,
                "no model is configured: set default_model in Flame's settings (for example claude-sonnet-4-5 or gpt-4o), or name one with flame chat --model",
            )
        })?;
        if let Some(local) = LocalModel::parse(name) {
            return Ok(self.resolve_local(name, local));
        }
        let model = self
            .models
            .iter()
            .find(|m| m.name == name)
            .cloned()
            .or_else(|| built_in(name))
            // An unknown name is taken for an OpenAI-compatible server's model (Ollama, vLLM…).
            .unwrap_or(ModelSettings {
                name: name.to_owned(),
                provider: ProviderKind::Openai,
                context_window: 128_000,
                max_output_tokens: 4_096,
            });
        let provider = self.provider(model.provider, env);
        Ok(ResolvedModel { model, provider, local_server: None })
    }

    /// The window Flame knows for `provider`'s model `name` without asking anyone: the one the
    /// settings list, else the built-in one.
    pub fn known_window(&self, provider: ProviderKind, name: &str) -> Option<u64> {
        let listed = self.models.iter().find(|m| m.name == name).cloned();
        listed
            .or_else(|| built_in(name))
            .filter(|m| m.provider == provider)
            .map(|m| m.context_window)
    }

    /// A model of a server on this computer, named `local:<host:port>/<model>`: spoken to over
    /// the OpenAI-compatible API at the server's address, without a key (none is sent to a
    /// local server, whatever key the OpenAI settings hold). Its window is the one the settings
    /// list under that name, else [`LOCAL_DEFAULT_WINDOW`] until the server is asked
    /// ([`ResolvedModel::local_server`]).
    fn resolve_local(&self, reference: &str, local: LocalModel) -> ResolvedModel {
        let listed = self.models.iter().find(|m| m.name == reference);
        let context_window = listed.map_or(LOCAL_DEFAULT_WINDOW, |m| m.context_window);
        let max_output_tokens =
            listed.map_or_else(|| local_reply_tokens(context_window), |m| m.max_output_tokens);
        ResolvedModel {
            model: ModelSettings {
                name: local.model,
                provider: ProviderKind::Openai,
                context_window,
                max_output_tokens,
            },
            provider: Provider {
                kind: ProviderKind::Openai,
                base_url: discover::base_url(&local.address),
                key: None,
                key_source: format!("no key (the model server at {})", local.address),
            },
            local_server: listed.is_none().then_some(local.address),
        }
    }

    /// Where `kind`'s requests go and with which key: the key from the provider's environment
    /// variable, else the saved one; the base URL from the settings, else the SDK's environment
    /// variable, else the provider's default.
    pub fn provider(&self, kind: ProviderKind, env: &dyn Fn(&str) -> Option<String>) -> Provider {
        let saved = match kind {
            ProviderKind::Anthropic => &self.anthropic,
            ProviderKind::Openai => &self.openai,
        };
        let (key, key_source) =
            match (env(kind.key_variable()).filter(|k| !k.is_empty()), &saved.api_key) {
                (Some(key), _) => (Some(ApiKey::new(key)), kind.key_variable().to_owned()),
                (None, Some(key)) => {
                    let source = match saved.key_location {
                        Some(KeyLocation::Keyring) => "the system keyring",
                        _ => "Flame's settings file",
                    };
                    (Some(ApiKey::new(key.clone())), source.to_owned())
                }
                (None, None) => (None, "nowhere".to_owned()),
            };
        let base_url = saved
            .base_url
            .clone()
            .or_else(|| env(kind.base_url_variable()).filter(|u| !u.is_empty()))
            .unwrap_or_else(|| kind.default_base_url().to_owned());
        Provider { kind, base_url: base_url.trim_end_matches('/').to_owned(), key, key_source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> =
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn keys_come_from_the_environment_first_and_base_urls_from_the_settings_first() {
        let mut settings =
            Settings { default_model: Some("claude-sonnet-4-5".into()), ..Settings::default() };
        settings.anthropic.api_key = Some("from-settings".into());
        let resolved = settings
            .resolve(
                None,
                &env(&[("ANTHROPIC_API_KEY", "from-env"), ("ANTHROPIC_BASE_URL", "http://env/")]),
            )
            .unwrap();
        assert_eq!(resolved.provider.key_source, "ANTHROPIC_API_KEY");
        assert_eq!(resolved.provider.base_url, "http://env");
        assert_eq!(resolved.model.context_window, 200_000);
        settings.anthropic.base_url = Some("http://settings".into());
        let resolved = settings.resolve(None, &env(&[])).unwrap();
        assert_eq!(
            (resolved.provider.key_source.as_str(), resolved.provider.base_url.as_str()),
            ("Flame's settings file", "http://settings")
        );
    }

    #[test]
    fn unknown_models_are_openai_compatible_and_no_model_is_a_clear_error() {
        let settings = Settings::default();
        let local = settings
            .resolve(Some("llama3.1:8b"), &env(&[("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")]))
            .unwrap();
        assert_eq!(local.provider.kind, ProviderKind::Openai);
        assert!(local.provider.key.is_none());
        let err = settings.resolve(None, &env(&[])).unwrap_err();
        assert!(err.message.contains("no model is configured"), "{}", err.message);
    }

    #[test]
    fn a_local_model_goes_to_its_server_without_a_key() {
        let mut settings = Settings::default();
        settings.openai.api_key = Some("sk-openai-saved".into());
        let env =
            env(&[("OPENAI_API_KEY", "sk-openai-env"), ("OPENAI_BASE_URL", "https://x.example")]);
        let local = settings.resolve(Some("local:127.0.0.1:11434/qwen2.5-coder:7b"), &env).unwrap();
        assert_eq!(local.model.name, "qwen2.5-coder:7b");
        assert_eq!(local.provider.kind, ProviderKind::Openai);
        assert_eq!(local.provider.base_url, "http://127.0.0.1:11434/v1");
        assert!(local.provider.key.is_none(), "a key went to a local server");
        assert_eq!(local.local_server.as_deref(), Some("127.0.0.1:11434"));
        assert_eq!(
            (local.model.context_window, local.model.max_output_tokens),
            (LOCAL_DEFAULT_WINDOW, 2_048)
        );
        let told = local.with_window(131_072);
        assert_eq!((told.model.context_window, told.model.max_output_tokens), (131_072, 4_096));
        // Listed in the settings under its local name, its window is the settings' own.
        settings.models.push(ModelSettings {
            name: "local:127.0.0.1:11434/qwen2.5-coder:7b".into(),
            provider: ProviderKind::Openai,
            context_window: 32_768,
            max_output_tokens: 512,
        });
        let listed =
            settings.resolve(Some("local:127.0.0.1:11434/qwen2.5-coder:7b"), &env).unwrap();
        assert_eq!((listed.model.context_window, listed.model.max_output_tokens), (32_768, 512));
        assert_eq!(listed.local_server, None);
        assert_eq!(local_reply_tokens(0), 1);
    }

    #[test]
    fn local_server_addresses_are_checked_and_default_to_the_usual_ports() {
        assert_eq!(Settings::default().local_servers(), DEFAULT_LOCAL_SERVERS);
        let with = |addresses: &[&str]| Settings {
            local_servers: Some(addresses.iter().map(|a| (*a).to_owned()).collect()),
            ..Settings::default()
        };
        assert!(with(&[]).check().is_ok());
        assert!(with(&["127.0.0.1:9000", "gpu.lan:11434"]).check().is_ok());
        for (bad, why) in [
            (vec!["http://127.0.0.1:9000"], "host:port"),
            (vec!["127.0.0.1"], "no port"),
            (vec!["127.0.0.1:9000", " 127.0.0.1:9000"], "listed twice"),
        ] {
            let err = with(&bad).check().unwrap_err();
            assert!(err.message.contains(why), "{bad:?}: {}", err.message);
        }
        let many: Vec<String> =
            (0..=MAX_LOCAL_SERVERS).map(|n| format!("127.0.0.1:{}", 9000 + n)).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(with(&refs).check().unwrap_err().message.contains("at most 32"));
        // An empty list is kept as empty (nothing is looked for), not taken for the defaults.
        let text = serde_json::to_string(&with(&[])).unwrap();
        let back: Settings = serde_json::from_str(&text).unwrap();
        assert_eq!(back.local_servers(), Vec::<String>::new());
        let text = serde_json::to_string(&Settings::default()).unwrap();
        assert!(!text.contains("local_servers"), "{text}");
    }

    /// A price the person gave for a model served on their own computer.
    fn local_price() -> ModelPrice {
        ModelPrice {
            model: "llama3.1:8b".into(),
            input: 100_000,
            output: 200_000,
            cache_read: 0,
            cache_write: 0,
            cache_write_long: None,
            as_of: "2026-11".into(),
        }
    }

    fn file_store(path: &Path) -> SettingsFile {
        SettingsFile::new(path.to_owned(), KeyStore::SettingsFile)
    }

    #[test]
    fn the_redacted_settings_never_hold_a_key_and_say_where_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let file = file_store(&path);
        let mut settings = Settings::default();
        settings.openai.api_key = Some("sk-secret".into());
        file.save(&settings).unwrap();
        let shown = file.load().unwrap().redacted(&env(&[]));
        let text = serde_json::to_string(&shown).unwrap();
        assert!(!text.contains("sk-secret") && text.contains("(set)"), "{text}");
        let in_file = KeyLocation::File { path: path.display().to_string() };
        assert_eq!(shown.openai.key_location.as_ref(), Some(&in_file));
        assert_eq!(shown.anthropic.key_location.as_ref(), Some(&in_file), "where a key would go");
        let shown = file.load().unwrap().redacted(&env(&[("OPENAI_API_KEY", "sk-env")]));
        assert_eq!(
            shown.openai.key_location,
            Some(KeyLocation::Environment { variable: "OPENAI_API_KEY".into() })
        );
        assert!(!serde_json::to_string(&shown).unwrap().contains("sk-env"));
    }

    #[test]
    fn the_facade_is_configured_in_bytes_at_the_settings_prices_and_new_settings_are_its_defaults()
    {
        assert_eq!(Settings::default().facade_config(None), FlameConfig::default());
        let dear = local_price();
        let settings = Settings {
            checkpoint_cap_mb: 3,
            keep_tool_results: 7,
            prices: vec![dear.clone()],
            project_instructions: false,
            ..Settings::default()
        };
        let config = settings.facade_config(Some(Path::new("/home/a/.config/flame/settings.json")));
        assert_eq!((config.checkpoint_cap_bytes, config.keep_tool_results), (3 * MIB, 7));
        assert_eq!(config.prices.get("llama3.1:8b"), Some(&dear));
        assert!(!config.project_instructions);
        assert_eq!(
            config.personal_instructions.as_deref(),
            Some(Path::new("/home/a/.config/flame/AGENTS.md")),
            "the person's own instructions are beside the settings"
        );
        // A file written before the setting existed turns the instructions on.
        let old: Settings = serde_json::from_str(r#"{"keep_tool_results": 3}"#).unwrap();
        assert!(old.project_instructions);
    }

    #[test]
    fn debug_never_prints_a_key() {
        let mut settings = Settings::default();
        settings.anthropic.api_key = Some("sk-ant-debug-SENTINEL-5e6f".into());
        settings.openai.api_key = Some("sk-openai-debug-SENTINEL-7a8b".into());
        for text in [format!("{settings:?}"), format!("{:#?}", settings.openai)] {
            assert!(!text.contains("SENTINEL"), "{text}");
            assert!(text.contains("[hidden]"), "{text}");
        }
    }

    #[test]
    fn edits_from_the_ui_keep_keys_they_never_saw() {
        let mut saved = Settings::default();
        saved.anthropic.api_key = Some("sk-ant-secret".into());
        saved.openai.api_key = Some("sk-openai-secret".into());
        let mut edited = saved.redacted(&env(&[]));
        edited.default_model = Some("gpt-4o".into());
        edited.openai.api_key = Some(String::new());
        let merged = saved.with_changes(edited);
        assert_eq!(merged.anthropic.api_key.as_deref(), Some("sk-ant-secret"));
        assert_eq!(merged.openai.api_key, None);
        assert_eq!(merged.default_model.as_deref(), Some("gpt-4o"));
    }

    #[test]
    fn a_base_url_moved_to_another_host_drops_the_saved_key_unless_a_new_one_comes() {
        let mut saved = Settings::default();
        saved.openai.api_key = Some("sk-openai-secret".into());
        saved.anthropic.api_key = Some("sk-ant-secret".into());
        saved.anthropic.base_url = Some("https://proxy.example.com/anthropic".into());
        let moved_to = |openai: Option<&str>, anthropic: Option<&str>, new_key: Option<&str>| {
            let mut edited = saved.redacted(&env(&[]));
            edited.openai.base_url = openai.map(str::to_owned);
            edited.openai.api_key = new_key.map(str::to_owned);
            edited.anthropic.base_url = anthropic.map(str::to_owned);
            edited.anthropic.api_key = None;
            saved.with_changes(edited)
        };
        let same = "https://proxy.example.com/anthropic";
        // Another path on the same host, or the default URL written out, keeps the key.
        let kept = moved_to(
            Some("https://api.openai.com/v2/"),
            Some("https://PROXY.example.com:443/"),
            None,
        );
        assert_eq!(kept.openai.api_key.as_deref(), Some("sk-openai-secret"));
        assert_eq!(kept.anthropic.api_key.as_deref(), Some("sk-ant-secret"));
        // Another host, scheme or port drops it.
        for url in [
            "https://evil.example.net/v1",
            "http://api.openai.com/v1",
            "https://api.openai.com:8443/v1",
        ] {
            let merged = moved_to(Some(url), Some(same), None);
            assert_eq!(merged.openai.api_key, None, "{url}");
            assert_eq!(merged.anthropic.api_key.as_deref(), Some("sk-ant-secret"));
        }
        // Back to the default (no base URL) from the proxy is another host too.
        assert_eq!(moved_to(None, None, None).anthropic.api_key, None);
        // A new key given with the move is the one kept.
        let merged = moved_to(Some("http://127.0.0.1:11434/v1"), Some(same), Some("sk-local"));
        assert_eq!(merged.openai.api_key.as_deref(), Some("sk-local"));
    }

    #[test]
    fn plain_http_to_another_computer_is_refused_unless_confirmed() {
        let with_url = |url: &str, confirmed: bool| {
            let mut settings = Settings::default();
            settings.openai.base_url = Some(url.to_owned());
            settings.openai.allow_insecure_http = confirmed;
            settings.check()
        };
        for local in [
            "http://127.0.0.1:11434/v1",
            "http://127.8.9.10/v1",
            "http://localhost:8080/v1",
            "http://LOCALHOST/v1",
            "http://[::1]:8000/v1",
            "https://api.example.com/v1",
        ] {
            assert!(with_url(local, false).is_ok(), "{local}");
        }
        for remote in [
            "http://192.168.1.20:11434/v1",
            "http://models.example.com/v1",
            "http://[2001:db8::1]/v1",
            "http://localhost.example.com/v1",
        ] {
            let err = with_url(remote, false).unwrap_err();
            assert_eq!(err.code, ErrorCode::Invalid);
            assert!(err.message.contains("unencrypted"), "{}", err.message);
            assert!(with_url(remote, true).is_ok(), "{remote} once confirmed");
        }
        for (bad, why) in [
            ("api.example.com/v1", "not a URL"),
            ("ftp://example.com", "https://"),
            ("file:///tmp/x", "names no host"),
        ] {
            let err = with_url(bad, true).unwrap_err();
            assert!(err.message.contains(why), "{bad}: {}", err.message);
        }
    }

    #[test]
    fn settings_round_trip_through_their_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("flame").join("settings.json");
        let file = file_store(&path);
        assert_eq!(file.load().unwrap().redacted(&env(&[])).openai.api_key, None);
        let mut settings = Settings {
            default_model: Some("gpt-4o".into()),
            autonomy: Autonomy::Ask,
            ..Settings::default()
        };
        settings.openai.api_key = Some("sk-kept-in-the-file".into());
        file.save(&settings).unwrap();
        let loaded = file.load().unwrap();
        assert_eq!(
            (loaded.default_model.as_deref(), loaded.autonomy, loaded.openai.api_key.as_deref()),
            (Some("gpt-4o"), Autonomy::Ask, Some("sk-kept-in-the-file"))
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("key_location"), "where a key is, is not stored: {text}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        std::fs::write(&path, "{ not json").unwrap();
        assert_eq!(file.load().unwrap_err().code, ErrorCode::Invalid);
    }

    #[test]
    fn settings_that_cannot_work_are_refused_and_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let file = file_store(&path);
        let model = |name: &str, window: u64, reply: u32| ModelSettings {
            name: name.to_owned(),
            provider: ProviderKind::Openai,
            context_window: window,
            max_output_tokens: reply,
        };
        let good =
            Settings { models: vec![model("llama3.1:8b", 131_072, 4096)], ..Settings::default() };
        file.save(&good).unwrap();
        let cases = [
            (vec![model("", 8000, 100)], "has no name"),
            (vec![model(" llama", 8000, 100)], "white space"),
            (vec![model("a", 8000, 100), model("a", 9000, 100)], "listed twice"),
            (vec![model("a", 8000, 0)], "1 token"),
            (vec![model("a", 4096, 4096)], "must be larger"),
        ];
        for (models, why) in cases {
            let err = file.save(&Settings { models, ..Settings::default() }).unwrap_err();
            assert_eq!(err.code, ErrorCode::Invalid);
            assert!(err.message.contains(why), "{}", err.message);
        }
        let zero = FrameBudget { tool_calls: Some(0), ..FrameBudget::default() };
        let err = file.save(&Settings { turn_budget: zero, ..Settings::default() }).unwrap_err();
        assert!(err.message.contains("a per-turn budget of nothing"), "{}", err.message);
        for keep in [0, MAX_KEEP_TOOL_RESULTS + 1] {
            let err = file
                .save(&Settings { keep_tool_results: keep, ..Settings::default() })
                .unwrap_err();
            assert!(err.message.contains("tool results sent in full"), "{}", err.message);
        }
        let mut insecure = Settings::default();
        insecure.anthropic.base_url = Some("http://10.0.0.5:8080".into());
        assert!(file.save(&insecure).unwrap_err().message.contains("unencrypted"));
        let mut loaded = file.load().unwrap();
        for (_, provider) in loaded.providers_mut() {
            provider.key_location = None;
        }
        assert_eq!(loaded, good, "the file is as it was");
    }

    #[test]
    fn prices_are_saved_checked_and_shown_beside_the_built_in_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let file = file_store(&path);
        let local = local_price();
        assert_eq!(
            Settings::at_or_default(Some(&path)).price_table(),
            PriceTable::default(),
            "no file yet"
        );
        file.save(&Settings { prices: vec![local.clone()], ..Settings::default() }).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("llama3.1:8b") && !text.contains("built_in_prices"), "{text}");
        let loaded = file.load().unwrap();
        assert_eq!(loaded.prices, std::slice::from_ref(&local));
        assert!(loaded.built_in_prices.is_empty(), "never read from the file");
        assert_eq!(
            Settings::at_or_default(Some(&path)).price_table().get("llama3.1:8b"),
            Some(&local)
        );
        let shown = loaded.redacted(&env(&[]));
        assert_eq!(shown.built_in_prices, cost::built_in_prices());
        // What the window sends back with the built-in prices in it is saved without them.
        file.save(&loaded.with_changes(shown)).unwrap();
        assert!(!std::fs::read_to_string(&path).unwrap().contains("claude-sonnet-4-5"));
        let too_dear = ModelPrice { input: cost::MAX_PRICE_MICRO_USD + 1, ..local.clone() };
        let err =
            file.save(&Settings { prices: vec![too_dear], ..Settings::default() }).unwrap_err();
        assert_eq!(err.code, ErrorCode::Invalid);
        assert!(err.message.contains("input price of llama3.1:8b"), "{}", err.message);
        // A settings file that cannot be read leaves the built-in prices in use.
        std::fs::write(&path, "{ not json").unwrap();
        assert_eq!(Settings::without_keys(Some(&path)).unwrap_err().code, ErrorCode::Invalid);
        assert_eq!(Settings::at_or_default(Some(&path)).price_table(), PriceTable::default());
        assert_eq!(Settings::at_or_default(None).price_table(), PriceTable::default());
    }

    /// Against a real Secret Service when the session has one; see
    /// `key_store::tests::keys_are_saved_read_and_removed_in_the_system_keyring`.
    #[test]
    #[allow(clippy::print_stderr, reason = "a skipped run says so in the test output")]
    fn with_a_keyring_keys_leave_the_file_and_a_key_saved_before_moves_there() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let file = SettingsFile::detect(path.clone());
        if file.key_store() != KeyStore::Keyring {
            eprintln!("skipped: no Secret Service (no system keyring answers in this session)");
            return;
        }
        // A key saved while no keyring answered is read from the file, and says so.
        let mut before = Settings::default();
        before.anthropic.api_key = Some("sk-ant-file-SENTINEL-1a2b".into());
        file_store(&path).save(&before).unwrap();
        let loaded = file.load().unwrap();
        assert_eq!(loaded.anthropic.api_key.as_deref(), Some("sk-ant-file-SENTINEL-1a2b"));
        assert!(matches!(loaded.anthropic.key_location, Some(KeyLocation::File { .. })));
        // The next save moves it to the keyring, and the file holds no key any more.
        file.save(&loaded).unwrap();
        assert!(!std::fs::read_to_string(&path).unwrap().contains("SENTINEL"));
        let loaded = file.load().unwrap();
        assert_eq!(loaded.anthropic.api_key.as_deref(), Some("sk-ant-file-SENTINEL-1a2b"));
        assert_eq!(loaded.anthropic.key_location, Some(KeyLocation::Keyring));
        let resolved =
            Settings { default_model: Some("claude-sonnet-4-5".into()), ..loaded.clone() }
                .resolve(None, &env(&[]))
                .unwrap();
        assert_eq!(resolved.provider.key_source, "the system keyring");
        // Removing it removes it from the keyring.
        let mut removed = loaded.redacted(&env(&[]));
        removed.anthropic.api_key = Some(String::new());
        file.save(&loaded.with_changes(removed)).unwrap();
        assert_eq!(file.load().unwrap().anthropic.api_key, None);
        assert_eq!(KeyStore::Keyring.read(&path, ProviderKind::Anthropic).unwrap(), None);
    }
}
