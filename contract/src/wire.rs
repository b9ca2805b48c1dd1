//! The byte format of one call across the library boundary.
//!
//! A request is `op: str, n: u32, args: value*`; an outcome is one tag byte
//! followed by its fields. Integers are little-endian; a `str` is a `u32`
//! length and UTF-8 bytes. A value is a tag byte and its payload:
//!
//! | tag | value | payload |
//! |---|---|---|
//! | 0 | unit | — |
//! | 1 | bool | u8 |
//! | 2 | int | i128 |
//! | 3 | float | f64 bits |
//! | 4 | str | str |
//! | 5 | nil (`None`) | — |
//! | 6 | list | u32 count, values |
//! | 7 | err | str (the kind) |
//! | 8 | any | — |
//!
//! The harness decodes what a candidate's process sends it, so decoding
//! never trusts the data: every read is bounds-checked, a list may nest at
//! most [`MAX_DEPTH`] deep (the decoder recurses once per level, so a forged
//! list nested a million deep is an error, not a stack overflow), and the
//! values one [`Reader`] may produce are counted against a budget, so a few
//! bytes on the wire cannot become gigabytes in memory.

use crate::Value;

/// Deepest list nesting accepted. Problem types nest three or four deep
/// (`option<list<tuple<str, i64>>>`); anything near this is forged.
pub const MAX_DEPTH: usize = 64;

/// Values one [`Reader`] decodes by default: each costs tens of bytes in
/// memory however few bytes it took on the wire.
pub const DEFAULT_VALUE_BUDGET: usize = 1 << 20;

/// What one call produced.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The operation returned.
    Returned(Value),
    /// The operation panicked.
    Panicked { message: String, location: String },
    /// The operation is not written yet (`todo!()`, or a default trait body).
    NotImplemented { op: String },
    /// The request itself was wrong: unknown op, wrong arguments, no instance.
    Rejected(String),
}

const T_UNIT: u8 = 0;
const T_BOOL: u8 = 1;
const T_INT: u8 = 2;
const T_FLOAT: u8 = 3;
const T_STR: u8 = 4;
const T_NIL: u8 = 5;
const T_LIST: u8 = 6;
const T_ERR: u8 = 7;
const T_ANY: u8 = 8;

const O_RETURNED: u8 = b'R';
const O_PANICKED: u8 = b'P';
const O_NOT_IMPLEMENTED: u8 = b'N';
const O_REJECTED: u8 = b'X';

/// Appends wire data to a byte vector.
#[derive(Default)]
pub struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.buf.extend_from_slice(s.as_bytes());
    }
    pub fn value(&mut self, v: &Value) {
        match v {
            Value::Unit => self.u8(T_UNIT),
            Value::Bool(b) => {
                self.u8(T_BOOL);
                self.u8(*b as u8);
            }
            Value::Int(i) => {
                self.u8(T_INT);
                self.buf.extend_from_slice(&i.to_le_bytes());
            }
            Value::Float(x) => {
                self.u8(T_FLOAT);
                self.u64(x.to_bits());
            }
            Value::Str(s) => {
                self.u8(T_STR);
                self.str(s);
            }
            Value::Nil => self.u8(T_NIL),
            Value::List(items) => {
                self.u8(T_LIST);
                self.u32(items.len() as u32);
                for item in items {
                    self.value(item);
                }
            }
            Value::Err(kind) => {
                self.u8(T_ERR);
                self.str(kind);
            }
            Value::Any => self.u8(T_ANY),
        }
    }
}

/// Reads wire data; every read fails cleanly on truncated or bad input.
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    /// Values this reader may still decode.
    budget: usize,
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0, budget: DEFAULT_VALUE_BUDGET }
    }
    /// A reader that decodes at most `budget` values in all.
    pub fn with_budget(data: &'a [u8], budget: usize) -> Self {
        Reader { data, pos: 0, budget }
    }
    /// Values this reader may still decode.
    pub fn budget(&self) -> usize {
        self.budget
    }
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }
    /// The next `n` raw bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len());
        let end = end.ok_or_else(|| "truncated message".to_string())?;
        let bytes = &self.data[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }
    pub fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    pub fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    pub fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    pub fn str(&mut self) -> Result<String, String> {
        let n = self.u32()? as usize;
        let bytes = self.take(n)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| "invalid UTF-8 in message".to_string())
    }
    pub fn value(&mut self) -> Result<Value, String> {
        self.value_at(0)
    }

    /// Recursion is bounded by [`MAX_DEPTH`], checked before descending.
    fn value_at(&mut self, depth: usize) -> Result<Value, String> {
        self.budget = self.budget.checked_sub(1).ok_or_else(|| "too many values in one message".to_string())?;
        Ok(match self.u8()? {
            T_UNIT => Value::Unit,
            T_BOOL => Value::Bool(self.u8()? != 0),
            T_INT => Value::Int(i128::from_le_bytes(self.take(16)?.try_into().unwrap())),
            T_FLOAT => Value::Float(f64::from_bits(self.u64()?)),
            T_STR => Value::Str(self.str()?),
            T_NIL => Value::Nil,
            T_LIST => {
                if depth >= MAX_DEPTH {
                    return Err(format!("lists nested more than {MAX_DEPTH} deep"));
                }
                let n = self.u32()? as usize;
                // Every item takes at least one byte: a count beyond what is
                // left is corrupt, and must not allocate.
                if n > self.data.len() - self.pos {
                    return Err("truncated message".to_string());
                }
                let mut items = Vec::with_capacity(n.min(1024));
                for _ in 0..n {
                    items.push(self.value_at(depth + 1)?);
                }
                Value::List(items)
            }
            T_ERR => Value::Err(self.str()?),
            T_ANY => Value::Any,
            tag => return Err(format!("unknown value tag {tag}")),
        })
    }
}

pub fn encode_request(op: &str, args: &[Value]) -> Vec<u8> {
    let mut w = Writer::default();
    w.str(op);
    w.u32(args.len() as u32);
    for a in args {
        w.value(a);
    }
    w.buf
}

pub fn decode_request(data: &[u8]) -> Result<(String, Vec<Value>), String> {
    let mut r = Reader::new(data);
    let op = r.str()?;
    let n = r.u32()? as usize;
    let mut args = Vec::with_capacity(n.min(64));
    for _ in 0..n {
        args.push(r.value()?);
    }
    Ok((op, args))
}

pub fn encode_outcome(w: &mut Writer, outcome: &Outcome) {
    match outcome {
        Outcome::Returned(v) => {
            w.u8(O_RETURNED);
            w.value(v);
        }
        Outcome::Panicked { message, location } => {
            w.u8(O_PANICKED);
            w.str(message);
            w.str(location);
        }
        Outcome::NotImplemented { op } => {
            w.u8(O_NOT_IMPLEMENTED);
            w.str(op);
        }
        Outcome::Rejected(why) => {
            w.u8(O_REJECTED);
            w.str(why);
        }
    }
}

pub fn decode_outcome(r: &mut Reader<'_>) -> Result<Outcome, String> {
    Ok(match r.u8()? {
        O_RETURNED => Outcome::Returned(r.value()?),
        O_PANICKED => Outcome::Panicked { message: r.str()?, location: r.str()? },
        O_NOT_IMPLEMENTED => Outcome::NotImplemented { op: r.str()? },
        O_REJECTED => Outcome::Rejected(r.str()?),
        tag => return Err(format!("unknown outcome tag {tag}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip() {
        let v = Value::List(vec![
            Value::Unit,
            Value::Bool(true),
            Value::Int(-(1 << 100)),
            Value::Float(1.5),
            Value::Str("héllo".into()),
            Value::Nil,
            Value::Err("conflict".into()),
            Value::Any,
        ]);
        let mut w = Writer::default();
        w.value(&v);
        assert_eq!(Reader::new(&w.buf).value().unwrap(), v);
    }

    #[test]
    fn requests_and_outcomes_round_trip() {
        let req = encode_request("put", &[Value::Str("a".into()), Value::Int(3)]);
        assert_eq!(decode_request(&req).unwrap(), ("put".to_string(), vec![Value::Str("a".into()), Value::Int(3)]));
        let o = Outcome::Panicked { message: "boom".into(), location: "src/lib.rs:3:5".into() };
        let mut w = Writer::default();
        encode_outcome(&mut w, &o);
        assert_eq!(decode_outcome(&mut Reader::new(&w.buf)).unwrap(), o);
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic() {
        let req = encode_request("put", &[Value::Str("abc".into())]);
        for cut in 0..req.len() {
            assert!(decode_request(&req[..cut]).is_err(), "cut at {cut}");
        }
        assert!(Reader::new(&[T_LIST, 255, 255, 255, 255]).value().is_err());
    }

    /// A list inside a list, `depth` deep, around a unit.
    fn nested(depth: usize) -> Vec<u8> {
        let mut data = Vec::with_capacity(depth * 5 + 1);
        for _ in 0..depth {
            data.extend_from_slice(&[T_LIST, 1, 0, 0, 0]);
        }
        data.push(T_UNIT);
        data
    }

    #[test]
    fn a_list_nested_a_million_deep_is_an_error_not_a_stack_overflow() {
        let err = Reader::new(&nested(1_000_000)).value().unwrap_err();
        assert!(err.contains("nested more than 64 deep"), "{err}");
        let mut w = Writer::default();
        w.u8(O_RETURNED);
        w.buf.extend_from_slice(&nested(1_000_000));
        assert!(decode_outcome(&mut Reader::new(&w.buf)).is_err());
        // The deepest accepted nesting still decodes.
        assert!(Reader::new(&nested(MAX_DEPTH)).value().is_ok());
        assert!(Reader::new(&nested(MAX_DEPTH + 1)).value().is_err());
    }

    #[test]
    fn a_count_beyond_the_message_does_not_allocate() {
        // Claims four billion items, carries one.
        let err = Reader::new(&[T_LIST, 255, 255, 255, 255, T_UNIT]).value().unwrap_err();
        assert_eq!(err, "truncated message");
        let err = Reader::new(&[T_STR, 255, 255, 255, 255, b'a']).value().unwrap_err();
        assert_eq!(err, "truncated message");
    }

    #[test]
    fn the_value_budget_bounds_what_few_bytes_can_become() {
        // A million units: a megabyte on the wire, tens of megabytes decoded.
        let mut data = vec![T_LIST];
        data.extend_from_slice(&1_000_000u32.to_le_bytes());
        data.extend(std::iter::repeat_n(T_UNIT, 1_000_000));
        let err = Reader::with_budget(&data, 1000).value().unwrap_err();
        assert!(err.contains("too many values"), "{err}");
        let mut r = Reader::with_budget(&data, 2_000_000);
        assert!(r.value().is_ok());
        assert_eq!(r.budget(), 2_000_000 - 1_000_001);
    }

    #[test]
    fn truncated_outcomes_are_errors() {
        let o = Outcome::Returned(Value::List(vec![Value::Str("abc".into()), Value::Int(5)]));
        let mut w = Writer::default();
        encode_outcome(&mut w, &o);
        for cut in 0..w.buf.len() {
            assert!(decode_outcome(&mut Reader::new(&w.buf[..cut])).is_err(), "cut at {cut}");
        }
    }
}
