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
