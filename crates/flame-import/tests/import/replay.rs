//! The replay of the shared sessions: every recorded call compared with Flame's context.

use flame_import::replay::replay;

use crate::{SESSION_A, SESSION_B, import, shared};

#[test]
fn flame_sends_less_than_the_linear_chat_on_the_shared_sessions() {
    for name in [SESSION_A, SESSION_B] {
        let draft = import(&shared(name));
        let r = replay(&draft).unwrap();
        assert_eq!(r.calls as usize, r.per_call.len());
        assert_eq!(r.compaction_calls, 1);
        assert!(r.calls > 100);
        assert!(r.flame_tokens < r.linear_tokens, "{name}");
        assert!(r.peak_flame < r.peak_linear, "{name}");
        // The first call of every thread costs the same on both sides, by construction of the
        // overhead estimate, up to the preamble and stack context Flame adds.
        let first = &r.per_call[0];
        assert!(first.flame_tokens >= first.linear_tokens, "{first:?}");
    }
}

/// Issue 17's goal on the shared sessions, with the default masking: at most 0.45× of the
/// linear chat's tokens, every returning file named, no call over 70k tokens.
#[test]
fn the_shared_sessions_meet_the_token_and_recall_goal() {
    for name in [SESSION_A, SESSION_B] {
        let r = replay(&import(&shared(name))).unwrap();
        let ratio = r.flame_tokens as f64 / r.linear_tokens as f64;
        assert!(ratio <= 0.45, "{name}: {ratio:.3}");
        assert!(r.returning_paths > 0, "{name}");
        assert!(r.first_touch_recall.unwrap() >= 0.95, "{name}: {:?}", r.first_touch_recall);
        assert!(r.peak_flame <= 70_000, "{name}: {}", r.peak_flame);
    }
}

/// Flame's count of the messages between two calls is what the tool's own count grew by, within
/// a tenth: the token estimate the ratio rests on is sound.
#[test]
fn the_token_count_follows_the_recorded_growth() {
    for name in [SESSION_A, SESSION_B] {
        let r = replay(&import(&shared(name))).unwrap();
        assert!(r.recorded_growth > 100_000, "{name}: {}", r.recorded_growth);
        let share = r.counted_growth as f64 / r.recorded_growth as f64;
        assert!((0.9..=1.1).contains(&share), "{name}: {share:.3}");
    }
}
