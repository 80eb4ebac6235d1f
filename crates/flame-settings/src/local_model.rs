//! Models of servers on this computer, named `local:<host:port>/<model>`: that name is all a chat
//! needs, with no settings edit. Both the settings (which resolve such a name to the server's
//! address, `Settings::resolve`) and the model list (which names what the servers serve) read and
//! write it here, and the window a local model gets until its server says is decided here too.

use flame_models::discover::check_address;

/// What a local model's name starts with.
pub const LOCAL_PREFIX: &str = "local:";

/// The window a local server's model is given when the settings do not list it and the server
/// does not say: small enough for what local servers run by default (Ollama runs a model with
/// 4,096 tokens unless told otherwise), so a context is not cut by the server without a word.
pub const LOCAL_DEFAULT_WINDOW: u64 = 8_192;

/// The reply kept for a local model with a window of `window` tokens: a quarter of it, at most
/// 4,096 tokens (what an unknown model gets).
pub fn local_reply_tokens(window: u64) -> u32 {
    u32::try_from((window / 4).clamp(1, 4_096)).unwrap_or(4_096)
}

/// A model of a server on this computer, named `local:<host:port>/<model>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalModel {
    /// `host:port`.
    pub address: String,
    /// The model's name on the server (it may hold `/` and `:`, as Ollama's do).
    pub model: String,
}

impl LocalModel {
    /// `reference` read as a local model's name, if it is one.
    pub fn parse(reference: &str) -> Option<LocalModel> {
        let (address, model) = reference.strip_prefix(LOCAL_PREFIX)?.split_once('/')?;
        let address = check_address(address).ok()?;
        (!model.trim().is_empty()).then(|| LocalModel { address, model: model.to_owned() })
    }

    /// The name a chat is asked with.
    pub fn reference(address: &str, model: &str) -> String {
        format!("{LOCAL_PREFIX}{address}/{model}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_names_hold_an_address_and_a_model() {
        assert_eq!(
            LocalModel::parse("local:127.0.0.1:11434/hf.co/bartowski/Llama-3.2-1B-GGUF:Q4_K_M"),
            Some(LocalModel {
                address: "127.0.0.1:11434".into(),
                model: "hf.co/bartowski/Llama-3.2-1B-GGUF:Q4_K_M".into()
            })
        );
        let reference = LocalModel::reference("[::1]:8080", "smollm2");
        assert_eq!(reference, "local:[::1]:8080/smollm2");
        assert_eq!(LocalModel::parse(&reference).unwrap().model, "smollm2");
        for not_local in [
            "gpt-4o",
            "local:",
            "local:127.0.0.1:8080",
            "local:127.0.0.1:8080/ ",
            "local:127.0.0.1/x",
            "local:http://a:1/x",
        ] {
            assert_eq!(LocalModel::parse(not_local), None, "{not_local}");
        }
    }
}
