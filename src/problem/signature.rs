//! A problem's typed operations: what scripts, generators and `replay` are
//! checked against, and the schema both sides of the handshake hash.

use std::collections::{BTreeMap, BTreeSet};

use harness_contract::{OpSig, Param, Schema};

use crate::problem::ty::Ty;

/// Whether gate `gate`, which builds on `requires`, may use an operation
/// that gate `op_gate` introduces. (Here, not in `model`, so that `scale`,
/// which `model` imports, can ask it too without an import circle.)
pub(crate) fn may_use(requires: &BTreeSet<usize>, gate: usize, op_gate: usize) -> bool {
    op_gate == gate || requires.contains(&op_gate)
}

/// One operation's signature.
#[derive(Clone, Debug)]
pub struct OpDef {
    pub gate: usize,
    pub params: Vec<(String, Ty)>,
    pub ret: Ty,
    /// The contract runs this op on a thread with a stack of this many KiB
    /// (`[stack_kib]` in problem.toml): a crash during it is a stack overflow.
    pub stack_kib: Option<u32>,
    /// A concurrent gate's operation: `&self`, in the problem's shared trait.
    pub shared: bool,
}

/// The typed operations of a problem: what scripts, generators and
/// `replay` are checked against.
#[derive(Clone, Debug)]
pub struct Signature {
    pub problem: String,
    pub ctor: Vec<(String, Ty)>,
    pub ops: BTreeMap<String, OpDef>,
    pub errors: Vec<String>,
}

impl Signature {
    /// Parameters and result type of `op` (`new` is the constructor).
    pub fn lookup(&self, op: &str) -> Option<(&[(String, Ty)], &Ty)> {
        const UNIT: &Ty = &Ty::Unit;
        if op == "new" {
            return Some((&self.ctor, UNIT));
        }
        self.ops.get(op).map(|d| (d.params.as_slice(), &d.ret))
    }

    /// The ops the contract runs on a small stack of their own, with its
    /// size in KiB.
    pub fn small_stacks(&self) -> Vec<(String, u32)> {
        self.ops.iter().filter_map(|(name, d)| d.stack_kib.map(|k| (name.clone(), k))).collect()
    }

    pub fn op_names(&self) -> String {
        let names: Vec<&str> = self.ops.keys().map(String::as_str).collect();
        names.join(", ")
    }

    pub fn ctor_template(&self) -> String {
        let names: Vec<&str> = self.ctor.iter().map(|(n, _)| n.as_str()).collect();
        format!("new({})", names.join(", "))
    }

    /// The schema both sides of the handshake hash.
    pub fn schema(&self) -> Schema {
        let params = |ps: &[(String, Ty)]| ps.iter().map(|(n, t)| Param::new(n, t.to_string())).collect();
        Schema {
            problem: self.problem.clone(),
            errors: self.errors.clone(),
            ctor: params(&self.ctor),
            ops: self
                .ops
                .iter()
                .map(|(name, d)| OpSig {
                    name: name.clone(),
                    params: params(&d.params),
                    ret: d.ret.to_string(),
                    shared: d.shared,
                })
                .collect(),
        }
    }

    #[cfg(test)]
    pub fn parse_for_tests(ctor: &[(&str, &str)], ops: &[(&str, &str, &str)], errors: &[&str]) -> Self {
        Signature {
            problem: "test".into(),
            ctor: ctor.iter().map(|(n, t)| (n.to_string(), t.parse().unwrap())).collect(),
            ops: ops
                .iter()
                .map(|(n, a, r)| {
                    (
                        n.to_string(),
                        OpDef {
                            gate: 1,
                            params: parse_params(a).unwrap(),
                            ret: r.parse().unwrap(),
                            stack_kib: None,
                            shared: false,
                        },
                    )
                })
                .collect(),
            errors: errors.iter().map(|e| e.to_string()).collect(),
        }
    }
}

/// `"key: str, value: i64"` → `[("key", str), ("value", i64)]`.
#[cfg(test)]
pub(crate) fn parse_params(text: &str) -> std::result::Result<Vec<(String, Ty)>, String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let mut pieces = Vec::new();
    for (i, c) in text.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ',' if depth == 0 => {
                pieces.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    pieces.push(&text[start..]);
    for piece in pieces {
        if piece.trim().is_empty() {
            continue;
        }
        let (name, ty) =
            piece.split_once(':').ok_or_else(|| format!("expected `name: type`, found `{}`", piece.trim()))?;
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return Err(format!("`{name}` is not a parameter name"));
        }
        out.push((name.to_string(), ty.parse::<Ty>()?));
    }
    Ok(out)
}
