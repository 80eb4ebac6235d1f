//! The gateway's calls (migration 19: `gateway_calls`): each model call the gateway forwarded or
//! refused, on the frame it was made in, with what the upstream billed for what was sent and what
//! the client's own request would have cost under the same prompt-cache model. A gateway session's
//! tree, frames and messages are stored as a followed session's are (`follow.rs`, its row's
//! source `gateway`); this table is what only the gateway knows.

use flame_model::{FrameId, Timestamp, TreeId, Usage};
use rusqlite::params;

use crate::{Store, StoreError};

use super::Change;

/// The source a gateway session's row carries in `followed_sessions`.
pub const GATEWAY_SOURCE: &str = "gateway";

/// Why a call wrote the provider's cache again beyond what it appended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rewrite {
    /// The frame's opening was made (entered, or made again).
    Opening,
    /// A batch of masking sent older tool results as stubs.
    Masking,
    /// The frame's cached prefix had expired.
    Cold,
    /// The client's own request changed what it had sent before.
    Client,
}

impl Rewrite {
    pub fn as_str(self) -> &'static str {
        match self {
            Rewrite::Opening => "opening",
            Rewrite::Masking => "masking",
            Rewrite::Cold => "cold",
            Rewrite::Client => "client",
        }
    }

    fn parse(text: &str) -> Option<Rewrite> {
        match text {
            "opening" => Some(Rewrite::Opening),
            "masking" => Some(Rewrite::Masking),
            "cold" => Some(Rewrite::Cold),
            "client" => Some(Rewrite::Client),
            _ => None,
        }
    }
}

/// One call the gateway handled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayCall {
    pub session: String,
    pub tree: TreeId,
    pub frame: FrameId,
    pub at: Timestamp,
    /// `anthropic`, `responses` or `chat`.
    pub wire: String,
    /// Whether the call sent Flame's context (`true`) or the client's request as it came.
    pub context: bool,
    pub model: Option<String>,
    /// The status the client received; 0 when the upstream could not be reached.
    pub status: u16,
    /// Why the gateway refused the call, when it did (nothing was sent).
    pub refused: Option<String>,
    /// What the upstream billed for what was sent (its own report).
    pub sent: Usage,
    /// What the client's own request would have cost under the same cache model (input only).
    pub client: Usage,
    pub rewrite: Option<Rewrite>,
}

const CALL_COLUMNS: &str = "session_id, tree_id, frame_id, at, wire, mode, model, status, refused,
    sent_input, sent_cache_read, sent_cache_write, sent_cache_write_long, output,
    client_input, client_cache_read, client_cache_write, client_cache_write_long, rewrite";

fn call_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<GatewayCall> {
    let count = |i: usize| -> rusqlite::Result<u64> { Ok(row.get::<_, i64>(i)?.max(0) as u64) };
    Ok(GatewayCall {
        session: row.get(0)?,
        tree: TreeId::from_trusted(row.get::<_, String>(1)?),
        frame: FrameId::from_trusted(row.get::<_, String>(2)?),
        at: row.get(3)?,
        wire: row.get(4)?,
        context: row.get::<_, String>(5)? == "context",
        model: row.get(6)?,
        status: row.get::<_, i64>(7)?.clamp(0, i64::from(u16::MAX)) as u16,
        refused: row.get(8)?,
        sent: Usage {
            input_tokens: count(9)?,
            cache_read_tokens: count(10)?,
            cache_write_tokens: count(11)?,
            cache_write_long_tokens: count(12)?,
            output_tokens: count(13)?,
        },
        client: Usage {
            input_tokens: count(14)?,
            cache_read_tokens: count(15)?,
            cache_write_tokens: count(16)?,
            cache_write_long_tokens: count(17)?,
            output_tokens: 0,
        },
        rewrite: row.get::<_, Option<String>>(18)?.as_deref().and_then(Rewrite::parse),
    })
}

/// A count as SQLite stores it: counts come from providers, which may state anything, and past
/// `i64::MAX` they stop there.
fn stored(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

impl Store {
    /// Records one call the gateway handled, in a transaction of its own.
    pub fn record_gateway_call(
        &mut self,
        change: Change,
        call: &GatewayCall,
    ) -> Result<(), StoreError> {
        self.write(change, |w| {
            w.tx.prepare_cached(&format!(
                "INSERT INTO gateway_calls ({CALL_COLUMNS})
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                         ?17, ?18, ?19)"
            ))?
            .execute(params![
                call.session,
                call.tree.as_str(),
                call.frame.as_str(),
                call.at,
                call.wire,
                if call.context { "context" } else { "observe" },
                call.model,
                i64::from(call.status),
                call.refused,
                stored(call.sent.input_tokens),
                stored(call.sent.cache_read_tokens),
                stored(call.sent.cache_write_tokens),
                stored(call.sent.cache_write_long_tokens),
                stored(call.sent.output_tokens),
                stored(call.client.input_tokens),
                stored(call.client.cache_read_tokens),
                stored(call.client.cache_write_tokens),
                stored(call.client.cache_write_long_tokens),
                call.rewrite.map(Rewrite::as_str),
            ])?;
            Ok(())
        })
    }

    /// Every call the gateway handled in a tree, oldest first.
    pub fn gateway_calls(&self, tree: &TreeId) -> Result<Vec<GatewayCall>, StoreError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {CALL_COLUMNS} FROM gateway_calls WHERE tree_id = ?1 ORDER BY at, id"
        ))?;
        let rows = stmt.query_map([tree.as_str()], call_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
