//! A problem's operations as data, and the canonical text both sides hash.
//!
//! The harness builds a [`Schema`] from the problem's TOML; a solution's
//! library builds one from the Rust trait (via [`crate::contract!`]). Both
//! render the same canonical text, so the handshake compares one hash, and a
//! mismatch can be shown line by line.

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub ty: String,
}

impl Param {
    pub fn new(name: &str, ty: String) -> Self {
        Param { name: name.to_string(), ty }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpSig {
    pub name: String,
    pub params: Vec<Param>,
    pub ret: String,
    /// Called on one shared instance from several threads (`&self`, in the
    /// problem's shared trait): a concurrent gate's operation.
    pub shared: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema {
    pub problem: String,
    pub errors: Vec<String>,
    pub ctor: Vec<Param>,
    pub ops: Vec<OpSig>,
}

fn params_text(params: &[Param]) -> String {
    let parts: Vec<String> = params.iter().map(|p| format!("{}: {}", p.name, p.ty)).collect();
    parts.join(", ")
}

impl Schema {
    /// One line per fact, sorted where order carries no meaning:
    /// ```text
    /// problem versioned_kv
    /// errors conflict, finished
    /// new()
    /// get(key: str) -> option<i64>
    /// shared try_get(key: str) -> option<i64>
    /// ```
    /// A shared operation (a concurrent gate's) is marked `shared`, so a
    /// solution whose trait takes `&mut self` where the problem says `&self`
    /// is refused; problems without one hash as before.
    pub fn canonical_text(&self) -> String {
        let mut errors = self.errors.clone();
        errors.sort();
        let mut ops: Vec<String> = self
            .ops
            .iter()
            .map(|op| {
                let shared = if op.shared { "shared " } else { "" };
                format!("{shared}{}({}) -> {}", op.name, params_text(&op.params), op.ret)
            })
            .collect();
        ops.sort();
        let mut text =
            format!("problem {}\nerrors {}\nnew({})\n", self.problem, errors.join(", "), params_text(&self.ctor));
        for op in ops {
            text.push_str(&op);
            text.push('\n');
        }
        text
    }

    /// FNV-1a (64 bit) of the canonical text: small, dependency-free, and
    /// only ever compared for equality.
    pub fn hash(&self) -> u64 {
        fnv1a(self.canonical_text().as_bytes())
    }
}

pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_text_ignores_declaration_order() {
        let op = |n: &str| OpSig { name: n.into(), params: vec![], ret: "unit".into(), shared: false };
        let a = Schema {
            problem: "p".into(),
            errors: vec!["b".into(), "a".into()],
            ctor: vec![],
            ops: vec![op("x"), op("y")],
        };
        let mut b = a.clone();
        b.ops.reverse();
        b.errors.reverse();
        assert_eq!(a.hash(), b.hash());
        assert_eq!(a.canonical_text(), "problem p\nerrors a, b\nnew()\nx() -> unit\ny() -> unit\n");
    }
}
