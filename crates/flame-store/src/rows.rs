//! Mapping between rows and model types.

use flame_model::stored;
use flame_model::{
    Actor, Event, EventDetail, EventKind, Frame, FrameId, FrameOutline, Message, MessageId,
    NewMessage, Role, Status, Timestamp, Tree, TreeId, Usage,
};
use rusqlite::Row;
use rusqlite::types::{FromSqlError, Type};
use serde::Serialize;

pub(crate) const FRAME_COLUMNS: &str = "id, tree_id, parent_id, position, title, \
    success_criteria, success_criteria_compacted, status, status_reason, results, \
    results_compacted, artifacts, decisions, retry_of, created_at, started_at, ended_at, \
    message_count, tokens, rolled_back_at";

pub(crate) const OUTLINE_COLUMNS: &str = "id, parent_id, position, title, status, \
    success_criteria_compacted, retry_of, started_at, ended_at, message_count, tokens, \
    rolled_back_at";

pub(crate) const TREE_COLUMNS: &str = "id, title, root_id, focus_id, created_at, workspace";

pub(crate) const MESSAGE_COLUMNS: &str = "id, frame_id, role, content, tool_calls, tool_result, \
    tokens, model, usage, created_at, interrupted, usage_input, usage_output, usage_cache_read, \
    usage_cache_write, usage_cache_write_long";

/// How many columns [`MESSAGE_COLUMNS`] names: a query selecting more reads them from here on.
pub(crate) const MESSAGE_COLUMN_COUNT: usize = 16;

/// The columns a message's row is written with, by a live write and an import alike, in the
/// order [`MessageRow::values`] binds them.
pub(crate) const MESSAGE_WRITTEN_COLUMNS: &str = "frame_id, role, content, tool_calls, \
    tool_result, tokens, model, usage, created_at, interrupted, usage_input, usage_output, \
    usage_cache_read, usage_cache_write, usage_cache_write_long, tool_call_count";

/// How many columns [`MESSAGE_WRITTEN_COLUMNS`] names.
pub(crate) const MESSAGE_VALUES: usize = 16;

/// An insert of `rows` messages, their values bound in order ([`MessageRow::values`]).
pub(crate) fn insert_messages_sql(rows: usize) -> String {
    let values: Vec<String> = (0..rows)
        .map(|row| {
            let params: Vec<String> =
                (1..=MESSAGE_VALUES).map(|k| format!("?{}", row * MESSAGE_VALUES + k)).collect();
            format!("({})", params.join(", "))
        })
        .collect();
    format!("INSERT INTO messages ({MESSAGE_WRITTEN_COLUMNS}) VALUES {}", values.join(", "))
}

/// One message's row as it is written: its values, in [`MESSAGE_WRITTEN_COLUMNS`]' order, with
/// the texts the message's own fields do not hold made once.
pub(crate) struct MessageRow<'m> {
    frame_id: &'m str,
    message: &'m NewMessage,
    role: &'static str,
    tool_calls: Option<String>,
    tool_result: Option<String>,
    tokens: i64,
    at: Timestamp,
    usage: UsageColumns,
    tool_call_count: i64,
}

impl<'m> MessageRow<'m> {
    pub(crate) fn of(
        frame_id: &'m str,
        message: &'m NewMessage,
        tokens: u64,
        at: Timestamp,
    ) -> MessageRow<'m> {
        MessageRow {
            frame_id,
            message,
            role: message.role.as_str(),
            tool_calls: payload_text(&message.tool_calls),
            tool_result: payload_text(&message.tool_result),
            tokens: tokens as i64,
            at,
            usage: UsageColumns::of(&message.usage),
            tool_call_count: tool_call_count(message),
        }
    }

    pub(crate) fn values(&self) -> [&dyn rusqlite::ToSql; MESSAGE_VALUES] {
        let m = self.message;
        [
            &self.frame_id,
            &self.role,
            &m.content,
            &self.tool_calls,
            &self.tool_result,
            &self.tokens,
            &m.model,
            &self.usage.json,
            &self.at,
            &m.interrupted,
            &self.usage.input,
            &self.usage.output,
            &self.usage.cache_read,
            &self.usage.cache_write,
            &self.usage.cache_write_long,
            &self.tool_call_count,
        ]
    }
}

/// How many tool calls `message` makes: the `tool_call_count` column, which budgets sum.
pub(crate) fn tool_call_count(message: &NewMessage) -> i64 {
    message.tool_calls.as_ref().map_or(0, |calls| calls.len() as i64)
}

pub(crate) const EVENT_COLUMNS: &str = "seq, tree_id, frame_id, kind, actor, at, detail";

fn bad(index: usize, what: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(index, Type::Text, what.into())
}

fn enum_column<T>(row: &Row, index: usize, parse: fn(&str) -> Option<T>) -> rusqlite::Result<T> {
    let text: String = row.get(index)?;
    parse(&text).ok_or_else(|| bad(index, format!("unknown value {text:?}")))
}

/// A message's tool calls, tool result or usage, read by `parse` (one of [`flame_model::stored`]'s
/// readers, which accept every shape a version of Flame stored). JSON of another shape, which
/// only an import of a hand-edited export could have stored, reads as nothing, with a warning,
/// so that one odd message does not make its whole frame unreadable.
fn payload_column<T>(
    row: &Row,
    index: usize,
    parse: fn(&str) -> serde_json::Result<T>,
) -> rusqlite::Result<Option<T>> {
    let Some(text) = row.get::<_, Option<String>>(index)? else { return Ok(None) };
    match parse(&text) {
        Ok(payload) => Ok(Some(payload)),
        Err(err) => {
            let id: i64 = row.get(0)?;
            tracing::warn!(
                "message {id}: column {index} is not in a shape Flame wrote, ignored: {err}"
            );
            Ok(None)
        }
    }
}

/// A payload as the text its column stores.
pub(crate) fn payload_text<T: Serialize>(payload: &Option<T>) -> Option<String> {
    // Plain data with string keys always serializes.
    payload.as_ref().map(|p| serde_json::to_string(p).unwrap_or_default())
}

fn string_list(row: &Row, index: usize) -> rusqlite::Result<Vec<String>> {
    let text: String = row.get(index)?;
    if text == "[]" {
        return Ok(Vec::new());
    }
    serde_json::from_str(&text).map_err(|e| bad(index, e.to_string()))
}

fn count(row: &Row, index: usize) -> rusqlite::Result<u64> {
    let n: i64 = row.get(index)?;
    u64::try_from(n).map_err(|_| {
        rusqlite::Error::FromSqlConversionFailure(
            index,
            Type::Integer,
            FromSqlError::OutOfRange(n).into(),
        )
    })
}

pub(crate) fn frame(row: &Row) -> rusqlite::Result<Frame> {
    Ok(Frame {
        id: FrameId::from_trusted(row.get(0)?),
        tree: TreeId::from_trusted(row.get(1)?),
        parent: row.get::<_, Option<String>>(2)?.map(FrameId::from_trusted),
        position: row.get(3)?,
        title: row.get(4)?,
        success_criteria: row.get(5)?,
        success_criteria_compacted: row.get(6)?,
        status: enum_column(row, 7, Status::parse)?,
        status_reason: row.get(8)?,
        results: row.get(9)?,
        results_compacted: row.get(10)?,
        artifacts: string_list(row, 11)?,
        decisions: string_list(row, 12)?,
        retry_of: row.get::<_, Option<String>>(13)?.map(FrameId::from_trusted),
        created_at: row.get(14)?,
        started_at: row.get(15)?,
        ended_at: row.get(16)?,
        message_count: count(row, 17)?,
        tokens: count(row, 18)?,
        rolled_back_at: row.get(19)?,
    })
}

pub(crate) fn outline(row: &Row) -> rusqlite::Result<FrameOutline> {
    Ok(FrameOutline {
        id: FrameId::from_trusted(row.get(0)?),
        parent: row.get::<_, Option<String>>(1)?.map(FrameId::from_trusted),
        position: row.get(2)?,
        title: row.get(3)?,
        status: enum_column(row, 4, Status::parse)?,
        success_criteria_compacted: row.get(5)?,
        retry_of: row.get::<_, Option<String>>(6)?.map(FrameId::from_trusted),
        started_at: row.get(7)?,
        ended_at: row.get(8)?,
        message_count: count(row, 9)?,
        tokens: count(row, 10)?,
        rolled_back_at: row.get(11)?,
    })
}

pub(crate) fn tree(row: &Row) -> rusqlite::Result<Tree> {
    Ok(Tree {
        id: TreeId::from_trusted(row.get(0)?),
        title: row.get(1)?,
        root: FrameId::from_trusted(row.get(2)?),
        focus: FrameId::from_trusted(row.get(3)?),
        created_at: row.get(4)?,
        workspace: row.get(5)?,
    })
}

pub(crate) fn message(row: &Row) -> rusqlite::Result<Message> {
    Ok(Message {
        id: MessageId(row.get(0)?),
        frame: FrameId::from_trusted(row.get(1)?),
        role: enum_column(row, 2, Role::parse)?,
        content: row.get(3)?,
        tool_calls: payload_column(row, 4, stored::tool_calls)?,
        tool_result: payload_column(row, 5, stored::tool_result)?,
        tokens: count(row, 6)?,
        model: row.get(7)?,
        usage: match payload_column(row, 8, stored::usage)? {
            Some(usage) => Some(usage),
            None if row.get_ref(8)?.data_type() == Type::Null => usage_counts(row, 11)?,
            None => None,
        },
        created_at: row.get(9)?,
        interrupted: row.get(10)?,
    })
}

/// The most a usage count column holds (migration 13): 2^32, more than any provider reports, so
/// that no sum over a tree's replies overflows.
pub(crate) const USAGE_COUNT_CAP: u64 = 1 << 32;

/// A message's usage as the store writes it (migrations 13 and 15): the five counts, each capped
/// at [`USAGE_COUNT_CAP`], and the JSON only when a count is over the cap, so that the exact
/// counts still read back. The counts are all NULL for a message without usage.
pub(crate) struct UsageColumns {
    pub json: Option<String>,
    pub input: Option<i64>,
    pub output: Option<i64>,
    pub cache_read: Option<i64>,
    pub cache_write: Option<i64>,
    pub cache_write_long: Option<i64>,
}

impl UsageColumns {
    pub(crate) fn of(usage: &Option<Usage>) -> UsageColumns {
        let Some(u) = usage else {
            return UsageColumns {
                json: None,
                input: None,
                output: None,
                cache_read: None,
                cache_write: None,
                cache_write_long: None,
            };
        };
        let counts = [
            u.input_tokens,
            u.output_tokens,
            u.cache_read_tokens,
            u.cache_write_tokens,
            u.cache_write_long_tokens,
        ];
        let capped = |n: u64| Some(n.min(USAGE_COUNT_CAP) as i64);
        UsageColumns {
            json: counts
                .iter()
                .any(|&n| n > USAGE_COUNT_CAP)
                .then(|| payload_text(usage))
                .flatten(),
            input: capped(u.input_tokens),
            output: capped(u.output_tokens),
            cache_read: capped(u.cache_read_tokens),
            cache_write: capped(u.cache_write_tokens),
            cache_write_long: capped(u.cache_write_long_tokens),
        }
    }
}

/// The usage counts in the five columns from `first` on (input, output, cache read, cache
/// write, cache write for the hour), none when they are NULL: the message recorded no usage.
fn usage_counts(row: &Row, first: usize) -> rusqlite::Result<Option<Usage>> {
    if row.get_ref(first)?.data_type() == Type::Null {
        return Ok(None);
    }
    Ok(Some(Usage {
        input_tokens: count(row, first)?,
        output_tokens: count(row, first + 1)?,
        cache_read_tokens: count(row, first + 2)?,
        cache_write_tokens: count(row, first + 3)?,
        // Migration 15 filled the column for every row with counts; a NULL still reads as none.
        cache_write_long_tokens: match row.get_ref(first + 4)?.data_type() {
            Type::Null => 0,
            _ => count(row, first + 4)?,
        },
    }))
}

pub(crate) fn event(row: &Row) -> rusqlite::Result<Event> {
    let kind = enum_column(row, 3, EventKind::parse)?;
    Ok(Event {
        seq: row.get(0)?,
        tree: TreeId::from_trusted(row.get(1)?),
        frame: FrameId::from_trusted(row.get(2)?),
        kind,
        actor: enum_column(row, 4, Actor::parse)?,
        at: row.get(5)?,
        detail: EventDetail::read(kind, &row.get::<_, String>(6)?),
    })
}

pub(crate) fn json_list(items: &[String]) -> String {
    if items.is_empty() {
        return "[]".to_owned();
    }
    serde_json::to_string(items).expect("a list of strings serialises")
}
