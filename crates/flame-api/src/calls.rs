//! The context of a frame's model calls: what the next call sends (`flame_context::next_call`),
//! kept in the store so every request in the frame starts with the one before it.
//!
//! [`Flame::prepare_call`] is what the agent runs before each call: it assembles the call's
//! context from the frame's stored context and stores what the call changes (an opening made, a
//! note appended as a message, a batch of tool results masked) before the call is sent, so that
//! the next request, in this process or another, repeats it byte for byte. [`Flame::context`]
//! is the same without storing: what the next call would send, for the context inspector and
//! `flame context`. [`Flame::rebuild_context`] is the person's request to make the frame's
//! opening again.
//!
//! A call that makes an opening starts it with the project instructions, read then and only then
//! (`instructions.rs`): before the call when `flame_context::opening_due` says it makes one, or,
//! when the budget made one, read after it and the call assembled again with them.
//!
//! `Flame::context` passes the tree's workspace, the subtree trails of the finished frames it
//! shows and the own trails of the focus's ancestors (read afresh each time), with the frame's
//! recorded cache hit rate for the inspector. Because a chat assembles
//! before every model call, three things are kept between assemblies: the subtree trails of the
//! last tree (`subtree_trails.rs`), the settled messages of the last focus (`settled_messages.rs`)
//! and the frames its context shows (`path_frames.rs`). The parts assembled from them are kept too
//! (`path_frames::KeptContext`, a `flame_context::KeptParts`): its masked messages are forgotten
//! when the settled messages start over, and it is told `trust_frames_unchanged` when the last
//! assembly succeeded at the seq the kept frames were followed from and every event of the tree
//! since is a message added to the focus.
//!
//! The frame's stored context is kept parsed too ([`KeptFrameContext`]): it is most of what a
//! call reads (its JSON names every frame the model was told of), and it changes only when a
//! call stores what it changed, which this process keeps as it stores it. Each save has a
//! number (`Store::frame_context_version`), so an assembly reads one column to know that the
//! kept context is still the stored one, and reads it again when another process saved since.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use flame_context::{Budget, CachePolicy, CallRules, ContextDoc, ContextInput, NextCall};
use flame_model::{Actor, FrameContext, FrameId, NewMessage, Role};
use flame_store::{Store, StoreError};

use crate::frames::{DEFAULT_BUDGET, DEFAULT_ENCODING, default_to_focus};
use crate::{ApiError, Flame};

/// The policy of the last call prepared, which the inspector's preview assumes.
#[derive(Debug, Default)]
pub(crate) struct LastPolicy(Mutex<CachePolicy>);

/// The stored context of the frame last assembled for, parsed, with the number of the save it
/// is (see the module's documentation).
#[derive(Debug, Default)]
pub(crate) struct KeptFrameContext(Mutex<Option<KeptContextOf>>);

#[derive(Debug)]
struct KeptContextOf {
    frame: FrameId,
    /// The save it is; `None`: the frame had none.
    version: Option<i64>,
    context: Option<Arc<FrameContext>>,
}

impl KeptFrameContext {
    /// Frame `frame`'s context as stored now: the kept one while no save was made since, else
    /// read (and kept).
    pub(crate) fn read(
        &self,
        store: &Store,
        frame: &FrameId,
    ) -> Result<Option<Arc<FrameContext>>, StoreError> {
        let version = store.frame_context_version(frame)?;
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(k) = kept.as_ref()
            && k.frame == *frame
            && k.version == version
        {
            return Ok(k.context.clone());
        }
        let read = store.versioned_frame_context(frame)?;
        let context = read.context.map(Arc::new);
        *kept = Some(KeptContextOf {
            frame: frame.clone(),
            version: read.version,
            context: context.clone(),
        });
        Ok(context)
    }

    /// Keeps `context` as frame `frame`'s, stored by save number `version`.
    fn saved(&self, frame: &FrameId, version: i64, context: FrameContext) -> Arc<FrameContext> {
        let context = Arc::new(context);
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(KeptContextOf {
            frame: frame.clone(),
            version: Some(version),
            context: Some(Arc::clone(&context)),
        });
        context
    }
}

impl Flame {
    /// Exactly what the next model call in frame `id` (default: the focused frame of the
    /// current tree) would send under `budget` (default: [`DEFAULT_BUDGET`]), with the
    /// inspector's account; nothing is stored. The cache policy is the last call's.
    pub fn context(
        &self,
        id: Option<&FrameId>,
        budget: Option<Budget>,
    ) -> Result<ContextDoc, ApiError> {
        let policy = *self.last_policy.0.lock().unwrap_or_else(PoisonError::into_inner);
        let store = self.store();
        let focus = default_to_focus(&store, id)?;
        let stored = self.kept_context.read(&store, &focus)?;
        let now = self.env().now();
        let mut doc = self.next_call(&store, &focus, budget, stored.as_deref(), policy, now)?.doc;
        let mut recorded = flame_model::Usage::default();
        for row in store.usage_by_model(&focus)? {
            recorded.add(&row.usage);
        }
        let prompt = recorded.prompt_tokens();
        doc.report.cache_hit_per_mille = (prompt > 0)
            .then(|| (u128::from(recorded.cache_read_tokens) * 1_000 / u128::from(prompt)) as u32);
        Ok(doc)
    }

    /// What the next model call in `frame` sends under `budget`, for a provider of `policy`,
    /// with what it changes of the frame's context stored first (see the module's
    /// documentation): the agent's step before every call.
    pub fn prepare_call(
        &self,
        frame: &FrameId,
        budget: Budget,
        policy: CachePolicy,
    ) -> Result<ContextDoc, ApiError> {
        *self.last_policy.0.lock().unwrap_or_else(PoisonError::into_inner) = policy;
        let now = self.env().now();
        let next = {
            let store = self.store();
            let stored = self.kept_context.read(&store, frame)?;
            self.next_call(&store, frame, Some(budget), stored.as_deref(), policy, now)?
        };
        let Some(update) = next.update else { return Ok(next.doc) };
        let note = update.note.as_ref().map(|text| {
            let note = NewMessage::text(Role::Note, text.clone());
            let tokens = crate::frames::count_message(&note);
            (note, tokens)
        });
        let saved = self.write(Actor::Agent, |store, change, _| {
            let note = note.as_ref().map(|(note, tokens)| (note, *tokens));
            store.save_frame_context(change, frame, update.context, note)
        })?;
        let stored = self.kept_context.saved(frame, saved.version, saved.context);
        if saved.note.is_none() {
            return Ok(next.doc);
        }
        // The note is a message now: the context is assembled again with it stored, as every
        // later call will send it.
        let store = self.store();
        let again = self.next_call(&store, frame, Some(budget), Some(&stored), policy, now)?;
        debug_assert!(again.update.is_none(), "a stored note leaves nothing to store");
        Ok(again.doc)
    }

    /// Asks for frame `frame`'s opening to be made again at its next call, showing the tree as
    /// it is then: the person's one way to refresh what the frame's conversation started with.
    pub fn rebuild_context(&self, actor: Actor, frame: &FrameId) -> Result<(), ApiError> {
        self.write(actor, |store, change, _| store.ask_context_rebuild(change, frame))?;
        Ok(())
    }

    /// The frame's stored context, as its calls send it.
    pub fn frame_context(&self, frame: &FrameId) -> Result<Option<FrameContext>, ApiError> {
        Ok(self.store().frame_context(frame)?)
    }

    fn next_call(
        &self,
        store: &Store,
        focus: &FrameId,
        budget: Option<Budget>,
        stored: Option<&FrameContext>,
        policy: CachePolicy,
        now: flame_model::Timestamp,
    ) -> Result<NextCall, ApiError> {
        // What the context shows of the tree, the focus's settled messages, the subtrees'
        // trails and the parts assembled from them are kept between assemblies
        // (`path_frames.rs`, `settled_messages.rs`, `subtree_trails.rs`,
        // `flame_context::KeptParts`): a chat assembles before every model call, and reading
        // the trails walks most of a large tree.
        let (data_dir, budget) = (self.data_dir.path(), budget.unwrap_or(DEFAULT_BUDGET));
        let keep_tool_results = Some(self.config.keep_tool_results());
        // `None`: the person turned the project instructions off.
        let instructions_from = self.config.instructions();
        let rules = CallRules { now, policy };
        // What the focus has left of its budgets: a note tells the model when that is new.
        let allowance = self.allowance_in(store, focus)?;
        let assembled =
            self.path_frames.with(store, data_dir, focus, |shown, followed| {
                let linear_message_tokens = store.tree_message_tokens(&shown.tree)?;
                // What the focus's ancestors touched themselves: read at every assembly, since
                // one query of a few frames costs less than following their messages.
                let path_trails = store.file_trails(&shown.path[1..])?;
                let (tree, finished) = (&shown.tree, &shown.finished);
                let none_gone = followed.is_some();
                self.settled_messages.with(store, focus, none_gone, |messages, settled| {
                    self.subtree_trails.with(store, tree, finished, followed, |trails| {
                        // The project instructions are read only for a call that makes an
                        // opening: before it when a rule says it will, after it when the budget
                        // made one, which is then assembled again with them.
                        let read = |personal: &Option<PathBuf>| {
                            self.read_instructions(store, shown, personal.as_deref())
                        };
                        let mut instructions = instructions_from
                            .as_ref()
                            .filter(|_| flame_context::opening_due(stored, messages, &rules))
                            .map(read);
                        loop {
                            let input = ContextInput {
                                focus,
                                frames: &shown.frames,
                                messages,
                                encoding: DEFAULT_ENCODING,
                                budget,
                                log_paths: &shown.log_paths,
                                linear_message_tokens,
                                workspace: shown.workspace.as_deref(),
                                trails,
                                path_trails: &path_trails,
                                keep_tool_results,
                                allowance: Some(&allowance),
                                instructions: instructions.as_deref(),
                                read_back: flame_context::ReadBack::FrameLog,
                            };
                            let mut kept =
                                self.kept_parts.lock().unwrap_or_else(PoisonError::into_inner);
                            if settled.fresh {
                                kept.parts.forget_messages();
                            }
                            kept.trust_unchanged(followed, shown);
                            let next = flame_context::next_call(
                                &input,
                                stored,
                                &rules,
                                Some((&mut kept.parts, settled.count)),
                            );
                            kept.assembled_at = next.is_ok().then_some(shown.seq);
                            let unread = instructions.is_none()
                                && next.as_ref().is_ok_and(|n| n.doc.report.opening.made_now);
                            match &instructions_from {
                                Some(personal) if unread => instructions = Some(read(personal)),
                                _ => return next,
                            }
                        }
                    })
                })
            })???;
        assembled.map_err(|e| ApiError::internal("assemble the context", e))
    }
}
