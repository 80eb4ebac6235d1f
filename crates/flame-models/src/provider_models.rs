//! The models a provider lists: `GET /v1/models` of the Anthropic API (paged with `after_id`)
//! and of the OpenAI API (or a compatible server, at its base URL's `/models`). Read under the
//! same limits as a local server's list (see [`crate::discover`]): the response's bytes, the
//! models kept and their names' length.
//!
//! `Client::list_models` reads a list once, within `PROVIDER_LIST_TIMEOUT`, at most
//! `MAX_PROVIDER_LIST_PAGES` pages, with the provider's key, and its errors scrubbed of the key.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

use crate::discover::{
    FoundModel, Limited, MAX_DISCOVERY_RESPONSE_BYTES, MAX_MODEL_NAME_BYTES, MAX_MODELS_PER_SERVER,
    read_limited, window,
};
use crate::http::{auth_headers, error_message, read_error_body, scrub};
use crate::{Client, ModelError, Provider, ProviderKind};

/// How long a provider has to send one page of its list. A list is fetched in the background
/// of a picker, and a cached one stands in when the provider cannot be reached.
pub const PROVIDER_LIST_TIMEOUT: Duration = Duration::from_secs(10);

/// The most pages of Anthropic's list read (a page holds up to 1,000 models).
pub const MAX_PROVIDER_LIST_PAGES: usize = 4;

/// What a provider listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderModels {
    pub models: Vec<FoundModel>,
    /// Models not kept (see [`crate::discover::FoundServer::models_left_out`]).
    pub models_left_out: u64,
}

impl Client {
    /// The models `provider` lists, in the order it lists them. Not retried: a caller that has
    /// an older list keeps showing it.
    pub async fn list_models(&self, provider: &Provider) -> Result<ProviderModels, ModelError> {
        let headers = auth_headers(provider)?;
        let base = provider.base_url.trim_end_matches('/');
        let mut listed = ProviderModels { models: Vec::new(), models_left_out: 0 };
        let mut after: Option<String> = None;
        for _ in 0..MAX_PROVIDER_LIST_PAGES {
            let url = match (provider.kind, &after) {
                (ProviderKind::Anthropic, None) => format!("{base}/v1/models?limit=1000"),
                (ProviderKind::Anthropic, Some(last)) => {
                    format!("{base}/v1/models?limit=1000&after_id={}", query_value(last))
                }
                (ProviderKind::Openai, _) => format!("{base}/models"),
            };
            let page = self.list_page(provider, &url, headers.clone()).await?;
            for entry in page["data"].as_array().into_iter().flatten() {
                keep(&mut listed, entry);
            }
            let more = provider.kind == ProviderKind::Anthropic && page["has_more"] == true;
            let last = page["last_id"].as_str().map(str::to_owned);
            match last {
                Some(last) if more && listed.models.len() < MAX_MODELS_PER_SERVER => {
                    after = Some(last)
                }
                _ => break,
            }
        }
        Ok(listed)
    }

    async fn list_page(
        &self,
        provider: &Provider,
        url: &str,
        headers: reqwest::header::HeaderMap,
    ) -> Result<Value, ModelError> {
        let name = provider.kind.name();
        let sent = self.http().get(url).headers(headers).timeout(PROVIDER_LIST_TIMEOUT).send();
        let response = sent.await.map_err(|err| ModelError::Unreachable {
            provider: name,
            base_url: provider.base_url.clone(),
            attempts: 1,
            reason: scrub(provider, &err.to_string()),
        })?;
        let status = response.status();
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            return Err(ModelError::Unauthorized {
                provider: name,
                key_source: provider.key_source.clone(),
                status: status.as_u16(),
            });
        }
        if !status.is_success() {
            let text = read_error_body(response).await;
            return Err(ModelError::Http {
                provider: name,
                status: status.as_u16(),
                message: scrub(provider, &error_message(&text)),
            });
        }
        let unreadable = |detail: String| ModelError::Malformed {
            provider: name,
            detail: scrub(provider, &detail),
            partial: Box::default(),
        };
        let body =
            read_limited(response, MAX_DISCOVERY_RESPONSE_BYTES).await.map_err(
                |err| match err {
                    Limited::TooLarge => unreadable(format!(
                        "its list of models is longer than {MAX_DISCOVERY_RESPONSE_BYTES} bytes"
                    )),
                    Limited::Broken(err) => {
                        unreadable(format!("its list of models broke off ({err})"))
                    }
                },
            )?;
        let page: Value = serde_json::from_slice(&body)
            .map_err(|e| unreadable(format!("its list of models is not JSON ({e})")))?;
        if !page["data"].is_array() {
            return Err(unreadable("its list of models holds no data list".to_owned()));
        }
        Ok(page)
    }
}

/// Adds one listed entry, within the limits. The window is taken where a provider or a
/// compatible server gives it: Anthropic's `max_input_tokens`, OpenRouter's `context_length`,
/// vLLM's `max_model_len`.
fn keep(listed: &mut ProviderModels, entry: &Value) {
    let Some(name) = entry["id"].as_str() else {
        listed.models_left_out += 1;
        return;
    };
    let fit = !name.trim().is_empty()
        && name.len() <= MAX_MODEL_NAME_BYTES
        && !name.chars().any(char::is_control);
    if !fit || listed.models.len() >= MAX_MODELS_PER_SERVER {
        listed.models_left_out += 1;
        return;
    }
    if listed.models.iter().any(|m| m.name == name) {
        return;
    }
    let context_window = ["max_input_tokens", "context_length", "max_model_len", "context_window"]
        .iter()
        .find_map(|field| window(&entry[*field]));
    listed.models.push(FoundModel { name: name.to_owned(), context_window });
}

/// `text` made safe for a URL's query: anything but letters, digits and `-_.~` percent-encoded.
fn query_value(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_is_percent_encoded() {
        assert_eq!(query_value("claude-3-5&x=1 ü"), "claude-3-5%26x%3D1%20%C3%BC");
    }
}
