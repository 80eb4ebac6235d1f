//! A client's request as the gateway reads it: its top-level fields in their order, each as the
//! client wrote it, its conversation's items, and who sent it.
//!
//! Nothing is parsed that the gateway does not need: the fields stay raw JSON (`RawValue`), so a
//! field Flame does not know is passed on unchanged, and an item of the conversation is parsed
//! only the first time its thread sees it (`flame_import::wire`). Each item is identified by a
//! hash of its bytes ([`item_hash`]), fast enough to run over a 150k-token conversation at every
//! request.
//!
//! The *fixed part* of a request is what the client sends unchanged at the start of every
//! request of a thread: Anthropic's `tools` and `system`; a Responses request's `tools`,
//! `instructions` and the `developer`/`system` items that open its `input`; a Chat request's
//! `tools` and the `system` messages that open its `messages`. The conversation is the rest.

use std::borrow::Cow;
use std::hash::Hasher;

use flame_import::wire::WireFormat;
use http::HeaderMap;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// A request body's top-level fields, in the order the client wrote them. The conversation's
/// field (`messages`, `input`) is read into its items as the body is read, in the same pass, and
/// holds `null` here.
#[derive(Debug)]
pub(crate) struct Fields<'a>(pub Vec<(Cow<'a, str>, &'a RawValue)>);

/// A body's fields with its conversation's field read: what one pass over the body gives.
struct Read<'a> {
    fields: Fields<'a>,
    conversation: Conversation<'a>,
}

/// What the conversation's field holds.
#[derive(Debug, Default)]
enum Conversation<'a> {
    #[default]
    Absent,
    Items(Vec<&'a RawValue>),
    /// A Responses `input` given as one text.
    Text(String),
    /// Anything else, by what it is.
    NotAList(&'static str),
}

/// Reads a body whose conversation is in the field `name`.
struct BodySeed(&'static str);

impl<'de> DeserializeSeed<'de> for BodySeed {
    type Value = Read<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Read<'de>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for BodySeed {
    type Value = Read<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Read<'de>, M::Error> {
        let mut read = Read { fields: Fields(Vec::new()), conversation: Conversation::Absent };
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == self.0 && matches!(read.conversation, Conversation::Absent) {
                read.conversation = map.next_value_seed(ConversationSeed)?;
                read.fields.0.push((key, RawValue::NULL));
            } else {
                let value: &'de RawValue = map.next_value()?;
                read.fields.0.push((key, value));
            }
        }
        Ok(read)
    }
}

/// Reads the conversation's field: a list is split into its items, each kept as written.
struct ConversationSeed;

impl<'de> DeserializeSeed<'de> for ConversationSeed {
    type Value = Conversation<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ConversationSeed {
    type Value = Conversation<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list or a text")
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element::<&'de RawValue>()? {
            items.push(item);
        }
        Ok(Conversation::Items(items))
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Conversation::Text(text.to_owned()))
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Conversation::NotAList("an object"))
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Conversation::NotAList("a boolean"))
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Conversation::NotAList("a number"))
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Conversation::NotAList("a number"))
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Conversation::NotAList("a number"))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(Conversation::NotAList("null"))
    }
}

/// One item of a request's conversation (or of its fixed part).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Item<'a> {
    pub raw: &'a RawValue,
    pub hash: u64,
    /// Whether its bytes hold an Anthropic cache mark (`"cache_control"`).
    pub marked: bool,
}

/// A parsed request.
#[derive(Debug)]
pub(crate) struct Request<'a> {
    pub wire: WireFormat,
    pub fields: Fields<'a>,
    /// Every item of that field, in order.
    pub items: Vec<Item<'a>>,
    /// That field's text, when it is one (a Responses `input` given as one text).
    text: Option<String>,
    /// How many of `items` open the conversation as part of its fixed part.
    pub fixed_items: usize,
    /// A hash of the fixed part: its fields and its items.
    pub fixed_hash: u64,
    /// The fixed part's text, for counting its tokens once per hash.
    pub fixed_text: Cow<'a, str>,
}

/// Why a request could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RequestError {
    #[error("the request body is not a JSON object: {0}")]
    NotJson(String),
    #[error("the request's {field} is not a list: {detail}")]
    NotAList { field: &'static str, detail: String },
}

/// The hash that identifies an item's bytes between requests.
pub(crate) fn item_hash(bytes: &str) -> u64 {
    let mut hasher = rustc_hash::FxHasher::default();
    hasher.write(bytes.as_bytes());
    hasher.write_usize(bytes.len());
    hasher.finish()
}

impl<'a> Request<'a> {
    /// Reads a body of `wire`, in one pass over its bytes.
    pub fn parse(wire: WireFormat, body: &'a [u8]) -> Result<Request<'a>, RequestError> {
        let name = match wire {
            WireFormat::Anthropic | WireFormat::Chat => "messages",
            WireFormat::Responses => "input",
        };
        let mut deserializer = serde_json::Deserializer::from_slice(body);
        let read = BodySeed(name)
            .deserialize(&mut deserializer)
            .and_then(|read| deserializer.end().map(|()| read))
            .map_err(|e| RequestError::NotJson(e.to_string()))?;
        let Read { fields, conversation } = read;
        let mark = memchr::memmem::Finder::new(b"\"cache_control\"");
        let (items, input_text): (Vec<Item<'a>>, _) = match conversation {
            Conversation::Absent => (Vec::new(), None),
            Conversation::Items(items) => {
                let items = items
                    .into_iter()
                    .map(|raw| Item {
                        raw,
                        hash: item_hash(raw.get()),
                        marked: mark.find(raw.get().as_bytes()).is_some(),
                    })
                    .collect();
                (items, None)
            }
            // A Responses input may be one text: it is one user message, not a list.
            Conversation::Text(text) if wire == WireFormat::Responses => (Vec::new(), Some(text)),
            Conversation::Text(_) => {
                return Err(RequestError::NotAList { field: name, detail: "a text".into() });
            }
            Conversation::NotAList(what) => {
                return Err(RequestError::NotAList { field: name, detail: what.into() });
            }
        };
        let fixed_items = match wire {
            WireFormat::Anthropic => 0,
            WireFormat::Responses => leading(&items, &["developer", "system"]),
            WireFormat::Chat => leading(&items, &["system", "developer"]),
        };
        let fixed_fields: &[&str] = match wire {
            WireFormat::Anthropic => &["tools", "system"],
            WireFormat::Responses => &["tools", "instructions"],
            WireFormat::Chat => &["tools"],
        };
        let mut hasher = rustc_hash::FxHasher::default();
        let mut text = String::new();
        for (key, value) in &fields.0 {
            if fixed_fields.contains(&key.as_ref()) {
                hasher.write(key.as_bytes());
                hasher.write(value.get().as_bytes());
                text.push_str(value.get());
            }
        }
        for item in &items[..fixed_items] {
            hasher.write_u64(item.hash);
            text.push_str(item.raw.get());
        }
        Ok(Request {
            wire,
            fields,
            items,
            text: input_text,
            fixed_items,
            fixed_hash: hasher.finish(),
            fixed_text: Cow::Owned(text),
        })
    }

    /// A top-level field as the client wrote it.
    pub fn field(&self, name: &str) -> Option<&'a RawValue> {
        self.fields.0.iter().find(|(k, _)| k == name).map(|(_, v)| *v)
    }

    /// The model asked for.
    pub fn model(&self) -> Option<String> {
        self.field("model").and_then(|m| serde_json::from_str::<String>(m.get()).ok())
    }

    /// Whether the reply is asked for as a stream of events.
    pub fn streamed(&self) -> bool {
        self.field("stream").is_some_and(|s| s.get().trim() == "true")
    }

    /// Whether the request offers tools: an agent's turn, not a side call (a title, a summary).
    pub fn offers_tools(&self) -> bool {
        self.field("tools").is_some_and(|t| {
            let t = t.get().trim();
            t.starts_with('[') && t != "[]" && t.len() > 2
        })
    }

    /// The conversation's items (after the fixed part), with a Responses `input` given as one
    /// text read as the user's message.
    pub fn conversation(&self) -> &[Item<'a>] {
        &self.items[self.fixed_items..]
    }

    /// A Responses `input` given as one text, as the user message it stands for.
    pub fn text_input(&self) -> Option<serde_json::Value> {
        let text = self.text.as_ref()?;
        Some(serde_json::json!({"type": "message", "role": "user", "content": text}))
    }

    /// The text of the first user item of the conversation, with the fixed part's hash: what
    /// tells a thread apart when the client names none.
    pub fn fingerprint(&self) -> u64 {
        let mut hasher = rustc_hash::FxHasher::default();
        hasher.write_u64(self.fixed_hash);
        if let Some(first) = self.conversation().first() {
            hasher.write_u64(first.hash);
        } else if let Some(text) = &self.text {
            hasher.write(text.as_bytes());
        }
        hasher.finish()
    }

    /// The folder the client works in, when its fixed part or first message states it (Claude
    /// Code's `Working directory: …`, Codex's `<cwd>…</cwd>`).
    pub fn folder(&self) -> Option<String> {
        let mut texts: Vec<&str> = vec![self.fixed_text.as_ref()];
        texts.extend(self.conversation().iter().take(2).map(|i| i.raw.get()));
        texts.iter().find_map(|text| folder_in(text))
    }
}

/// How many items open `items` in one of `roles`.
fn leading(items: &[Item<'_>], roles: &[&str]) -> usize {
    items
        .iter()
        .take_while(|item| {
            #[derive(serde::Deserialize)]
            struct Role<'r> {
                #[serde(borrow)]
                role: Option<Cow<'r, str>>,
            }
            serde_json::from_str::<Role<'_>>(item.raw.get())
                .ok()
                .and_then(|r| r.role)
                .is_some_and(|role| roles.contains(&role.as_ref()))
        })
        .count()
}

/// A folder a text states as the one the agent works in.
fn folder_in(text: &str) -> Option<String> {
    for (open, close) in [("Working directory: ", "\\n"), ("<cwd>", "</cwd>")] {
        if let Some(at) = text.find(open) {
            let rest = &text[at + open.len()..];
            let end = rest.find(close).unwrap_or(rest.len()).min(4096);
            let folder = rest[..end].trim();
            if folder.starts_with('/') && !folder.contains('"') {
                return Some(folder.to_owned());
            }
        }
    }
    None
}

/// Who sent a request, as far as its headers and body say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Caller {
    /// `claude-code`, `codex`, `opencode` or `other`.
    pub agent: &'static str,
    /// The client's id of its session.
    pub session: Option<String>,
    /// The client's id of the thread (Codex's thread, OpenCode's session), when it gives one.
    pub thread: Option<String>,
    /// The thread that started this one, when the client says.
    pub parent: Option<String>,
}

/// The longest id read from a header or a body: clients' ids are UUIDs and the like.
pub(crate) const MAX_ID_BYTES: usize = 128;

fn id(value: &str) -> Option<String> {
    let value = value.trim();
    (!value.is_empty()
        && value.len() <= MAX_ID_BYTES
        && value.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b)))
    .then(|| value.to_owned())
}

impl Caller {
    pub fn identify(headers: &HeaderMap, request: &Request<'_>) -> Caller {
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).and_then(id);
        let agent_header = headers
            .get(http::header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        let originator = headers.get("originator").and_then(|v| v.to_str().ok()).unwrap_or("");
        if let Some(session) =
            header("x-claude-code-session-id").or_else(|| claude_code_user(request))
        {
            return Caller {
                agent: "claude-code",
                session: Some(session),
                thread: None,
                parent: None,
            };
        }
        if originator.starts_with("codex") || agent_header.starts_with("codex") {
            let session = header("session-id").or_else(|| header("session_id"));
            return Caller {
                agent: "codex",
                session: session.or_else(|| cache_key(request)),
                thread: header("thread-id"),
                parent: header("x-codex-parent-thread-id"),
            };
        }
        if agent_header.starts_with("opencode") || headers.contains_key("x-session-id") {
            let thread = header("x-session-id");
            let parent = header("x-parent-session-id");
            return Caller {
                agent: if agent_header.starts_with("opencode") { "opencode" } else { "other" },
                session: parent.clone().or_else(|| thread.clone()),
                thread,
                parent,
            };
        }
        let agent = if agent_header.starts_with("claude-cli") { "claude-code" } else { "other" };
        Caller { agent, session: cache_key(request), thread: None, parent: None }
    }
}

/// Claude Code's session id in `metadata.user_id`: a JSON text with `session_id`, or the older
/// `user_…_account_…_session_<id>`.
fn claude_code_user(request: &Request<'_>) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Metadata {
        user_id: Option<String>,
    }
    let metadata: Metadata = serde_json::from_str(request.field("metadata")?.get()).ok()?;
    let user = metadata.user_id?;
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(&user)
        && let Some(session) = value["session_id"].as_str()
    {
        return id(session);
    }
    user.rsplit_once("_session_").and_then(|(_, session)| id(session))
}

/// An OpenAI request's `prompt_cache_key`, which clients set to their session.
fn cache_key(request: &Request<'_>) -> Option<String> {
    let raw = request.field("prompt_cache_key")?;
    id(&serde_json::from_str::<String>(raw.get()).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_keep_their_order_and_bytes() {
        let body = br#"{"model":"m","z_unknown":{"a" : 1},"messages":[{"role":"user","content":"hi"}],"stream":true}"#;
        let request = Request::parse(WireFormat::Anthropic, body).unwrap();
        let keys: Vec<&str> = request.fields.0.iter().map(|(k, _)| k.as_ref()).collect();
        assert_eq!(keys, ["model", "z_unknown", "messages", "stream"]);
        assert_eq!(request.field("z_unknown").unwrap().get(), r#"{"a" : 1}"#);
        assert_eq!(request.items.len(), 1);
        assert!(request.streamed());
        assert_eq!(request.model().as_deref(), Some("m"));
    }

    #[test]
    fn a_body_that_is_not_a_json_object_is_refused_with_why() {
        assert!(matches!(
            Request::parse(WireFormat::Chat, b"<html>nope</html>"),
            Err(RequestError::NotJson(_))
        ));
        assert!(matches!(
            Request::parse(WireFormat::Chat, br#"{"messages": 3}"#),
            Err(RequestError::NotAList { field: "messages", .. })
        ));
    }

    /// The conversation's field is read in the same pass as the rest: a Responses `input` given
    /// as one text is its user message, escapes read, and each item knows whether it is marked.
    #[test]
    fn the_conversation_is_read_with_the_body() {
        let body = br#"{"input":"say \"hi\"\n","model":"m"}"#;
        let request = Request::parse(WireFormat::Responses, body).unwrap();
        assert!(request.items.is_empty());
        let message = request.text_input().unwrap();
        assert_eq!(message["content"], "say \"hi\"\n");
        assert_eq!(request.model().as_deref(), Some("m"));
        let body = br#"{"messages":[{"role":"user","content":"a"},{"role":"user","content":[{"type":"text","text":"b","cache_control":{"type":"ephemeral"}}]}]}"#;
        let request = Request::parse(WireFormat::Anthropic, body).unwrap();
        let marked: Vec<bool> = request.items.iter().map(|i| i.marked).collect();
        assert_eq!(marked, [false, true]);
        for (body, what) in [
            (&br#"{"messages":null}"#[..], "null"),
            (br#"{"messages":{"role":"user"}}"#, "an object"),
            (br#"{"messages":"text"}"#, "a text"),
        ] {
            match Request::parse(WireFormat::Anthropic, body) {
                Err(RequestError::NotAList { field: "messages", detail }) => {
                    assert_eq!(detail, what)
                }
                other => panic!("{other:?}"),
            }
        }
        // A body cut short is not JSON, though its conversation was read whole.
        let cut = br#"{"messages":[{"role":"user","content":"a"}],"model":"#;
        assert!(matches!(Request::parse(WireFormat::Chat, cut), Err(RequestError::NotJson(_))));
    }

    #[test]
    fn leading_system_messages_are_the_fixed_part() {
        let body = br#"{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],"tools":[{"type":"function"}]}"#;
        let request = Request::parse(WireFormat::Chat, body).unwrap();
        assert_eq!(request.fixed_items, 1);
        assert_eq!(request.conversation().len(), 1);
        assert!(request.offers_tools());
        let other = br#"{"messages":[{"role":"system","content":"t"},{"role":"user","content":"u"}],"tools":[{"type":"function"}]}"#;
        let other = Request::parse(WireFormat::Chat, other).unwrap();
        assert_ne!(request.fixed_hash, other.fixed_hash);
        assert_ne!(request.fingerprint(), other.fingerprint());
    }

    #[test]
    fn callers_are_told_apart_by_their_headers() {
        let body = br#"{"messages":[]}"#;
        let request = Request::parse(WireFormat::Anthropic, body).unwrap();
        let mut headers = HeaderMap::new();
        headers.insert("x-claude-code-session-id", "2f0c-aa".parse().unwrap());
        let caller = Caller::identify(&headers, &request);
        assert_eq!((caller.agent, caller.session.as_deref()), ("claude-code", Some("2f0c-aa")));

        let mut headers = HeaderMap::new();
        headers.insert("originator", "codex_exec".parse().unwrap());
        headers.insert("session-id", "s1".parse().unwrap());
        headers.insert("thread-id", "t2".parse().unwrap());
        headers.insert("x-codex-parent-thread-id", "s1".parse().unwrap());
        let caller = Caller::identify(&headers, &request);
        assert_eq!(caller.agent, "codex");
        assert_eq!(
            (caller.session.as_deref(), caller.thread.as_deref(), caller.parent.as_deref()),
            (Some("s1"), Some("t2"), Some("s1"))
        );

        let mut headers = HeaderMap::new();
        headers.insert(http::header::USER_AGENT, "opencode/1.18.33".parse().unwrap());
        headers.insert("x-session-id", "ses_b".parse().unwrap());
        headers.insert("x-parent-session-id", "ses_a".parse().unwrap());
        let caller = Caller::identify(&headers, &request);
        assert_eq!(
            (caller.agent, caller.session.as_deref(), caller.thread.as_deref()),
            ("opencode", Some("ses_a"), Some("ses_b"))
        );

        // An id that is not a plain name is not taken.
        let mut headers = HeaderMap::new();
        headers.insert("x-claude-code-session-id", "../../etc".parse().unwrap());
        assert_eq!(Caller::identify(&headers, &request).session, None);
    }

    #[test]
    fn claude_code_names_its_session_in_the_user_id() {
        let body = br#"{"metadata":{"user_id":"{\"device_id\":\"d\",\"session_id\":\"abc-123\"}"},"messages":[]}"#;
        let request = Request::parse(WireFormat::Anthropic, body).unwrap();
        assert_eq!(claude_code_user(&request).as_deref(), Some("abc-123"));
        let body = br#"{"metadata":{"user_id":"user_x_account_y_session_77-aa"},"messages":[]}"#;
        let request = Request::parse(WireFormat::Anthropic, body).unwrap();
        assert_eq!(claude_code_user(&request).as_deref(), Some("77-aa"));
    }

    #[test]
    fn a_folder_is_read_from_the_fixed_part() {
        let body =
            br#"{"system":"Env\nWorking directory: /home/u/proj\nPlatform: linux","messages":[]}"#;
        let request = Request::parse(WireFormat::Anthropic, body).unwrap();
        assert_eq!(request.folder().as_deref(), Some("/home/u/proj"));
    }
}
