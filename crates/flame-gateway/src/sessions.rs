//! The sessions the gateway follows, in memory: which session and thread each request belongs
//! to, each thread read as it grows (`flame_import::wire`), and the frames the store gave the
//! session's draft at its last store.
//!
//! A request belongs to a thread, found in this order:
//!
//! 1. the thread the client names (Codex's `thread-id`, OpenCode's `x-session-id`);
//! 2. a thread of the session the client names (or of none) with the same fixed part and first
//!    item (its *fingerprint*): two sessions may open alike;
//! 3. in the session the client names (Claude Code's session id, Codex's `session-id`, the
//!    parent OpenCode names), a new thread: the main thread when the session has none yet; the
//!    main thread again, read as restarted, when it has the main thread's fixed part or first
//!    item (the client compacted or rewound its conversation); otherwise a subagent's thread,
//!    under the thread the client names as its parent or else under the main thread;
//! 4. otherwise a new session whose key is the fingerprint: a tree per conversation.
//!
//! A request that offers no tools is a *side call* (a title, a summary the agent asks for
//! besides its work): it makes no thread and is recorded on the frame its session's main thread
//! is in.

use std::collections::HashMap;

use flame_api::GatewaySession;
use flame_import::wire::{
    Growth, MAX_SESSION_THREADS, SessionThread, WireDraft, WireError, WireItem, WireSession,
    WireThread,
};
use flame_model::{FrameId, Timestamp, Usage};
use serde_json::Value;

use flame_context::CachePolicy;
use flame_import::replayer::Replayer;
use flame_import::wire::WireFormat;

use crate::client_cost::ClientCache;
use crate::request::{Caller, Request};

/// The most sessions the gateway keeps in memory; past it the least recently used is forgotten
/// (its tree stays in the store, and a later request reads its conversation again).
pub const MAX_SESSIONS: usize = 256;

/// The cache a session's upstream keeps, as context mode weighs a rewrite: Anthropic's marks, or
/// OpenAI's automatic prefixes, at list rates.
fn policy(wire: WireFormat) -> CachePolicy {
    match wire {
        WireFormat::Anthropic => CachePolicy::anthropic(None),
        WireFormat::Responses | WireFormat::Chat => CachePolicy::automatic(None),
    }
}

/// The agents' names as a session's root frame says who it was.
fn agent_name(agent: &str) -> &'static str {
    match agent {
        "claude-code" => "Claude Code",
        "codex" => "Codex",
        "opencode" => "OpenCode",
        _ => "An API client",
    }
}

/// A thread's identity beside its reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ThreadMarks {
    fixed: u64,
    first: Option<u64>,
}

/// One session.
#[derive(Debug)]
pub(crate) struct Session {
    /// The store's id of the session, `<agent>:<key>`.
    pub id: String,
    pub agent: &'static str,
    pub wire: WireSession,
    marks: Vec<ThreadMarks>,
    /// What the store says of the session, once asked.
    pub stored: Option<GatewaySession>,
    /// The frame each draft frame became at the last store, by draft key.
    pub frames: HashMap<String, FrameId>,
    pub client_cache: ClientCache,
    /// What context mode keeps between the session's calls (`flame_import::replayer`).
    pub replayer: Replayer,
    /// The items context mode changed at the session's last call, as written.
    pub rewritten: crate::rewritten::Rewritten,
    pub last_used: Timestamp,
}

/// Where a request goes.
#[derive(Debug, Clone)]
pub(crate) struct Placed {
    pub wire: WireFormat,
    pub session: usize,
    /// `None` for a side call.
    pub thread: Option<usize>,
    pub id: String,
    pub growth: Growth,
    /// The stored frame whose budgets bound the call: the call's frame, or the nearest of its
    /// ancestors that is stored already.
    pub budget_frame: Option<FrameId>,
    /// The session's draft with the request read: what the call's context is assembled from.
    pub draft: std::sync::Arc<WireDraft>,
}

/// Every session the gateway follows.
#[derive(Debug, Default)]
pub(crate) struct Sessions {
    /// How many of a frame's newest tool results context mode sends whole.
    pub keep: usize,
    sessions: Vec<Session>,
    by_key: HashMap<String, usize>,
    threads: HashMap<String, (usize, usize)>,
}

impl Sessions {
    /// No sessions yet; context mode keeps a frame's newest `keep` tool results whole.
    pub fn new(keep: usize) -> Sessions {
        Sessions { keep, ..Sessions::default() }
    }

    pub fn get(&self, session: usize) -> &Session {
        &self.sessions[session]
    }

    pub fn get_mut(&mut self, session: usize) -> &mut Session {
        &mut self.sessions[session]
    }

    /// Finds or makes the session and thread `request` belongs to and reads its conversation
    /// (see the module's comment).
    pub fn place(
        &mut self,
        request: &Request<'_>,
        caller: &Caller,
        at: Timestamp,
    ) -> Result<Placed, WireError> {
        let fingerprint = format!("fp:{:016x}", request.fingerprint());
        let named = caller.thread.as_ref().map(|t| format!("{}:{t}", caller.agent));
        let marks = ThreadMarks {
            fixed: request.fixed_hash,
            first: request.conversation().first().map(|i| i.hash),
        };
        let session_key = format!(
            "{}:{}",
            caller.agent,
            caller.session.as_deref().unwrap_or(fingerprint.as_str())
        );
        // A fingerprint names a thread within its session: two sessions may well open with the
        // same system prompt and the same first request.
        let fingerprint = format!("{session_key}/{fingerprint}");
        let known = named
            .as_ref()
            .and_then(|k| self.threads.get(k))
            .or_else(|| self.threads.get(&fingerprint))
            .copied();
        let side = !request.offers_tools();
        let (session, thread) = match known {
            Some((s, t)) => (s, Some(t)),
            None => {
                let parent_session = caller
                    .parent
                    .as_ref()
                    .and_then(|p| self.threads.get(&format!("{}:{p}", caller.agent)))
                    .map(|(s, _)| *s);
                let session =
                    match parent_session.or_else(|| self.by_key.get(&session_key).copied()) {
                        Some(s) => s,
                        None => self.open(&session_key, caller, request, at),
                    };
                if side {
                    (session, None)
                } else {
                    let t = self.thread_for(session, caller, request, marks, at);
                    if let Some(t) = t {
                        self.threads
                            .insert(named.clone().unwrap_or(fingerprint.clone()), (session, t));
                    }
                    (session, t)
                }
            }
        };
        let entry = &mut self.sessions[session];
        entry.last_used = at;
        let mut growth = Growth::default();
        if let Some(t) = thread.filter(|_| !side) {
            let owned = request.text_input();
            let items: Vec<WireItem<'_>> = match &owned {
                Some(value) => vec![WireItem { hash: request.fingerprint(), json: value }],
                None => Vec::new(),
            };
            let parsed: Vec<Value> = if owned.is_some() {
                Vec::new()
            } else {
                // Only the items the thread has not seen are parsed.
                let thread = &entry.wire.threads[t].thread;
                let seen = thread.items();
                request
                    .conversation()
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        if i < seen {
                            Value::Null
                        } else {
                            serde_json::from_str(item.raw.get()).unwrap_or(Value::Null)
                        }
                    })
                    .collect()
            };
            let items = if owned.is_some() {
                items
            } else {
                request
                    .conversation()
                    .iter()
                    .zip(&parsed)
                    .map(|(item, json)| WireItem { hash: item.hash, json })
                    .collect()
            };
            growth = entry.wire.threads[t].thread.update(&items, at)?;
            entry.marks[t] = marks;
        }
        let draft = entry.wire.draft();
        let frame = match thread {
            Some(t) => frame_of(&draft, t, entry.wire.threads[t].thread.messages().len()),
            None => draft.draft.focus,
        };
        let mut budget_frame = None;
        let mut at_frame = frame;
        while let Some(f) = at_frame {
            if let Some(id) = entry.frames.get(&draft.draft.frames[f].key) {
                budget_frame = Some(id.clone());
                break;
            }
            at_frame = draft.draft.frames[f].parent;
        }
        Ok(Placed {
            wire: request.wire,
            session,
            thread,
            id: entry.id.clone(),
            growth,
            budget_frame,
            draft: std::sync::Arc::new(draft),
        })
    }

    fn open(&mut self, key: &str, caller: &Caller, request: &Request<'_>, at: Timestamp) -> usize {
        if self.sessions.len() >= MAX_SESSIONS {
            self.forget_oldest();
        }
        let session = WireSession {
            agent: agent_name(caller.agent).to_owned(),
            id: caller.session.clone().unwrap_or_else(|| key.to_owned()),
            folder: request.folder(),
            threads: Vec::new(),
        };
        let store_key = caller
            .session
            .clone()
            .unwrap_or_else(|| key.split_once(':').map_or(key, |(_, rest)| rest).to_owned());
        self.sessions.push(Session {
            id: format!("{}:{store_key}", caller.agent),
            agent: caller.agent,
            wire: session,
            marks: Vec::new(),
            stored: None,
            frames: HashMap::new(),
            client_cache: ClientCache::new(request.wire),
            replayer: Replayer::new(request.wire.encoding(), policy(request.wire), self.keep),
            rewritten: crate::rewritten::Rewritten::default(),
            last_used: at,
        });
        let index = self.sessions.len() - 1;
        self.by_key.insert(key.to_owned(), index);
        index
    }

    /// The thread of `session` a new request of this kind belongs to (see the module's
    /// comment); `None` when the session holds as many threads as it may.
    fn thread_for(
        &mut self,
        session: usize,
        caller: &Caller,
        request: &Request<'_>,
        marks: ThreadMarks,
        at: Timestamp,
    ) -> Option<usize> {
        let entry = &mut self.sessions[session];
        if caller.thread.is_none()
            && let Some(main) = entry.marks.first()
            && (main.fixed == marks.fixed || (main.first.is_some() && main.first == marks.first))
        {
            return Some(0);
        }
        if entry.wire.threads.len() >= MAX_SESSION_THREADS {
            return None;
        }
        let parent = if entry.wire.threads.is_empty() {
            None
        } else {
            let named = caller.parent.as_ref().and_then(|p| {
                self.threads.get(&format!("{}:{p}", caller.agent)).filter(|(s, _)| *s == session)
            });
            Some(named.map_or(0, |(_, t)| *t))
        };
        let entry = &mut self.sessions[session];
        let index = entry.wire.threads.len();
        let key = match (&caller.thread, index) {
            (_, 0) => "main".to_owned(),
            (Some(thread), _) => format!("thread:{thread}"),
            (None, _) => format!("thread:{:016x}", request.fingerprint()),
        };
        entry.wire.threads.push(SessionThread {
            thread: WireThread::new(request.wire, entry.wire.folder.as_deref()),
            parent,
            key,
            started_at: at,
        });
        entry.marks.push(marks);
        Some(index)
    }

    /// What the client's own request, placed as `placed`, would cost under the cache model
    /// (input only). Asked once per request, after it is placed: the model follows the
    /// session's requests in turn.
    pub fn client_cost(&mut self, placed: &Placed, request: &Request<'_>, at: Timestamp) -> Usage {
        let Some(session) = self.sessions.get_mut(placed.session) else {
            return Usage::default();
        };
        match placed.thread.and_then(|t| session.wire.threads.get(t)) {
            Some(thread) => session.client_cache.send(request, &thread.thread, at),
            None => session.client_cache.send_side(request, at),
        }
    }

    /// Reads the upstream's whole reply into the thread it answers.
    pub fn reply(
        &mut self,
        placed: &Placed,
        items: &[Value],
        model: Option<&str>,
        usage: Usage,
        at: Timestamp,
    ) {
        let Some(session) = self.sessions.get_mut(placed.session) else { return };
        if let Some(thread) = placed.thread.and_then(|t| session.wire.threads.get_mut(t)) {
            thread.thread.reply(items, model, usage, at);
        }
    }

    /// The session's draft as it reads now, with the frame the call's reply is in.
    pub fn draft(&self, placed: &Placed) -> (WireDraft, Option<usize>) {
        let session = &self.sessions[placed.session];
        let draft = session.wire.draft();
        let frame = match placed.thread {
            Some(t) => {
                let thread = &session.wire.threads[t].thread;
                frame_of(&draft, t, thread.messages().len())
            }
            None => draft.draft.focus,
        };
        (draft, frame)
    }

    fn forget_oldest(&mut self) {
        let Some(oldest) = (0..self.sessions.len()).min_by_key(|&i| self.sessions[i].last_used)
        else {
            return;
        };
        self.sessions.swap_remove(oldest);
        let moved = self.sessions.len();
        let fix = |index: &mut usize| {
            if *index == moved {
                *index = oldest;
            }
        };
        self.by_key.retain(|_, s| *s != oldest);
        self.threads.retain(|_, (s, _)| *s != oldest);
        self.by_key.values_mut().for_each(fix);
        self.threads.values_mut().for_each(|(s, _)| fix(s));
    }
}

/// The frame that holds the newest of a thread's first `messages` messages: the frame its next
/// call is made in.
fn frame_of(draft: &WireDraft, thread: usize, messages: usize) -> Option<usize> {
    match messages.checked_sub(1) {
        Some(last) => draft.frame_of(thread, last).map(|(frame, _)| frame),
        None => draft
            .holders
            .iter()
            .position(|h| h.as_ref().is_some_and(|h| h.thread == thread))
            .or(draft.draft.focus),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past [`MAX_SESSIONS`], the least recently used session is forgotten, with its threads.
    #[test]
    fn the_sessions_kept_are_bounded() {
        let mut sessions = Sessions::new(1);
        let body = br#"{"model":"m","tools":[{"name":"Read"}],"messages":[{"role":"user","content":"hi"}]}"#;
        let request = Request::parse(WireFormat::Anthropic, body).unwrap();
        for i in 0..MAX_SESSIONS + 40 {
            let caller = Caller {
                agent: "claude-code",
                session: Some(format!("s{i}")),
                thread: None,
                parent: None,
            };
            sessions.place(&request, &caller, i as Timestamp).unwrap();
            assert!(
                sessions.sessions.len() <= MAX_SESSIONS,
                "{} sessions",
                sessions.sessions.len()
            );
        }
        assert_eq!(sessions.by_key.len(), MAX_SESSIONS);
        assert!(sessions.threads.len() <= MAX_SESSIONS, "{} threads", sessions.threads.len());
        // The newest sessions are the ones kept, each found again by its key.
        let newest = format!("claude-code:s{}", MAX_SESSIONS + 39);
        let index = sessions.by_key[&newest];
        assert_eq!(sessions.sessions[index].id, newest);
    }
}
