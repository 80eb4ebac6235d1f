//! Model servers running on this computer, found by themselves: Ollama, llama.cpp's server, LM
//! Studio and vLLM, looked for at a list of addresses (the settings' `local_servers`, by default
//! each one's usual port on 127.0.0.1), every address at once and each with a short deadline.
//!
//! Which server answers is told by what it serves, not by its port: llama.cpp's server answers
//! `/props` with its `default_generation_settings`; Ollama answers `/api/tags` with its models;
//! vLLM's `/v1/models` entries carry `max_model_len` (and `owned_by: "vllm"`); LM Studio answers
//! `/api/v0/models`; any other server that lists models at `/v1/models` is taken for an
//! OpenAI-compatible one. llama.cpp is asked first because it also lists an Ollama-style `models`
//! array. The context window is what the server says a request gets: llama.cpp's `n_ctx` (per
//! slot), the `num_ctx` an Ollama model is set to run with, else the `*.context_length` of its
//! `model_info` (`/api/show`), vLLM's `max_model_len`, LM Studio's loaded or largest context.
//!
//! Every one of these servers also serves the OpenAI Chat Completions API under `/v1`, which is
//! how a model found here is talked to ([`FoundServer::base_url`]).
//!
//! Everything read from a server is bounded: a response of at most
//! [`MAX_DISCOVERY_RESPONSE_BYTES`], [`MAX_MODELS_PER_SERVER`] models of names of at most
//! [`MAX_MODEL_NAME_BYTES`], windows of at most [`MAX_CONTEXT_WINDOW`] tokens, and at most
//! [`MAX_LOCAL_SERVERS`] addresses looked at.
//!
//! Each address is given `DISCOVERY_TIMEOUT` to say what it is and list its models, and as long
//! again for Ollama's windows (`/api/show`, eight at a time, embedding models left out); never
//! through a proxy. Both this and a provider's list keep at most `MAX_MODELS_PER_SERVER` models and
//! count the rest, and take names without control characters. `tests/models/discover.rs` plays
//! Ollama, llama.cpp, vLLM, LM Studio and hostile servers (a body that never ends, 10,000 models,
//! silence past the deadline, garbage).

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::MAX_USAGE_TOKENS;

/// Where the usual local servers listen: Ollama, llama.cpp's server, LM Studio, vLLM.
pub const DEFAULT_LOCAL_SERVERS: [&str; 4] =
    ["127.0.0.1:11434", "127.0.0.1:8080", "127.0.0.1:1234", "127.0.0.1:8000"];

/// The most addresses looked at. A person lists a handful; the bound keeps a settings file from
/// making Flame open thousands of connections at once.
pub const MAX_LOCAL_SERVERS: usize = 32;

/// The longest address, in bytes (a host name is at most 253 bytes, a port 5 digits).
pub const MAX_ADDRESS_BYTES: usize = 260;

/// How long a server has to say what it is and list its models, and then again to give the
/// models' windows. Servers on this computer answer in milliseconds; an address where nothing
/// listens is refused at once, so only a server that hangs costs the whole wait.
pub const DISCOVERY_TIMEOUT: Duration = Duration::from_millis(1500);

/// The most of one response that is read, in bytes; a longer one is not read further and the
/// server is reported unreadable. A list of a thousand models takes a few hundred kilobytes, and
/// Ollama's `/api/show` (with a model's licence and template) tens of kilobytes.
pub const MAX_DISCOVERY_RESPONSE_BYTES: usize = 2 * 1024 * 1024;

/// The most models kept of one server (or one provider's list); the rest are counted in
/// `models_left_out`. A picker of more would not be read by anyone.
pub const MAX_MODELS_PER_SERVER: usize = 1000;

/// The longest model name kept, in bytes; longer names are left out (and counted). Ollama's
/// longest names (`hf.co/owner/repository:quantization`) take under a hundred.
pub const MAX_MODEL_NAME_BYTES: usize = 256;

/// The largest context window believed, in tokens; a larger number is taken as unknown, since it
/// would overflow the budgets Flame computes from it.
pub const MAX_CONTEXT_WINDOW: u64 = MAX_USAGE_TOKENS;

/// How many of Ollama's `/api/show` requests are in flight at once.
const SHOW_CONCURRENCY: usize = 8;

/// Which program serves the models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ServerKind {
    Ollama,
    LlamaCpp,
    LmStudio,
    Vllm,
    /// A server that lists models at `/v1/models` and is none of the above.
    OpenaiCompatible,
}

impl ServerKind {
    /// The program's name, as its makers write it.
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Ollama => "Ollama",
            ServerKind::LlamaCpp => "llama.cpp",
            ServerKind::LmStudio => "LM Studio",
            ServerKind::Vllm => "vLLM",
            ServerKind::OpenaiCompatible => "OpenAI-compatible server",
        }
    }
}

/// A model a server (or a provider) lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct FoundModel {
    pub name: String,
    /// The tokens a request may hold, when the server says.
    pub context_window: Option<u64>,
}

/// A model server found at an address, with its models.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct FoundServer {
    /// `host:port`, as looked at.
    pub address: String,
    pub kind: ServerKind,
    pub models: Vec<FoundModel>,
    /// Models not kept: past [`MAX_MODELS_PER_SERVER`], or named past [`MAX_MODEL_NAME_BYTES`]
    /// or with control characters.
    pub models_left_out: u64,
}

impl FoundServer {
    /// The base URL of the server's OpenAI-compatible API, which every kind serves.
    pub fn base_url(&self) -> String {
        base_url(&self.address)
    }
}

/// The base URL of the OpenAI-compatible API of the server at `address`.
pub fn base_url(address: &str) -> String {
    format!("http://{address}/v1")
}

/// Why nothing usable was found at an address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    #[error("{address} is not an address: {reason}")]
    BadAddress { address: String, reason: String },
    #[error("nothing answers at {address}")]
    Nothing { address: String },
    #[error("{address} did not answer within {millis} ms")]
    TimedOut { address: String, millis: u128 },
    #[error("{address} answers, but not as a model server Flame knows: {detail}")]
    NotAModelServer { address: String, detail: String },
}

/// `text` as an address to look at: `host:port` (a host name, an IPv4 address, or an IPv6
/// address in brackets), with nothing before or after. Returns it trimmed.
pub fn check_address(text: &str) -> Result<String, String> {
    let address = text.trim();
    if address.is_empty() {
        return Err("it is empty".to_owned());
    }
    if address.len() > MAX_ADDRESS_BYTES {
        return Err(format!("it is longer than {MAX_ADDRESS_BYTES} bytes"));
    }
    if address.contains("://")
        || address.contains(['/', '?', '#', '@'])
        || address.contains(char::is_whitespace)
    {
        return Err("write it as host:port, for example 127.0.0.1:11434".to_owned());
    }
    let url = reqwest::Url::parse(&format!("http://{address}/"))
        .map_err(|e| format!("write it as host:port, for example 127.0.0.1:11434 ({e})"))?;
    if url.host().is_none() {
        return Err("it names no host".to_owned());
    }
    // The URL parser drops a port that is the scheme's default, so the text itself must end in one.
    let port = address.rsplit_once(':').map(|(_, port)| port);
    if !port.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) {
        return Err("it names no port (host:port)".to_owned());
    }
    Ok(address.to_owned())
}

/// Looks for model servers.
#[derive(Debug, Clone)]
pub struct Discovery {
    http: reqwest::Client,
    timeout: Duration,
}

impl Default for Discovery {
    fn default() -> Discovery {
        Discovery::new(DISCOVERY_TIMEOUT)
    }
}

/// Why one request of a probe gave nothing.
#[derive(Debug)]
enum Fetch {
    /// Nothing listens (the connection was refused or could not be made).
    Nothing,
    TimedOut,
    Status(u16),
    TooLarge,
    NotJson(String),
    Broken(String),
}

impl Fetch {
    fn describe(&self, path: &str) -> String {
        match self {
            Fetch::Nothing => format!("{path} could not be reached"),
            Fetch::TimedOut => format!("{path} did not answer in time"),
            Fetch::Status(status) => format!("{path} answered HTTP {status}"),
            Fetch::TooLarge => {
                format!("{path} answered more than {MAX_DISCOVERY_RESPONSE_BYTES} bytes")
            }
            Fetch::NotJson(error) => format!("{path} answered what is not JSON ({error})"),
            Fetch::Broken(error) => format!("{path} broke off ({error})"),
        }
    }
}

impl Discovery {
    /// A discovery that gives each server `timeout` to answer (twice for Ollama, whose windows
    /// take a request per model). It never goes through a proxy: the servers are local.
    pub fn new(timeout: Duration) -> Discovery {
        crate::use_ring_for_tls();
        let http = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(timeout)
            .timeout(timeout)
            .build()
            .expect("the HTTP client's settings are valid");
        Discovery { http, timeout }
    }

    /// Looks at every address at once (at most [`MAX_LOCAL_SERVERS`] of them), returning what
    /// each gave, in the order given.
    pub async fn find(
        &self,
        addresses: &[String],
    ) -> Vec<(String, Result<FoundServer, ProbeError>)> {
        let probes = addresses
            .iter()
            .take(MAX_LOCAL_SERVERS)
            .map(|address| async move { (address.clone(), self.probe(address).await) });
        futures_util::future::join_all(probes).await
    }

    /// What serves models at `address`, with every model's window where the server gives it.
    pub async fn probe(&self, address: &str) -> Result<FoundServer, ProbeError> {
        self.probe_for(address, None).await
    }

    /// The context window the server at `address` gives `model`, asking about that model alone;
    /// `None` when the server does not say or does not list it.
    pub async fn context_window(
        &self,
        address: &str,
        model: &str,
    ) -> Result<Option<u64>, ProbeError> {
        let server = self.probe_for(address, Some(model)).await?;
        Ok(server.models.into_iter().find(|m| m.name == model).and_then(|m| m.context_window))
    }

    async fn probe_for(
        &self,
        address: &str,
        only: Option<&str>,
    ) -> Result<FoundServer, ProbeError> {
        let address = check_address(address)
            .map_err(|reason| ProbeError::BadAddress { address: address.to_owned(), reason })?;
        let root = format!("http://{address}");
        let millis = self.timeout.as_millis();
        let identified = tokio::time::timeout(self.timeout, self.identify(&root))
            .await
            .map_err(|_| ProbeError::TimedOut { address: address.clone(), millis })?;
        let (kind, listed) = match identified {
            Ok(found) => found,
            Err(Unidentified::Nothing) => return Err(ProbeError::Nothing { address }),
            Err(Unidentified::TimedOut) => return Err(ProbeError::TimedOut { address, millis }),
            Err(Unidentified::Unreadable(detail)) => {
                return Err(ProbeError::NotAModelServer { address, detail });
            }
        };
        let (mut models, models_left_out) = keep_models(listed);
        if kind == ServerKind::Ollama {
            models = self.ollama_windows(&root, models, only).await;
        }
        Ok(FoundServer { address, kind, models, models_left_out })
    }

    /// The server's kind and its models as it lists them.
    async fn identify(&self, root: &str) -> Result<(ServerKind, Vec<Listed>), Unidentified> {
        match self.get_json(root, "/props").await {
            Ok(props) if props["default_generation_settings"].is_object() => {
                let n_ctx = window(&props["default_generation_settings"]["n_ctx"]);
                let list = self.v1_models(root).await?;
                let listed = data_entries(&list)
                    .map(|entry| Listed {
                        name: entry["id"].as_str().map(str::to_owned),
                        window: n_ctx.or_else(|| window(&entry["meta"]["n_ctx"])),
                    })
                    .collect();
                return Ok((ServerKind::LlamaCpp, listed));
            }
            Err(Fetch::Nothing) => return Err(Unidentified::Nothing),
            Err(Fetch::TimedOut) => return Err(Unidentified::TimedOut),
            _ => {}
        }
        if let Ok(tags) = self.get_json(root, "/api/tags").await
            && let Some(entries) = tags["models"].as_array()
        {
            let listed = entries
                .iter()
                .map(|entry| Listed {
                    name: entry["name"].as_str().or(entry["model"].as_str()).map(str::to_owned),
                    window: None,
                })
                .collect();
            return Ok((ServerKind::Ollama, listed));
        }
        let list = self.v1_models(root).await?;
        let vllm = data_entries(&list)
            .any(|entry| entry["owned_by"] == "vllm" || entry.get("max_model_len").is_some());
        if vllm {
            let listed = data_entries(&list)
                .map(|entry| Listed {
                    name: entry["id"].as_str().map(str::to_owned),
                    window: window(&entry["max_model_len"]),
                })
                .collect();
            return Ok((ServerKind::Vllm, listed));
        }
        if let Ok(studio) = self.get_json(root, "/api/v0/models").await
            && studio["data"].is_array()
        {
            let about = |id: &str| data_entries(&studio).find(|e| e["id"] == id);
            let listed = data_entries(&list)
                .filter_map(|entry| {
                    let name = entry["id"].as_str();
                    let info = name.and_then(about);
                    // LM Studio lists its embedding models too; they cannot chat.
                    if info.is_some_and(|i| i["type"] == "embeddings") {
                        return None;
                    }
                    let window = info.and_then(|i| {
                        window(&i["loaded_context_length"])
                            .or_else(|| window(&i["max_context_length"]))
                    });
                    Some(Listed { name: name.map(str::to_owned), window })
                })
                .collect();
            return Ok((ServerKind::LmStudio, listed));
        }
        let listed = data_entries(&list)
            .map(|entry| Listed { name: entry["id"].as_str().map(str::to_owned), window: None })
            .collect();
        Ok((ServerKind::OpenaiCompatible, listed))
    }

    /// `/v1/models`, which every kind serves; without it the server is not one Flame can use.
    async fn v1_models(&self, root: &str) -> Result<Value, Unidentified> {
        match self.get_json(root, "/v1/models").await {
            Ok(list) if list["data"].is_array() => Ok(list),
            Ok(_) => Err(Unidentified::Unreadable("/v1/models holds no data list".to_owned())),
            Err(Fetch::Nothing) => Err(Unidentified::Nothing),
            Err(Fetch::TimedOut) => Err(Unidentified::TimedOut),
            Err(other) => Err(Unidentified::Unreadable(other.describe("/v1/models"))),
        }
    }

    /// Ollama's models with their windows from `/api/show` (only `only`'s, when given), asked a
    /// few at a time within the discovery's deadline; a model whose answer did not come in time
    /// keeps no window. Models that say they cannot complete text (embedding models) are left
    /// out: they cannot chat.
    async fn ollama_windows(
        &self,
        root: &str,
        models: Vec<FoundModel>,
        only: Option<&str>,
    ) -> Vec<FoundModel> {
        let names: Vec<String> = models
            .iter()
            .filter(|m| only.is_none_or(|name| name == m.name))
            .map(|m| m.name.clone())
            .collect();
        let asked = names.into_iter().map(|name| async move {
            let shown = self.post_json(root, "/api/show", &json!({ "model": name })).await;
            (name, shown.ok().map(|shown| Shown::of(&shown)))
        });
        let mut shown = HashMap::new();
        let mut answers = futures_util::stream::iter(asked).buffer_unordered(SHOW_CONCURRENCY);
        let gather = async {
            while let Some((name, answer)) = answers.next().await {
                if let Some(answer) = answer {
                    shown.insert(name, answer);
                }
            }
        };
        // Past the deadline the answers still missing are dropped with their requests.
        let _ = tokio::time::timeout(self.timeout, gather).await;
        drop(answers);
        models
            .into_iter()
            .filter_map(|model| match shown.get(&model.name) {
                Some(Shown::NotForChat) => None,
                Some(Shown::Window(context_window)) => {
                    Some(FoundModel { context_window: *context_window, ..model })
                }
                None => Some(model),
            })
            .collect()
    }

    async fn get_json(&self, root: &str, path: &str) -> Result<Value, Fetch> {
        read_json(self.http.get(format!("{root}{path}")).send().await).await
    }

    async fn post_json(&self, root: &str, path: &str, body: &Value) -> Result<Value, Fetch> {
        read_json(self.http.post(format!("{root}{path}")).json(body).send().await).await
    }
}

/// What Ollama's `/api/show` says of a model.
enum Shown {
    Window(Option<u64>),
    /// Its capabilities leave out completion: an embedding model.
    NotForChat,
}

impl Shown {
    fn of(shown: &Value) -> Shown {
        let capabilities = shown["capabilities"].as_array();
        if capabilities.is_some_and(|c| !c.iter().any(|c| c == "completion")) {
            return Shown::NotForChat;
        }
        Shown::Window(ollama_window(shown))
    }
}

/// The window Ollama runs a model with: the `num_ctx` its parameters set, else the
/// `*.context_length` its `model_info` gives (the length it was trained for).
fn ollama_window(shown: &Value) -> Option<u64> {
    let configured = shown["parameters"].as_str().and_then(|parameters| {
        parameters.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("num_ctx")).then(|| words.next()?.parse::<u64>().ok()).flatten()
        })
    });
    let trained = || {
        shown["model_info"]
            .as_object()?
            .iter()
            .filter(|(key, _)| key.ends_with(".context_length"))
            .find_map(|(_, value)| window(value))
    };
    configured.filter(|w| (1..=MAX_CONTEXT_WINDOW).contains(w)).or_else(trained)
}

/// A model as a server listed it, before the limits.
struct Listed {
    name: Option<String>,
    window: Option<u64>,
}

/// Why an address gave no server.
enum Unidentified {
    Nothing,
    TimedOut,
    Unreadable(String),
}

/// The models kept of a listing, each name once, and how many were left out: past
/// [`MAX_MODELS_PER_SERVER`], or with a name that is empty, longer than
/// [`MAX_MODEL_NAME_BYTES`] or holding control characters.
fn keep_models(listed: Vec<Listed>) -> (Vec<FoundModel>, u64) {
    let mut kept = Vec::new();
    let mut seen = HashSet::new();
    let mut left_out = 0u64;
    for entry in listed {
        let Some(name) = entry.name else {
            left_out += 1;
            continue;
        };
        let fit = !name.trim().is_empty()
            && name.len() <= MAX_MODEL_NAME_BYTES
            && !name.chars().any(char::is_control);
        if !fit || kept.len() >= MAX_MODELS_PER_SERVER {
            left_out += 1;
            continue;
        }
        if seen.insert(name.clone()) {
            kept.push(FoundModel { name, context_window: entry.window });
        }
    }
    (kept, left_out)
}

/// The entries of an OpenAI-style list's `data`.
fn data_entries(list: &Value) -> impl Iterator<Item = &Value> {
    list["data"].as_array().into_iter().flatten()
}

/// A context window as a server wrote it: a whole number of tokens from 1 to
/// [`MAX_CONTEXT_WINDOW`]; anything else is unknown.
pub(crate) fn window(value: &Value) -> Option<u64> {
    value.as_u64().filter(|w| (1..=MAX_CONTEXT_WINDOW).contains(w))
}

/// A response's body as JSON, read to [`MAX_DISCOVERY_RESPONSE_BYTES`] at most.
async fn read_json(sent: Result<reqwest::Response, reqwest::Error>) -> Result<Value, Fetch> {
    let response = sent.map_err(|err| {
        if err.is_timeout() {
            Fetch::TimedOut
        } else if err.is_connect() {
            Fetch::Nothing
        } else {
            Fetch::Broken(err.to_string())
        }
    })?;
    if !response.status().is_success() {
        return Err(Fetch::Status(response.status().as_u16()));
    }
    let body =
        read_limited(response, MAX_DISCOVERY_RESPONSE_BYTES).await.map_err(|err| match err {
            Limited::TooLarge => Fetch::TooLarge,
            Limited::Broken(err) if err.is_timeout() => Fetch::TimedOut,
            Limited::Broken(err) => Fetch::Broken(err.to_string()),
        })?;
    serde_json::from_slice(&body).map_err(|e| Fetch::NotJson(e.to_string()))
}

/// Why a body was not read whole.
pub(crate) enum Limited {
    /// It is longer than the limit; what follows was not read.
    TooLarge,
    Broken(reqwest::Error),
}

/// The whole body of `response` if it is at most `limit` bytes; reading stops as soon as it
/// goes past, and the connection is dropped with the rest.
pub(crate) async fn read_limited(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, Limited> {
    if response.content_length().is_some_and(|length| length > limit as u64) {
        return Err(Limited::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(Limited::Broken)? {
        if body.len() + chunk.len() > limit {
            return Err(Limited::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_host_and_port_and_nothing_else() {
        for good in ["127.0.0.1:11434", " localhost:8080 ", "[::1]:8000", "gpu-box.lan:1234"] {
            assert_eq!(check_address(good), Ok(good.trim().to_owned()), "{good}");
        }
        for bad in [
            "",
            "127.0.0.1",
            "http://127.0.0.1:11434",
            "127.0.0.1:11434/v1",
            "127.0.0.1:port",
            "user@127.0.0.1:80",
            "127.0.0.1:99999",
            "::1:8000",
            "a b:80",
        ] {
            assert!(check_address(bad).is_err(), "{bad:?} was taken");
        }
        let long = format!("{}.example:80", "a".repeat(MAX_ADDRESS_BYTES));
        assert!(check_address(&long).unwrap_err().contains("longer than"));
    }

    #[test]
    fn ollama_runs_a_model_with_its_num_ctx_else_its_trained_length() {
        let shown = json!({
            "parameters": "stop \"<|im_end|>\"\nnum_ctx                        8192",
            "model_info": {"general.architecture": "llama", "llama.context_length": 131072},
        });
        assert_eq!(ollama_window(&shown), Some(8192));
        let shown =
            json!({"model_info": {"qwen2.context_length": 32768, "qwen2.embedding_length": 3584}});
        assert_eq!(ollama_window(&shown), Some(32768));
        let hostile = json!({"parameters": "num_ctx -1", "model_info": {"x.context_length": 1e30}});
        assert_eq!(ollama_window(&hostile), None);
        assert!(matches!(Shown::of(&json!({"capabilities": ["embedding"]})), Shown::NotForChat));
        assert!(matches!(
            Shown::of(&json!({"capabilities": ["completion", "tools"]})),
            Shown::Window(None)
        ));
    }

    #[test]
    fn listings_keep_each_fitting_name_once_up_to_the_limit() {
        let listed = |names: Vec<Option<String>>| {
            names.into_iter().map(|name| Listed { name, window: Some(4096) }).collect()
        };
        let (kept, left_out) = keep_models(listed(vec![
            Some("llama3.2:latest".into()),
            Some("llama3.2:latest".into()),
            None,
            Some(String::new()),
            Some("x".repeat(MAX_MODEL_NAME_BYTES + 1)),
            Some("bell\u{7}".into()),
            Some("x".repeat(MAX_MODEL_NAME_BYTES)),
        ]));
        assert_eq!(kept.len(), 2);
        assert_eq!(
            kept[0],
            FoundModel { name: "llama3.2:latest".into(), context_window: Some(4096) }
        );
        assert_eq!(left_out, 4);
        let many = (0..MAX_MODELS_PER_SERVER + 5).map(|n| Some(format!("m{n}"))).collect();
        let (kept, left_out) = keep_models(listed(many));
        assert_eq!((kept.len(), left_out), (MAX_MODELS_PER_SERVER, 5));
    }
}
