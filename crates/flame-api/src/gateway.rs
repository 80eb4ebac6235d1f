//! The gateway's sessions (issue 37, DESIGN.md §12): the facade's half of `flame-gateway`.
//!
//! A client session the gateway sees is kept as a followed session is (`follow.rs`): a row of
//! `followed_sessions` whose source is `gateway`, and a tree stored from a draft
//! (`flame_import::wire`) at every read, by the same first-read and later-read steps, so the
//! tree grows by its new frames and messages and never repeats one. The id is the one following
//! the agent's files gives the same session (`claude-code:<session>`), so a session is one tree
//! however it reached Flame: when its files are followed already, the follower writes the tree
//! and the gateway only records its calls ([`GatewaySession::writes_tree`]); a session the
//! gateway records is not read from its files again (`Flame::sync_followed`).
//!
//! Budgets bound a gateway session's frames as any frame's: [`Flame::gateway_refusal`] says why
//! a call must not be sent, in words the client shows its person. Each call is recorded with
//! what the upstream billed and what the client's own request would have cost under the same
//! cache model ([`Flame::record_gateway_call`]); [`Flame::gateway_report`] prices both, per
//! frame and for the session.

use std::collections::{BTreeMap, HashMap};

use flame_import::Draft;
use flame_model::budget::Allowance;
use flame_model::cost::{CostSummary, CostTotal, ModelUsage};
use flame_model::{Actor, FrameId, TreeId, Usage};
use flame_store::{FollowedSession, GATEWAY_SOURCE};
use serde::Serialize;

pub use flame_store::{GatewayCall, Rewrite};

use crate::{ApiError, ErrorCode, Flame};

/// The agents the gateway knows by name; any other client is `other`.
pub const GATEWAY_AGENTS: [&str; 4] = ["claude-code", "codex", "opencode", "other"];

/// A session as the gateway works with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewaySession {
    /// `<agent>:<the client's id of the session>`.
    pub id: String,
    /// Its tree, once it holds a message.
    pub tree: Option<TreeId>,
    /// Whether the gateway writes the session's tree; `false` when the agent's files are
    /// followed and the follower writes it.
    pub writes_tree: bool,
}

impl GatewaySession {
    fn of(row: FollowedSession) -> GatewaySession {
        GatewaySession { writes_tree: row.source == GATEWAY_SOURCE, id: row.id, tree: row.tree }
    }
}

/// Where a session's draft was stored: its tree, and the frame each draft frame is (by index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredDraft {
    pub tree: TreeId,
    pub frames: Vec<FrameId>,
}

/// What the gateway's calls in a frame, or in a session, cost and would have cost.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct GatewaySavings {
    pub calls: u64,
    /// Calls the gateway refused (a budget), which sent nothing.
    pub refused: u64,
    /// Calls that sent Flame's context rather than the client's request.
    pub context_calls: u64,
    /// What the upstream billed for what was sent, as it reported it.
    pub billed: CostSummary,
    /// What the client's own requests would have cost under the same cache model, with the
    /// same replies.
    pub client: CostSummary,
    /// Calls that wrote the cache again beyond what they appended, by why: `opening`,
    /// `masking`, `cold`, `client`.
    pub rewrites: Vec<(String, u64)>,
}

/// What a gateway session's calls cost: the whole session's, and each frame's own.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct GatewayReport {
    pub session: String,
    pub tree: TreeId,
    pub total: GatewaySavings,
    /// The frames that made calls, in the order of their first call.
    pub frames: Vec<(FrameId, GatewaySavings)>,
}

/// A session the gateway records, as the window's Sessions view and `flame sessions` show it.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct GatewaySessionView {
    /// `<agent>:<the client's id of the session>`.
    pub id: String,
    /// `claude-code`, `codex`, `opencode` or `other`.
    pub agent: String,
    pub tree: Option<TreeId>,
    /// The tree's title: the session's first request.
    pub title: Option<String>,
    /// Whether the gateway writes the tree (`false`: the agent's files are followed, and the
    /// follower writes it).
    pub writes_tree: bool,
    /// What its calls cost and would have cost; `None` before its first call is recorded.
    pub savings: Option<GatewaySavings>,
}

/// The sum of calls, priced when it is asked for.
#[derive(Debug, Default)]
struct Tally {
    calls: u64,
    refused: u64,
    context_calls: u64,
    billed: Vec<ModelUsage>,
    client: Vec<ModelUsage>,
    rewrites: BTreeMap<&'static str, u64>,
}

impl Tally {
    fn add(&mut self, call: &GatewayCall) {
        self.calls += 1;
        if call.refused.is_some() {
            self.refused += 1;
        }
        if call.context {
            self.context_calls += 1;
        }
        let client = Usage { output_tokens: call.sent.output_tokens, ..call.client };
        self.billed.push(ModelUsage { model: call.model.clone(), usage: call.sent });
        self.client.push(ModelUsage { model: call.model.clone(), usage: client });
        if let Some(rewrite) = call.rewrite {
            *self.rewrites.entry(rewrite.as_str()).or_default() += 1;
        }
    }

    fn savings(&self, flame: &Flame) -> GatewaySavings {
        let price = |usages: &[ModelUsage]| {
            flame.config.with_prices(|prices| {
                let mut total = CostTotal::default();
                for u in usages {
                    let price = u.model.as_deref().and_then(|m| prices.get(m)).map(|p| p.price());
                    total.add(u, price.as_ref());
                }
                total.summary()
            })
        };
        GatewaySavings {
            calls: self.calls,
            refused: self.refused,
            context_calls: self.context_calls,
            billed: price(&self.billed),
            client: price(&self.client),
            rewrites: self.rewrites.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect(),
        }
    }
}

impl Flame {
    /// The gateway session of `agent` that the client calls `session` (see the module's
    /// comment), registered as the gateway's when Flame knows it by no other way.
    pub fn open_gateway_session(
        &self,
        agent: &str,
        session: &str,
    ) -> Result<GatewaySession, ApiError> {
        if !GATEWAY_AGENTS.contains(&agent) {
            return Err(ApiError::new(
                ErrorCode::Invalid,
                format!("{agent} is not an agent the gateway knows"),
            ));
        }
        let id = crate::follow::session_id_of(agent, session);
        let at = self.env().now();
        let mut store = self.store();
        store.follow_session(at, &id, agent, session, GATEWAY_SOURCE)?;
        let row = store.followed_session(&id)?.ok_or_else(|| {
            ApiError::internal("open a gateway session", format!("{id} was not recorded"))
        })?;
        Ok(GatewaySession::of(row))
    }

    /// Stores the draft of the gateway session `id` as it reads now: its first read with a
    /// message as a new tree, each later one as what is new. Refused, storing nothing, for a
    /// session the gateway does not write.
    pub fn store_gateway_draft(&self, id: &str, draft: &Draft) -> Result<StoredDraft, ApiError> {
        let row = self.store().followed_session(id)?.ok_or_else(|| {
            ApiError::new(ErrorCode::NotFound, format!("no gateway session {id}"))
        })?;
        if row.source != GATEWAY_SOURCE {
            return Err(ApiError::new(
                ErrorCode::Invalid,
                format!("the session {id} is followed from its files, which write its tree"),
            ));
        }
        let mut draft = draft.clone();
        draft.cut_long_messages(flame_store::MAX_MESSAGE_BYTES);
        let tree = match &row.tree {
            Some(tree) => {
                self.store_later_read(Actor::Agent, id, tree, 0, &draft, Vec::new())?;
                tree.clone()
            }
            None => self.store_first_read(Actor::Agent, id, &draft, &[])?,
        };
        let held: HashMap<String, FrameId> =
            self.store().followed_frames(id)?.into_iter().map(|f| (f.key, f.frame)).collect();
        let frames = draft
            .frames
            .iter()
            .map(|f| {
                held.get(&f.key).cloned().ok_or_else(|| {
                    ApiError::internal("store a gateway session", format!("no frame for {}", f.key))
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(StoredDraft { tree, frames })
    }

    /// The frame of a session whose files are followed that a gateway call in it belongs to: the
    /// tree's focus, where the follower puts the newest work.
    pub fn gateway_followed_frame(&self, tree: &TreeId) -> Result<FrameId, ApiError> {
        Ok(self.store().tree(tree)?.focus)
    }

    /// Why a call in `frame` must not be sent: a budget on its path is spent. `None` when it
    /// may go.
    pub fn gateway_refusal(&self, frame: &FrameId) -> Result<Option<String>, ApiError> {
        let allowance = self.allowance(frame)?;
        Ok(allowance.spent().map(|bound| {
            format!(
                "Flame refused this request: {}. Raise the budget in Flame (flame budget {} …) or end this part of the work.",
                Allowance::spent_reason(bound, |id| self.frame_name(id)),
                bound.frame
            )
        }))
    }

    /// Records one call the gateway handled.
    pub fn record_gateway_call(&self, call: &GatewayCall) -> Result<(), ApiError> {
        self.write(Actor::Agent, |store, change, _| store.record_gateway_call(change, call))?;
        Ok(())
    }

    /// What the gateway's calls in `tree` cost and would have cost, for the session and per
    /// frame. `None` when the gateway made no call in it.
    pub fn gateway_report(&self, tree: &TreeId) -> Result<Option<GatewayReport>, ApiError> {
        let calls = self.store().gateway_calls(tree)?;
        let Some(first) = calls.first() else { return Ok(None) };
        let mut total = Tally::default();
        let mut frames: Vec<(FrameId, Tally)> = Vec::new();
        for call in &calls {
            total.add(call);
            match frames.iter_mut().find(|(f, _)| *f == call.frame) {
                Some((_, tally)) => tally.add(call),
                None => {
                    let mut tally = Tally::default();
                    tally.add(call);
                    frames.push((call.frame.clone(), tally));
                }
            }
        }
        Ok(Some(GatewayReport {
            session: first.session.clone(),
            tree: tree.clone(),
            total: total.savings(self),
            frames: frames.into_iter().map(|(f, t)| (f, t.savings(self))).collect(),
        }))
    }

    /// What the gateway's calls in `frame` itself (not its subtree) cost and would have cost, as
    /// the window's frame header shows it: the part of [`Flame::gateway_report`] for one frame,
    /// read for that frame alone. `None` when the gateway made no call there.
    pub fn gateway_frame_savings(
        &self,
        frame: &FrameId,
    ) -> Result<Option<GatewaySavings>, ApiError> {
        let tree = self.store().frame(frame)?.tree;
        let calls = self.store().gateway_calls(&tree)?;
        let mut tally = Tally::default();
        for call in calls.iter().filter(|call| call.frame == *frame) {
            tally.add(call);
        }
        Ok((tally.calls > 0).then(|| tally.savings(self)))
    }

    /// Every session the gateway recorded a call of, newest first, with what its calls cost.
    pub fn gateway_overview(&self) -> Result<Vec<GatewaySessionView>, ApiError> {
        let rows: Vec<FollowedSession> = self.store().followed_sessions()?;
        let mut views = Vec::new();
        for row in rows.into_iter().rev() {
            let report = match &row.tree {
                Some(tree) => self.gateway_report(tree)?,
                None => None,
            };
            if row.source != GATEWAY_SOURCE && report.is_none() {
                continue;
            }
            let title = match &row.tree {
                Some(tree) => Some(self.store().tree(tree)?.title),
                None => None,
            };
            views.push(GatewaySessionView {
                writes_tree: row.source == GATEWAY_SOURCE,
                id: row.id,
                agent: row.agent,
                tree: row.tree,
                title,
                savings: report.map(|r| r.total),
            });
        }
        Ok(views)
    }

    /// The sessions the gateway records, with their trees.
    pub fn gateway_sessions(&self) -> Result<Vec<GatewaySession>, ApiError> {
        Ok(self
            .store()
            .followed_sessions()?
            .into_iter()
            .filter(|s| s.source == GATEWAY_SOURCE)
            .map(GatewaySession::of)
            .collect())
    }
}
