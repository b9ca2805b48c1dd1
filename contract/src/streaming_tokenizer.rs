//! `streaming_tokenizer`: a tokenizer fed bytes in chunks that may split
//! anything: a string, an escape, a number, a multi-byte UTF-8 character.
//!
//! Implement [`StreamingTokenizer`] for your type and export it:
//!
//! ```ignore
//! use harness_contract::streaming_tokenizer::{Kind, Refusal, StreamingTokenizer, Token};
//! struct Lexer { /* ... */ }
//! impl StreamingTokenizer for Lexer { /* ... */ }
//! harness_contract::export!(streaming_tokenizer, Lexer);
//! ```
//!
//! You implement `feed` (bytes in, finished tokens out) and `close`. The
//! harness, not your code, decides where the chunks are cut: its operations
//! (`feed_split`, `every_split`, `feed_repeat`, ...) are written in this
//! module, in [`driver`], and call your `feed` once per chunk. Methods of
//! later gates have default bodies, so a solution compiles before it
//! implements them; calling one is judged `not_implemented`.

crate::error_kinds! {
    /// Why a call was refused outright. Errors in the stream itself are not
    /// refusals: they are [`Kind::Error`] tokens in the output.
    pub enum Refusal {
        /// `feed` or `close` after `close`.
        Closed = "closed",
    }
}

/// What a token is. On the wire a kind is its [`Kind::name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// One of `{ } [ ] : ,`; the text is the character.
    Punct,
    /// A quoted string; the text is its content with escapes decoded.
    Str,
    /// A bare token of the form `-?[0-9]+(\.[0-9]+)?`; the text as written.
    Number,
    /// Any other bare token; the text as written.
    Word,
    /// A fault in the stream; the text is the fault's [`Fault::name`].
    Error,
    /// Gate 4: input skipped after a fault; the text is the number of bytes.
    Gap,
    /// Truncation: follows a token cut short; the text is the token's size.
    Truncated,
}

impl Kind {
    /// `"punct"`, `"string"`, `"number"`, `"word"`, `"error"`, `"gap"` or
    /// `"truncated"`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Punct => "punct",
            Kind::Str => "string",
            Kind::Number => "number",
            Kind::Word => "word",
            Kind::Error => "error",
            Kind::Gap => "gap",
            Kind::Truncated => "truncated",
        }
    }
}

/// A fault in the stream, reported as a [`Kind::Error`] token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// A backslash in a string followed by anything but `"`, `\`, `n`, `t`.
    BadEscape,
    /// A string still open at a raw newline or at the end of the stream.
    UnterminatedString,
    /// Gate 2: a token spans more bytes than the limit.
    TokenTooLong,
    /// Nesting: an opener that would open more containers than the bound.
    TooDeep,
    /// Nesting: a closer that does not close the innermost open container.
    MismatchedClose,
    /// Nesting: the stream closed with containers still open.
    Unclosed,
}

impl Fault {
    /// `"bad_escape"`, `"unterminated_string"`, `"token_too_long"`,
    /// `"too_deep"`, `"mismatched_close"` or `"unclosed"`.
    pub fn name(self) -> &'static str {
        match self {
            Fault::BadEscape => "bad_escape",
            Fault::UnterminatedString => "unterminated_string",
            Fault::TokenTooLong => "token_too_long",
            Fault::TooDeep => "too_deep",
            Fault::MismatchedClose => "mismatched_close",
            Fault::Unclosed => "unclosed",
        }
    }
}

/// One emitted token. `line` and `column` (gate 3) are where it starts,
/// both counted from 1; until gate 3 leave them 0 (what [`Token::new`]
/// gives): earlier gates never look at them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Token {
    pub kind: Kind,
    pub text: String,
    pub line: u64,
    pub column: u64,
}

impl Token {
    /// A token at position 0:0.
    pub fn new(kind: Kind, text: impl Into<String>) -> Token {
        Token { kind, text: text.into(), line: 0, column: 0 }
    }

    /// An error token naming `fault`.
    pub fn error(fault: Fault) -> Token {
        Token::new(Kind::Error, fault.name())
    }

    /// Gate 4: a gap token for `bytes` skipped bytes.
    pub fn gap(bytes: u64) -> Token {
        Token::new(Kind::Gap, bytes.to_string())
    }

    /// The marker that follows a truncated token of `size` bytes.
    pub fn truncated(size: u64) -> Token {
        Token::new(Kind::Truncated, size.to_string())
    }

    /// The same token, positioned.
    pub fn at(self, line: u64, column: u64) -> Token {
        Token { line, column, ..self }
    }
}

// The candidate's trait is not on the wire (the driver below is): the
// macro gives it only its `not_implemented` defaults.
crate::contract! {
    /// The tokenizer. Read each gate's statement for the exact rules.
    pub trait StreamingTokenizer {
        /// A fresh tokenizer at the start of a stream.
        fn new() -> Self;

        // Gate 1: chunk boundaries.

        /// Consumes the next chunk of the stream (any number of bytes, possibly
        /// none) and returns the tokens it completed, in stream order.
        fn feed(&mut self, chunk: &[u8]) -> Result<Vec<Token>, Refusal>;
        /// Ends the stream: returns what the end completes (a pending bare
        /// token, or an error for an open string).
        fn close(&mut self) -> Result<Vec<Token>, Refusal>;

        // Gate 2: a bounded partial token.

        /// Sets the most bytes one token may span.
        fn set_limit(&mut self, max_token_bytes: usize);
        /// How many bytes of the stream the unfinished token spans so far.
        fn buffered(&self) -> usize;

        // Gate 3 adds no method: positions go into `Token::line` and
        // `Token::column`.

        // Gate 4: recovery.

        /// Whether a fault from now on skips to the next line (true) or breaks
        /// the stream (false, the default).
        fn set_recovery(&mut self, on: bool);

        // Nesting with a bound.

        /// Turns the nesting checks on (they are off in a new tokenizer) and
        /// sets the most containers that may be open at once.
        fn set_max_depth(&mut self, max_depth: usize);
        /// How many containers are open now (0 while the checks are off).
        fn depth(&self) -> usize;

        // Truncate and flag.

        /// Whether a token that passes the limit is truncated and flagged
        /// (true) or a `token_too_long` fault (false, the default).
        fn set_truncate(&mut self, on: bool);
    }
}

/// The operations the harness calls. They are written here, once, for every
/// solution: each drives your [`StreamingTokenizer`], cutting its input into
/// the chunks the harness chose. Nothing in here is yours to implement.
#[doc(hidden)]
pub mod driver {
    use super::{Refusal, StreamingTokenizer, Token};

    /// A token as gates 1, 2 and 4 show it: `(kind, text)`.
    pub type Shown = (String, String);
    /// A token as gate 3 shows it: `(kind, text, line, column)`.
    pub type Placed = (String, String, u64, u64);

    fn shown(tokens: Vec<Token>) -> Vec<Shown> {
        tokens.into_iter().map(|t| (t.kind.name().to_string(), t.text)).collect()
    }

    fn placed(tokens: Vec<Token>) -> Vec<Placed> {
        tokens.into_iter().map(|t| (t.kind.name().to_string(), t.text, t.line, t.column)).collect()
    }

    /// The chunks of `bytes` cut at `cuts`: every distinct offset from 0 to
    /// the length is a cut; offsets past the end are ignored. A cut at 0 or
    /// at the end gives an empty first or last chunk.
    pub fn pieces<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
        let mut cuts: Vec<usize> = cuts.iter().copied().filter(|&c| c <= bytes.len()).collect();
        cuts.sort_unstable();
        cuts.dedup();
        let mut bounds = Vec::with_capacity(cuts.len() + 2);
        bounds.push(0);
        bounds.extend(cuts);
        bounds.push(bytes.len());
        bounds.windows(2).map(|w| &bytes[w[0]..w[1]]).collect()
    }

    /// Feeds `chunks` in order; the tokens of all of them, or the first
    /// refusal.
    fn feed_all<'a, T: StreamingTokenizer>(
        t: &mut T,
        chunks: impl IntoIterator<Item = &'a [u8]>,
    ) -> Result<Vec<Token>, Refusal> {
        let mut out = Vec::new();
        for chunk in chunks {
            out.extend(t.feed(chunk)?);
        }
        Ok(out)
    }

    /// What one fresh tokenizer makes of `chunks` followed by `close()`,
    /// refusals included, for comparing chunkings.
    fn transcript<'a, T: StreamingTokenizer>(
        chunks: impl IntoIterator<Item = &'a [u8]>,
    ) -> Vec<Result<Shown, Refusal>> {
        let mut t = T::new();
        let mut out = Vec::new();
        for chunk in chunks {
            match t.feed(chunk) {
                Ok(tokens) => out.extend(shown(tokens).into_iter().map(Ok)),
                Err(e) => out.push(Err(e)),
            }
        }
        match t.close() {
            Ok(tokens) => out.extend(shown(tokens).into_iter().map(Ok)),
            Err(e) => out.push(Err(e)),
        }
        out
    }

    crate::contract! {
        problem = "streaming_tokenizer";
        errors = Refusal;

        /// The operations on the wire.
        pub trait Driver {
            fn new() -> Self;

            // Gate 1: chunk boundaries.
            fn feed(&mut self, text: String) -> Result<Vec<Shown>, Refusal>;
            fn feed_split(&mut self, text: String, cuts: Vec<usize>) -> Result<Vec<Shown>, Refusal>;
            fn close(&mut self) -> Result<Vec<Shown>, Refusal>;
            fn restart(&mut self);
            fn every_split(&mut self, text: String) -> Vec<String>;

            // Gate 2: a bounded partial token.
            fn set_limit(&mut self, max_token_bytes: usize);
            fn buffered(&mut self) -> usize;
            fn feed_repeat(&mut self, text: String, times: usize, chunk_bytes: usize) -> Result<Vec<Shown>, Refusal>;

            // Gate 3: positions.
            fn feed_at(&mut self, text: String, cuts: Vec<usize>) -> Result<Vec<Placed>, Refusal>;
            fn close_at(&mut self) -> Result<Vec<Placed>, Refusal>;

            // Gate 4: recovery.
            fn set_recovery(&mut self, on: bool);

            // Gate 5: nesting with a bound.
            fn set_max_depth(&mut self, max_depth: usize);
            fn depth(&mut self) -> usize;

            // Gate 6: truncate and flag.
            fn set_truncate(&mut self, on: bool);
        }
    }

    impl<T: StreamingTokenizer> Driver for T {
        fn new() -> Self {
            <T as StreamingTokenizer>::new()
        }

        fn feed(&mut self, text: String) -> Result<Vec<Shown>, Refusal> {
            StreamingTokenizer::feed(self, text.as_bytes()).map(shown)
        }

        fn feed_split(&mut self, text: String, cuts: Vec<usize>) -> Result<Vec<Shown>, Refusal> {
            feed_all(self, pieces(text.as_bytes(), &cuts)).map(shown)
        }

        fn close(&mut self) -> Result<Vec<Shown>, Refusal> {
            StreamingTokenizer::close(self).map(shown)
        }

        fn restart(&mut self) {
            *self = <T as StreamingTokenizer>::new();
        }

        fn every_split(&mut self, text: String) -> Vec<String> {
            let bytes = text.as_bytes();
            let whole = transcript::<T>([bytes]);
            let mut differ = Vec::new();
            for k in 0..=bytes.len() {
                if transcript::<T>([&bytes[..k], &bytes[k..]]) != whole {
                    differ.push(format!("split at {k}"));
                }
            }
            if transcript::<T>(bytes.chunks(1)) != whole {
                differ.push("one byte at a time".to_string());
            }
            differ
        }

        fn set_limit(&mut self, max_token_bytes: usize) {
            StreamingTokenizer::set_limit(self, max_token_bytes)
        }

        fn buffered(&mut self) -> usize {
            StreamingTokenizer::buffered(self)
        }

        fn feed_repeat(&mut self, text: String, times: usize, chunk_bytes: usize) -> Result<Vec<Shown>, Refusal> {
            let unit = text.as_bytes();
            let total = unit.len().saturating_mul(times);
            if total == 0 {
                return StreamingTokenizer::feed(self, &[]).map(shown);
            }
            // The stream is produced chunk by chunk, never built whole, so a
            // long stream costs the harness one chunk of memory.
            let size = chunk_bytes.clamp(1, total);
            let mut chunk = Vec::with_capacity(size);
            let mut source = unit.iter().copied().cycle().take(total);
            let mut out = Vec::new();
            loop {
                chunk.clear();
                chunk.extend(source.by_ref().take(size));
                if chunk.is_empty() {
                    break;
                }
                out.extend(StreamingTokenizer::feed(self, &chunk)?);
            }
            Ok(shown(out))
        }

        fn feed_at(&mut self, text: String, cuts: Vec<usize>) -> Result<Vec<Placed>, Refusal> {
            feed_all(self, pieces(text.as_bytes(), &cuts)).map(placed)
        }

        fn close_at(&mut self) -> Result<Vec<Placed>, Refusal> {
            StreamingTokenizer::close(self).map(placed)
        }

        fn set_recovery(&mut self, on: bool) {
            StreamingTokenizer::set_recovery(self, on)
        }

        fn set_max_depth(&mut self, max_depth: usize) {
            StreamingTokenizer::set_max_depth(self, max_depth)
        }

        fn depth(&mut self) -> usize {
            StreamingTokenizer::depth(self)
        }

        fn set_truncate(&mut self, on: bool) {
            StreamingTokenizer::set_truncate(self, on)
        }
    }

    #[cfg(test)]
    mod tests {
        use super::pieces;

        #[test]
        fn cuts_are_sorted_deduplicated_and_clipped() {
            let b = b"abcdef";
            assert_eq!(pieces(b, &[]), vec![&b"abcdef"[..]]);
            assert_eq!(pieces(b, &[4, 2, 4, 99]), vec![&b"ab"[..], b"cd", b"ef"]);
            assert_eq!(pieces(b, &[0, 6]), vec![&b""[..], b"abcdef", b""]);
        }
    }
}

pub use driver::{HarnessSharedOps, SHARED_OPS, dispatch, dispatch_shared, schema};
