//! Model settings: providers, base URLs, keys, models with their context windows, the default
//! model, and the agent's autonomy. They live in `settings.json` in the platform's config
//! folder (`~/.config/flame/` on Linux). Keys come from the providers' usual environment
//! variables first, then the settings; base URLs from the settings, then the environment
//! variables the providers' own SDKs read, then the providers' defaults.

use std::path::{Path, PathBuf};

use flame_api::{ApiError, Budget, ErrorCode};
use flame_models::{ApiKey, Provider, ProviderKind};
use serde::{Deserialize, Serialize};

/// What the UI is shown instead of a saved key.
pub const REDACTED: &str = "(set)";

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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ProviderSettings {
    pub base_url: Option<String>,
    /// Stored, but never sent back to the UI (see [`Settings::redacted`]).
    pub api_key: Option<String>,
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

/// Everything in `settings.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct Settings {
    pub default_model: Option<String>,
    pub autonomy: Autonomy,
    /// How many rounds of tool calls one message may lead to.
    pub max_tool_rounds: u32,
    pub anthropic: ProviderSettings,
    pub openai: ProviderSettings,
    /// Models besides the built-in ones, or overriding them.
    pub models: Vec<ModelSettings>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            default_model: None,
            autonomy: Autonomy::Auto,
            max_tool_rounds: 8,
            anthropic: ProviderSettings::default(),
            openai: ProviderSettings::default(),
            models: Vec::new(),
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
}

impl ResolvedModel {
    /// The context budget before tool schemas: the window less the reply.
    pub fn budget(&self, tool_schemas: u64) -> Budget {
        Budget {
            context_window: self.model.context_window,
            reply_reserve: u64::from(self.model.max_output_tokens),
            tool_schemas,
        }
    }
}

impl Settings {
    /// Where the settings live: `<config dir>/flame/settings.json`.
    pub fn default_path() -> Option<PathBuf> {
        dirs::config_dir().map(|d| d.join("flame").join("settings.json"))
    }

    /// Reads the settings at `path`; a missing file is the defaults.
    pub fn load(path: &Path) -> Result<Settings, ApiError> {
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

    /// Writes the settings to `path` (readable only by the owner, since keys may be in it),
    /// refusing settings that could not work (see [`Settings::check`]) and leaving the file as
    /// it was.
    pub fn save(&self, path: &Path) -> Result<(), ApiError> {
        self.check()?;
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder)
                .map_err(|e| ApiError::internal(&format!("create {}", folder.display()), e))?;
        }
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| ApiError::internal("write the settings", e))?;
        std::fs::write(path, text)
            .map_err(|e| ApiError::internal(&format!("write {}", path.display()), e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
        }
        Ok(())
    }

    /// Refuses what no model call could work with: a listed model without a name or listed
    /// twice, a context window no larger than the reply it must leave room for, a reply of no
    /// tokens, or no tool rounds at all.
    pub fn check(&self) -> Result<(), ApiError> {
        let invalid = |message: String| Err(ApiError::new(ErrorCode::Invalid, message));
        if self.max_tool_rounds == 0 {
            return invalid("the most tool rounds per message must be at least 1".to_owned());
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
        Ok(())
    }

    /// `self` updated from settings edited in the UI, which never saw the keys: a key still
    /// shown as set (or absent) keeps the saved one, an empty key removes it, any other replaces
    /// it.
    pub fn with_changes(&self, edited: Settings) -> Settings {
        let merge = |saved: &ProviderSettings, edited: ProviderSettings| ProviderSettings {
            base_url: edited.base_url.filter(|u| !u.trim().is_empty()),
            api_key: match edited.api_key.as_deref() {
                None | Some(REDACTED) => saved.api_key.clone(),
                Some("") => None,
                Some(key) => Some(key.to_owned()),
            },
        };
        Settings {
            anthropic: merge(&self.anthropic, edited.anthropic.clone()),
            openai: merge(&self.openai, edited.openai.clone()),
            ..edited
        }
    }

    /// The settings as the UI may see them: whether a key is set, never the key.
    pub fn redacted(&self) -> Settings {
        let hide = |p: &ProviderSettings| ProviderSettings {
            base_url: p.base_url.clone(),
            api_key: p.api_key.as_ref().map(|_| REDACTED.to_owned()),
        };
        Settings { anthropic: hide(&self.anthropic), openai: hide(&self.openai), ..self.clone() }
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
        let saved = match model.provider {
            ProviderKind::Anthropic => &self.anthropic,
            ProviderKind::Openai => &self.openai,
        };
        let kind = model.provider;
        let (key, key_source) =
            match (env(kind.key_variable()).filter(|k| !k.is_empty()), &saved.api_key) {
                (Some(key), _) => (Some(ApiKey::new(key)), kind.key_variable().to_owned()),
                (None, Some(key)) => {
                    (Some(ApiKey::new(key.clone())), "Flame's settings file".to_owned())
                }
                (None, None) => (None, "nowhere".to_owned()),
            };
        let base_url = saved
            .base_url
            .clone()
            .or_else(|| env(kind.base_url_variable()).filter(|u| !u.is_empty()))
            .unwrap_or_else(|| kind.default_base_url().to_owned());
        Ok(ResolvedModel {
            model,
            provider: Provider {
                kind,
                base_url: base_url.trim_end_matches('/').to_owned(),
                key,
                key_source,
            },
        })
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
    fn the_redacted_settings_never_hold_a_key() {
        let mut settings = Settings::default();
        settings.openai.api_key = Some("sk-secret".into());
        let text = serde_json::to_string(&settings.redacted()).unwrap();
        assert!(!text.contains("sk-secret") && text.contains("(set)"), "{text}");
    }

    #[test]
    fn edits_from_the_ui_keep_keys_they_never_saw() {
        let mut saved = Settings::default();
        saved.anthropic.api_key = Some("sk-ant-secret".into());
        saved.openai.api_key = Some("sk-openai-secret".into());
        let mut edited = saved.redacted();
        edited.default_model = Some("gpt-4o".into());
        edited.openai.api_key = Some(String::new());
        let merged = saved.with_changes(edited);
        assert_eq!(merged.anthropic.api_key.as_deref(), Some("sk-ant-secret"));
        assert_eq!(merged.openai.api_key, None);
        assert_eq!(merged.default_model.as_deref(), Some("gpt-4o"));
    }

    #[test]
    fn settings_round_trip_through_their_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("flame").join("settings.json");
        assert_eq!(Settings::load(&path).unwrap(), Settings::default());
        let settings = Settings {
            default_model: Some("gpt-4o".into()),
            autonomy: Autonomy::Ask,
            ..Settings::default()
        };
        settings.save(&path).unwrap();
        assert_eq!(Settings::load(&path).unwrap(), settings);
        std::fs::write(&path, "{ not json").unwrap();
        assert_eq!(Settings::load(&path).unwrap_err().code, ErrorCode::Invalid);
    }

    #[test]
    fn settings_that_cannot_work_are_refused_and_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let model = |name: &str, window: u64, reply: u32| ModelSettings {
            name: name.to_owned(),
            provider: ProviderKind::Openai,
            context_window: window,
            max_output_tokens: reply,
        };
        let good =
            Settings { models: vec![model("llama3.1:8b", 131_072, 4096)], ..Settings::default() };
        good.save(&path).unwrap();
        let cases = [
            (vec![model("", 8000, 100)], "has no name"),
            (vec![model(" llama", 8000, 100)], "white space"),
            (vec![model("a", 8000, 100), model("a", 9000, 100)], "listed twice"),
            (vec![model("a", 8000, 0)], "1 token"),
            (vec![model("a", 4096, 4096)], "must be larger"),
        ];
        for (models, why) in cases {
            let err = Settings { models, ..Settings::default() }.save(&path).unwrap_err();
            assert_eq!(err.code, ErrorCode::Invalid);
            assert!(err.message.contains(why), "{}", err.message);
        }
        let err = Settings { max_tool_rounds: 0, ..Settings::default() }.save(&path).unwrap_err();
        assert!(err.message.contains("at least 1"), "{}", err.message);
        assert_eq!(Settings::load(&path).unwrap(), good, "the file is as it was");
    }
}
