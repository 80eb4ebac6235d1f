//! The gateway's settings (issue 37): whether the window starts it, the port it listens on, and
//! what it sends upstream. The upstreams it forwards to are the providers' base URLs of the
//! settings ([`Settings::gateway_upstreams`]): the settings file's, never the environment's,
//! since a shell pointed at the gateway (`ANTHROPIC_BASE_URL`) would make it forward to itself.

use flame_models::ProviderKind;
use serde::{Deserialize, Serialize};

use crate::Settings;

/// The port the gateway listens on unless the settings say otherwise.
pub const DEFAULT_GATEWAY_PORT: u16 = 8788;

/// What the gateway sends upstream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum GatewayMode {
    /// Each request byte for byte; budgets checked and usage recorded.
    #[default]
    Observe,
    /// The client's tools and system prompt, then Flame's context for the current frame.
    Context,
}

/// The gateway's part of `settings.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct GatewaySettings {
    /// The window starts the gateway when it opens.
    pub on: bool,
    pub port: u16,
    pub mode: GatewayMode,
}

impl Default for GatewaySettings {
    fn default() -> GatewaySettings {
        GatewaySettings { on: false, port: DEFAULT_GATEWAY_PORT, mode: GatewayMode::Observe }
    }
}

impl Settings {
    /// Where the gateway forwards: each provider's base URL in the settings file, else the
    /// provider's public API (`(anthropic, openai)`).
    pub fn gateway_upstreams(&self) -> (String, String) {
        let base = |kind: ProviderKind, set: &Option<String>| {
            set.as_deref()
                .map(|url| url.trim().trim_end_matches('/').to_owned())
                .unwrap_or_else(|| kind.default_base_url().to_owned())
        };
        (
            base(ProviderKind::Anthropic, &self.anthropic.base_url),
            base(ProviderKind::Openai, &self.openai.base_url),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_upstreams_are_the_settings_base_urls_else_the_public_apis() {
        let mut settings = Settings::default();
        assert_eq!(
            settings.gateway_upstreams(),
            ("https://api.anthropic.com".to_owned(), "https://api.openai.com/v1".to_owned())
        );
        settings.openai.base_url = Some("http://127.0.0.1:11434/v1/".into());
        assert_eq!(settings.gateway_upstreams().1, "http://127.0.0.1:11434/v1");
        let read: Settings = serde_json::from_str(r#"{"gateway": {"mode": "context"}}"#).unwrap();
        assert_eq!(
            read.gateway,
            GatewaySettings { on: false, port: DEFAULT_GATEWAY_PORT, mode: GatewayMode::Context }
        );
    }
}
