//! The models a person can pick, and where each came from: the ones the settings name
//! (configured), the ones each provider lists at its `/v1/models` when it has a key (kept in a
//! cache beside the settings with the time they were fetched, so a list is there offline), and
//! the ones model servers on this computer serve (looked for at the settings' `local_servers`
//! every time the list is made). The window and `flame models` show the same [`ModelList`].
//!
//! A local server's model is named `local:<host:port>/<model>` ([`crate::LocalModel`]): that name is
//! all a chat needs, with no settings edit — it is spoken to over the OpenAI-compatible API at
//! the server's address, and its window asked of the server (see [`Settings::resolve`]).
//!
//! Every provider is asked at once with the local servers (absent `local_servers`: the four usual
//! ports); OpenAI's list is asked without a key too when its base URL is another server, and its
//! embedding, speech, image and moderation models are left out by name. Each model comes with its
//! window and source, each id once, and each provider and address with what happened there. A
//! provider's list is cached in `provider-models.json` beside the settings (0600, replaced whole,
//! no key) with its base URL and fetch time, fetched again after `PROVIDER_LIST_MAX_AGE_MS` or on
//! `--refresh`; when the provider cannot be reached, the cached list of any age for the same base
//! URL is shown and says why, and a cache over `MAX_PROVIDER_LIST_CACHE_BYTES` or unreadable is no
//! cache. Time comes in as `now_ms`.

use std::path::{Path, PathBuf};

use flame_api::ApiError;
use flame_models::discover::{Discovery, FoundModel, ServerKind};
use flame_models::{Client, Provider, ProviderKind, RetryPolicy};
use serde::{Deserialize, Serialize};

use crate::local_model::LocalModel;
use crate::private_file;
use crate::settings::{Settings, SettingsFile};

/// How old a provider's cached list may be before the next listing fetches it again, in
/// milliseconds (an hour): providers add models every few weeks, and a picker should not wait
/// on the network each time it opens.
pub const PROVIDER_LIST_MAX_AGE_MS: i64 = 60 * 60 * 1000;

/// The cache of the providers' lists, beside the settings file.
pub const PROVIDER_LIST_CACHE: &str = "provider-models.json";

/// The largest cache file read, in bytes; a larger one is taken as no cache. Two lists of
/// [`flame_models::discover::MAX_MODELS_PER_SERVER`] models of the longest names fit in it.
pub const MAX_PROVIDER_LIST_CACHE_BYTES: u64 = 4 * 1024 * 1024;

/// Where a listed model came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ModelSource {
    /// The settings name it: their default model, or one of their models.
    Configured { provider: ProviderKind },
    /// The provider's `/v1/models` lists it.
    Provider { provider: ProviderKind },
    /// A model server on this computer serves it.
    Local { address: String, server: ServerKind },
}

/// A model to pick.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct ListedModel {
    /// What a chat is asked with (`model`): the name, or `local:<host:port>/<name>`.
    pub id: String,
    /// The model's own name, for showing.
    pub name: String,
    pub source: ModelSource,
    /// The tokens a request may hold, where known: the settings', the provider's or the
    /// server's word, or what Flame knows of the name.
    pub context_window: Option<u64>,
}

/// A provider's list, as it was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct ProviderListing {
    pub provider: ProviderKind,
    pub base_url: String,
    /// When the list shown was fetched (milliseconds since the epoch); none without a list.
    pub fetched_at_ms: Option<i64>,
    /// The list shown is the cached one (fresh enough, or the provider could not be asked).
    pub from_cache: bool,
    /// Models the provider listed beyond the limits.
    pub models_left_out: u64,
    /// Why there is no list, or why the cached one is shown.
    pub problem: Option<String>,
}

/// An address looked at, and what answered there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct LocalServer {
    pub address: String,
    /// The kind of server found; none when nothing usable answered.
    pub kind: Option<ServerKind>,
    pub models: u64,
    pub models_left_out: u64,
    /// Why no server is listed (nothing answers, no answer in time, not a model server).
    pub problem: Option<String>,
}

/// Every model to pick, in the picker's order: configured, then each provider's, then each local
/// server's; each id once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct ModelList {
    pub models: Vec<ListedModel>,
    /// The settings' default model, when set.
    pub default_model: Option<String>,
    pub providers: Vec<ProviderListing>,
    pub local_servers: Vec<LocalServer>,
}

/// How to make the list: whether providers are asked even when their cached list is fresh, and
/// how long local servers are given.
#[derive(Debug, Clone)]
pub struct ListOptions {
    pub refresh: bool,
    pub discovery: Discovery,
    pub client: Client,
}

impl Default for ListOptions {
    fn default() -> ListOptions {
        ListOptions {
            refresh: false,
            discovery: Discovery::default(),
            client: Client::new(RetryPolicy::default()),
        }
    }
}

/// The list for the settings in `file` (and the cache beside it), keys read through `env`, at
/// time `now_ms`: what front ends call.
pub async fn list_models_for(
    file: &SettingsFile,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
    now_ms: i64,
    options: &ListOptions,
) -> Result<ModelList, ApiError> {
    let settings = file.load()?;
    Ok(list_models(&settings, &cache_path(file.path()), env, now_ms, options).await)
}

/// Where the providers' lists are cached for the settings at `settings_path`.
pub fn cache_path(settings_path: &Path) -> PathBuf {
    settings_path.with_file_name(PROVIDER_LIST_CACHE)
}

/// The list for `settings`, the providers' lists cached at `cache`. Local servers and providers
/// are asked at once; nothing here fails: a provider or a server that cannot be asked says why
/// in its entry.
pub async fn list_models(
    settings: &Settings,
    cache: &Path,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
    now_ms: i64,
    options: &ListOptions,
) -> ModelList {
    let providers = [ProviderKind::Anthropic, ProviderKind::Openai].map(|kind| {
        let provider = settings.provider(kind, env);
        let why_not = unlisted(&provider);
        (provider, why_not)
    });
    let addresses = settings.local_servers();
    let (lists, found) = tokio::join!(
        provider_lists(&providers, cache, now_ms, options),
        options.discovery.find(&addresses),
    );

    let mut list = ModelList {
        models: Vec::new(),
        default_model: settings.default_model.clone(),
        providers: Vec::new(),
        local_servers: Vec::new(),
    };
    let found_ids: Vec<String> = found
        .iter()
        .filter_map(|(_, result)| result.as_ref().ok())
        .flat_map(|server| {
            server.models.iter().map(|m| LocalModel::reference(&server.address, &m.name))
        })
        .collect();
    for name in configured_names(settings) {
        // A local model the server still lists is shown under its server, with its window.
        if found_ids.contains(&name) {
            continue;
        }
        let Ok(resolved) = settings.resolve(Some(&name), env) else { continue };
        let context_window =
            resolved.local_server.is_none().then_some(resolved.model.context_window);
        let source = ModelSource::Configured { provider: resolved.model.provider };
        add_once(&mut list.models, ListedModel { id: name.clone(), name, source, context_window });
    }
    for (listing, models) in lists {
        let provider = listing.provider;
        for model in models.into_iter().filter(|m| is_chat_model(provider, &m.name)) {
            let context_window =
                model.context_window.or_else(|| settings.known_window(provider, &model.name));
            let source = ModelSource::Provider { provider };
            let entry =
                ListedModel { id: model.name.clone(), name: model.name, source, context_window };
            add_once(&mut list.models, entry);
        }
        list.providers.push(listing);
    }
    for (address, result) in found {
        match result {
            Ok(server) => {
                for model in &server.models {
                    let source =
                        ModelSource::Local { address: server.address.clone(), server: server.kind };
                    let entry = ListedModel {
                        id: LocalModel::reference(&server.address, &model.name),
                        name: model.name.clone(),
                        source,
                        context_window: model.context_window,
                    };
                    add_once(&mut list.models, entry);
                }
                list.local_servers.push(LocalServer {
                    address,
                    kind: Some(server.kind),
                    models: server.models.len() as u64,
                    models_left_out: server.models_left_out,
                    problem: None,
                });
            }
            Err(err) => list.local_servers.push(LocalServer {
                address,
                kind: None,
                models: 0,
                models_left_out: 0,
                problem: Some(err.to_string()),
            }),
        }
    }
    list
}

/// Adds `model` unless a model of its id is listed already.
fn add_once(models: &mut Vec<ListedModel>, model: ListedModel) {
    if !models.iter().any(|m| m.id == model.id) {
        models.push(model);
    }
}

/// The names the settings give: the default model, then the listed ones, each once.
fn configured_names(settings: &Settings) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let given = settings.default_model.iter().chain(settings.models.iter().map(|m| &m.name));
    for name in given {
        let name = name.trim();
        if !name.is_empty() && !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }
    names
}

/// Why a provider is not asked for its list: Anthropic needs a key; OpenAI needs one at its own
/// address (a compatible server elsewhere may answer without).
fn unlisted(provider: &Provider) -> Option<String> {
    if provider.key.is_some() {
        return None;
    }
    let needs_key = match provider.kind {
        ProviderKind::Anthropic => true,
        ProviderKind::Openai => provider.base_url == ProviderKind::Openai.default_base_url(),
    };
    needs_key.then(|| {
        format!(
            "no key: set {} or add a key in the settings to list {}'s models",
            provider.kind.key_variable(),
            provider.kind.name()
        )
    })
}

/// Whether a model a provider lists can chat. OpenAI lists its embedding, speech, image and
/// moderation models beside the chat models, under names that say so; the rest is kept.
fn is_chat_model(provider: ProviderKind, name: &str) -> bool {
    const NOT_CHAT: [&str; 10] = [
        "embed",
        "whisper",
        "tts",
        "dall-e",
        "moderation",
        "transcribe",
        "gpt-image",
        "audio",
        "realtime",
        "davinci",
    ];
    provider == ProviderKind::Anthropic || !NOT_CHAT.iter().any(|word| name.contains(word))
}

/// One provider's list as cached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct CachedList {
    provider: ProviderKind,
    /// The list is of the provider at this address only.
    base_url: String,
    fetched_at_ms: i64,
    models: Vec<FoundModel>,
    models_left_out: u64,
}

/// The cache file: the providers' lists as last fetched.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct ListCache {
    lists: Vec<CachedList>,
}

impl ListCache {
    /// The cache at `path`; a missing, unreadable, too large or malformed file is an empty cache
    /// (it is Flame's own copy of what providers said, fetched again when needed).
    fn read(path: &Path) -> ListCache {
        let fits = std::fs::metadata(path).is_ok_and(|m| m.len() <= MAX_PROVIDER_LIST_CACHE_BYTES);
        if !fits {
            return ListCache::default();
        }
        std::fs::read(path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    fn find(&self, provider: &Provider) -> Option<&CachedList> {
        self.lists.iter().find(|l| l.provider == provider.kind && l.base_url == provider.base_url)
    }
}

/// Each provider's list (for those that can be asked) with how it was found, from the cache
/// when it is fresh and `refresh` is not asked, else fetched and cached; a fetch that fails
/// falls back on the cached list, however old, and says why.
async fn provider_lists(
    providers: &[(Provider, Option<String>); 2],
    cache_path: &Path,
    now_ms: i64,
    options: &ListOptions,
) -> Vec<(ProviderListing, Vec<FoundModel>)> {
    let mut cache = ListCache::read(cache_path);
    let fetch = |(provider, why_not): &(Provider, Option<String>)| {
        let fresh = cache
            .find(provider)
            .is_some_and(|c| now_ms - c.fetched_at_ms < PROVIDER_LIST_MAX_AGE_MS);
        let ask = why_not.is_none() && (options.refresh || !fresh);
        let provider = provider.clone();
        async move { if ask { Some(options.client.list_models(&provider).await) } else { None } }
    };
    let [anthropic, openai] = providers;
    let fetched = tokio::join!(fetch(anthropic), fetch(openai));
    let fetched = [fetched.0, fetched.1];
    let mut lists = Vec::new();
    let mut changed = false;
    for ((provider, why_not), fetched) in providers.iter().zip(fetched) {
        let mut listing = ProviderListing {
            provider: provider.kind,
            base_url: provider.base_url.clone(),
            fetched_at_ms: None,
            from_cache: false,
            models_left_out: 0,
            problem: why_not.clone(),
        };
        let models = match fetched {
            Some(Ok(listed)) => {
                let entry = CachedList {
                    provider: provider.kind,
                    base_url: provider.base_url.clone(),
                    fetched_at_ms: now_ms,
                    models: listed.models.clone(),
                    models_left_out: listed.models_left_out,
                };
                cache.lists.retain(|l| l.provider != provider.kind);
                cache.lists.push(entry);
                changed = true;
                listing.fetched_at_ms = Some(now_ms);
                listing.models_left_out = listed.models_left_out;
                listed.models
            }
            other => {
                if let Some(Err(err)) = &other {
                    listing.problem = Some(match cache.find(provider) {
                        Some(_) => format!("{err}; showing the list fetched before"),
                        None => err.to_string(),
                    });
                }
                match cache.find(provider).filter(|_| why_not.is_none()) {
                    Some(cached) => {
                        listing.fetched_at_ms = Some(cached.fetched_at_ms);
                        listing.from_cache = true;
                        listing.models_left_out = cached.models_left_out;
                        cached.models.clone()
                    }
                    None => Vec::new(),
                }
            }
        };
        lists.push((listing, models));
    }
    if changed && let Err(err) = write_cache(cache_path, &cache) {
        tracing::warn!("the providers' lists of models were not cached: {err}");
    }
    lists
}

/// Writes the cache whole (a reader never sees half of it), readable by its owner only like
/// the settings beside it.
fn write_cache(path: &Path, cache: &ListCache) -> std::io::Result<()> {
    let text = serde_json::to_vec_pretty(cache).map_err(std::io::Error::other)?;
    private_file::replace(path, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_lists_what_cannot_chat_under_names_that_say_so() {
        for chat in ["gpt-4o", "gpt-5-mini", "o3", "chatgpt-4o-latest", "gpt-4o-search-preview"] {
            assert!(is_chat_model(ProviderKind::Openai, chat), "{chat}");
        }
        for other in [
            "text-embedding-3-small",
            "whisper-1",
            "tts-1-hd",
            "dall-e-3",
            "omni-moderation-latest",
            "gpt-4o-transcribe",
            "gpt-image-1",
            "gpt-4o-realtime-preview",
            "davinci-002",
        ] {
            assert!(!is_chat_model(ProviderKind::Openai, other), "{other}");
        }
        assert!(is_chat_model(ProviderKind::Anthropic, "claude-embed-nothing"));
    }
}
