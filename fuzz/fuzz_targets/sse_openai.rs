//! Any bytes as a streamed Openai reply, cut into chunks where the input says: the parser and
//! the decoder give a turn or an error without panicking, and the same turn or error whatever the
//! chunks (`flame_fuzz::check_stream`).
#![no_main]

use flame_models::ProviderKind;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| flame_fuzz::check_stream(ProviderKind::Openai, data));
