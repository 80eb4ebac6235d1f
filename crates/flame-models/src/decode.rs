//! From the raw bytes of one streamed reply to a turn: the SSE parser and the provider's decoder,
//! shared by the live client ([`crate::Client::stream`]) and by [`decode_stream`], so that tests
//! and fuzzing exercise exactly the code a real stream goes through.

use crate::sse::{SseEvent, SseParser};
use crate::{ModelError, ProviderKind, StreamEvent, Turn, anthropic, openai, shorten};

/// The decoder of one provider's events.
#[derive(Debug)]
enum Decoder {
    Anthropic(anthropic::Decoder),
    Openai(openai::Decoder),
}

impl Decoder {
    fn event(&mut self, event: SseEvent) -> Result<Vec<StreamEvent>, Result<String, String>> {
        match self {
            Decoder::Anthropic(d) => d.event(event),
            Decoder::Openai(d) => d.event(event),
        }
    }

    fn finished(&self) -> bool {
        match self {
            Decoder::Anthropic(d) => d.finished,
            Decoder::Openai(d) => d.finished,
        }
    }

    fn into_turn(self) -> Result<Turn, Box<(String, Turn)>> {
        match self {
            Decoder::Anthropic(d) => Ok(d.turn),
            Decoder::Openai(mut d) => match d.close() {
                Ok(()) => Ok(d.turn),
                Err(Ok(reason) | Err(reason)) => Err(Box::new((reason, d.turn))),
            },
        }
    }

    fn partial(&self) -> Turn {
        match self {
            Decoder::Anthropic(d) => d.turn.clone(),
            Decoder::Openai(d) => d.turn.clone(),
        }
    }
}

/// One reply being decoded: bytes go in as they arrive, stream events come out, and the end of
/// the bytes gives the turn or the error that ends the stream. Errors carry what arrived; their
/// texts are not yet scrubbed of a key (the caller knows the key, this does not).
#[derive(Debug)]
pub(crate) struct StreamDecoder {
    provider: &'static str,
    parser: SseParser,
    decoder: Decoder,
}

impl StreamDecoder {
    pub fn new(kind: ProviderKind) -> StreamDecoder {
        let decoder = match kind {
            ProviderKind::Anthropic => Decoder::Anthropic(anthropic::Decoder::default()),
            ProviderKind::Openai => Decoder::Openai(openai::Decoder::default()),
        };
        StreamDecoder { provider: kind.name(), parser: SseParser::default(), decoder }
    }

    /// Takes one chunk of the body, passing on what it completes; an error ends the stream.
    pub fn push(
        &mut self,
        chunk: &[u8],
        mut on_event: impl FnMut(StreamEvent),
    ) -> Result<(), ModelError> {
        for event in self.parser.push(chunk) {
            match self.decoder.event(event) {
                Ok(events) => events.into_iter().for_each(&mut on_event),
                Err(Ok(provider_error)) => return Err(self.dropped(shorten(&provider_error))),
                Err(Err(detail)) => return Err(self.malformed(detail)),
            }
        }
        match self.parser.refusal() {
            Some(reason) => Err(self.malformed(reason.to_owned())),
            None => Ok(()),
        }
    }

    /// What arrived so far.
    pub fn partial(&self) -> Turn {
        self.decoder.partial()
    }

    /// The body ended: the whole turn, or why it is not whole.
    pub fn finish(self) -> Result<Turn, ModelError> {
        if !self.decoder.finished() {
            return Err(
                self.dropped("the connection closed before the reply was complete".to_owned())
            );
        }
        let provider = self.provider;
        self.decoder.into_turn().map_err(|failed| {
            let (detail, partial) = *failed;
            ModelError::Malformed { provider, detail, partial: Box::new(partial) }
        })
    }

    /// The stream broke off (or the provider said why it stopped) after what arrived.
    pub fn dropped(&self, reason: String) -> ModelError {
        ModelError::Dropped { provider: self.provider, reason, partial: Box::new(self.partial()) }
    }

    fn malformed(&self, detail: String) -> ModelError {
        ModelError::Malformed { provider: self.provider, detail, partial: Box::new(self.partial()) }
    }
}

/// Decodes a whole streamed reply of `kind`, given as the chunks it arrived in, into the result
/// the live client ([`crate::Client::stream`]) gives for the same bytes: the turn, or the error
/// that ends the stream (`Malformed`, `Dropped`, each with what arrived). The end of `chunks` is
/// the connection closing. It is pure and offline: tests and fuzzing feed recorded or hostile
/// streams through the same parser and decoders as the live client. The only difference from the
/// live client is that no key is known here, so nothing is scrubbed.
pub fn decode_stream(kind: ProviderKind, chunks: &[&[u8]]) -> Result<Turn, ModelError> {
    let mut decoder = StreamDecoder::new(kind);
    for chunk in chunks {
        decoder.push(chunk, |_| {})?;
    }
    decoder.finish()
}
