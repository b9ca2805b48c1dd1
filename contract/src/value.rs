//! The dynamic value model: what an operation's arguments and result become
//! on the wire, and how Rust types map to and from it.

use std::fmt;

/// An argument or a result, independent of the problem's Rust types.
///
/// `Option::None` is [`Value::Nil`], `Some(x)` is just `x`; `Err(e)` is
/// [`Value::Err`] with the error's kind; tuples and `Vec`s are lists.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Unit,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Nil,
    List(Vec<Value>),
    Err(String),
    /// In an expectation only: the statement leaves this result open, any
    /// value (but not a panic) is accepted.
    Any,
}

impl Value {
    /// Whether `actual` satisfies this expectation.
    ///
    /// Floats compare with a relative tolerance of 1e-9, because two correct
    /// formulas may round differently in the last bits.
    pub fn accepts(&self, actual: &Value) -> bool {
        match (self, actual) {
            (Value::Any, _) => true,
            (Value::Float(a), Value::Float(b)) => a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()),
            (Value::List(a), Value::List(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.accepts(y)),
            (a, b) => a == b,
        }
    }
}

/// The transcript form: `5`, `"a"`, `None`, `true`, `()`, `[1, 2]`,
/// `err(released)`, `_`.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Unit => f.write_str("()"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => {
                if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e15 {
                    write!(f, "{x:.1}")
                } else {
                    write!(f, "{x}")
                }
            }
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Nil => f.write_str("None"),
            Value::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Value::Err(kind) => write!(f, "err({kind})"),
            Value::Any => f.write_str("_"),
        }
    }
}

/// A Rust type that can cross the wire as a [`Value`].
pub trait Wire: Sized {
    /// The canonical type name used in schemas: `i64`, `str`,
    /// `option<u64>`, `list<str>`, `result<u64>`, `tuple<str, i64>`.
    fn type_name() -> String;
    fn into_value(self) -> Value;
    fn from_value(value: Value) -> Result<Self, String>;
}

macro_rules! wire_int {
    ($($t:ty => $name:literal),*) => {$(
        impl Wire for $t {
            fn type_name() -> String {
                $name.to_string()
            }
            fn into_value(self) -> Value {
                Value::Int(self as i128)
            }
            fn from_value(value: Value) -> Result<Self, String> {
                match value {
                    Value::Int(i) => <$t>::try_from(i)
                        .map_err(|_| format!("{i} does not fit in {}", $name)),
                    other => Err(format!("expected {}, got {other}", $name)),
                }
            }
        }
    )*};
}

wire_int!(i32 => "i32", i64 => "i64", u8 => "u8", u32 => "u32", u64 => "u64", usize => "usize");

impl Wire for bool {
    fn type_name() -> String {
        "bool".into()
    }
    fn into_value(self) -> Value {
        Value::Bool(self)
    }
    fn from_value(value: Value) -> Result<Self, String> {
        match value {
            Value::Bool(b) => Ok(b),
            other => Err(format!("expected bool, got {other}")),
        }
    }
}

impl Wire for f64 {
    fn type_name() -> String {
        "f64".into()
    }
    fn into_value(self) -> Value {
        Value::Float(self)
    }
    fn from_value(value: Value) -> Result<Self, String> {
        match value {
            Value::Float(x) => Ok(x),
            Value::Int(i) => Ok(i as f64),
            other => Err(format!("expected f64, got {other}")),
        }
    }
}

impl Wire for String {
    fn type_name() -> String {
        "str".into()
    }
    fn into_value(self) -> Value {
        Value::Str(self)
    }
    fn from_value(value: Value) -> Result<Self, String> {
        match value {
            Value::Str(s) => Ok(s),
            other => Err(format!("expected str, got {other}")),
        }
    }
}

impl Wire for () {
    fn type_name() -> String {
        "unit".into()
    }
    fn into_value(self) -> Value {
        Value::Unit
    }
    fn from_value(value: Value) -> Result<Self, String> {
        match value {
            Value::Unit => Ok(()),
            other => Err(format!("expected (), got {other}")),
        }
    }
}

impl<T: Wire> Wire for Option<T> {
    fn type_name() -> String {
        format!("option<{}>", T::type_name())
    }
    fn into_value(self) -> Value {
        match self {
            Some(v) => v.into_value(),
            None => Value::Nil,
        }
    }
    fn from_value(value: Value) -> Result<Self, String> {
        match value {
            Value::Nil => Ok(None),
            other => T::from_value(other).map(Some),
        }
    }
}

impl<T: Wire> Wire for Vec<T> {
    fn type_name() -> String {
        format!("list<{}>", T::type_name())
    }
    fn into_value(self) -> Value {
        Value::List(self.into_iter().map(Wire::into_value).collect())
    }
    fn from_value(value: Value) -> Result<Self, String> {
        match value {
            Value::List(items) => items.into_iter().map(T::from_value).collect(),
            other => Err(format!("expected a list, got {other}")),
        }
    }
}

macro_rules! wire_tuple {
    ($($name:ident),+) => {
        impl<$($name: Wire),+> Wire for ($($name,)+) {
            fn type_name() -> String {
                let names: Vec<String> = vec![$($name::type_name()),+];
                format!("tuple<{}>", names.join(", "))
            }
            #[allow(non_snake_case)]
            fn into_value(self) -> Value {
                let ($($name,)+) = self;
                Value::List(vec![$($name.into_value()),+])
            }
            #[allow(non_snake_case)]
            fn from_value(value: Value) -> Result<Self, String> {
                match value {
                    Value::List(items) => {
                        let mut items = items.into_iter();
                        $(let $name = $name::from_value(
                            items.next().ok_or_else(|| "tuple too short".to_string())?,
                        )?;)+
                        if items.next().is_some() {
                            return Err("tuple too long".into());
                        }
                        Ok(($($name,)+))
                    }
                    other => Err(format!("expected a tuple, got {other}")),
                }
            }
        }
    };
}

wire_tuple!(A, B);
wire_tuple!(A, B, C);
wire_tuple!(A, B, C, D);

/// A problem's error type: each value names one of a fixed set of kinds.
/// Define one with [`crate::error_kinds!`].
pub trait ErrorKind {
    const ALL: &'static [&'static str];
    fn kind(&self) -> &'static str;
}

/// The error type of a problem whose operations cannot fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoError {}

impl ErrorKind for NoError {
    const ALL: &'static [&'static str] = &[];
    fn kind(&self) -> &'static str {
        match *self {}
    }
}

impl<T: Wire, E: ErrorKind> Wire for Result<T, E> {
    fn type_name() -> String {
        format!("result<{}>", T::type_name())
    }
    fn into_value(self) -> Value {
        match self {
            Ok(v) => v.into_value(),
            Err(e) => Value::Err(e.kind().to_string()),
        }
    }
    fn from_value(value: Value) -> Result<Self, String> {
        // Results are only ever returned by a solution, never passed to one.
        Err(format!("a result cannot be an argument (got {value})"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_and_result_flatten() {
        assert_eq!(Some(5u64).into_value(), Value::Int(5));
        assert_eq!(None::<u64>.into_value(), Value::Nil);
        assert_eq!(<Option<Vec<String>>>::type_name(), "option<list<str>>");
        assert_eq!(<(String, i64)>::type_name(), "tuple<str, i64>");
    }

    #[test]
    fn integer_range_is_checked() {
        assert!(u8::from_value(Value::Int(300)).is_err());
        assert_eq!(u64::from_value(Value::Int(7)), Ok(7));
        assert!(u64::from_value(Value::Int(-1)).is_err());
    }

    #[test]
    fn display_is_the_transcript_form() {
        let v = Value::List(vec![Value::Str("a\"b".into()), Value::Nil, Value::Err("x".into())]);
        assert_eq!(v.to_string(), r#"["a\"b", None, err(x)]"#);
        assert_eq!(Value::Float(2.0).to_string(), "2.0");
    }

    #[test]
    fn any_accepts_everything_and_floats_have_tolerance() {
        assert!(Value::Any.accepts(&Value::Int(3)));
        assert!(Value::Float(0.1 + 0.2).accepts(&Value::Float(0.3)));
        assert!(!Value::Float(0.3).accepts(&Value::Float(0.31)));
        assert!(!Value::Int(1).accepts(&Value::Nil));
    }
}
