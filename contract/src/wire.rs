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

use crate::Value;

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
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0 }
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
        Ok(match self.u8()? {
            T_UNIT => Value::Unit,
            T_BOOL => Value::Bool(self.u8()? != 0),
            T_INT => Value::Int(i128::from_le_bytes(self.take(16)?.try_into().unwrap())),
            T_FLOAT => Value::Float(f64::from_bits(self.u64()?)),
            T_STR => Value::Str(self.str()?),
            T_NIL => Value::Nil,
            T_LIST => {
                let n = self.u32()? as usize;
                // Cap the pre-allocation: a corrupt count must not allocate.
                let mut items = Vec::with_capacity(n.min(1024));
                for _ in 0..n {
                    items.push(self.value()?);
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
}
