//! The contract between the harness and a candidate's solution.
//!
//! A solution is a `cdylib` that implements one problem's trait (for example
//! [`versioned_kv::VersionedKv`]) and ends with one line:
//!
//! ```ignore
//! harness_contract::export!(versioned_kv, MyStore);
//! ```
//!
//! Rust has no stable ABI, so nothing but bytes crosses the library boundary:
//! the macro generates a handful of `extern "C"` functions that take an
//! encoded operation ([`wire`]), run it on the candidate's value inside
//! `catch_unwind`, and hand back an encoded outcome in a buffer that only the
//! library frees. A handshake carries [`ABI_VERSION`] and a hash of the
//! problem's schema, so a library built against another contract is refused
//! with a message instead of misbehaving.
//!
//! This crate has no dependencies on purpose: every candidate build compiles
//! it, and a registry dependency would make the first build of a practice
//! session take seconds instead of a fraction of one.

pub mod measure;
pub mod runtime;
pub mod schema;
pub mod value;
pub mod wire;

pub use runtime::{Handshake, NotImplemented, Oracle, RawBuf, not_implemented};
pub use schema::{OpSig, Param, Schema};
pub use value::{ErrorKind, NoError, Value, Wire};

/// Version of the byte protocol between harness and library. Bump it on any
/// change to [`wire`] or to the exported functions.
pub const ABI_VERSION: u32 = 1;

#[cfg(feature = "bounded_pipeline")]
pub mod bounded_pipeline;
#[cfg(feature = "dedupe")]
pub mod dedupe;
#[cfg(feature = "lru_cache")]
pub mod lru_cache;
#[cfg(feature = "rate_limiter")]
pub mod rate_limiter;
#[cfg(feature = "scheduler")]
pub mod scheduler;
#[cfg(feature = "spreadsheet")]
pub mod spreadsheet;
#[cfg(feature = "streaming_tokenizer")]
pub mod streaming_tokenizer;
#[cfg(feature = "token_stream_differ")]
pub mod token_stream_differ;
#[cfg(feature = "versioned_kv")]
pub mod versioned_kv;
#[cfg(feature = "wal")]
pub mod wal;

/// Declares a problem's trait, once: generates the trait itself (every
/// method but `new` with a default body that reports `not_implemented`, so
/// a solution compiles before it implements later gates), the optional
/// shared trait of a concurrent gate, `schema()` and `dispatch()`, used by
/// [`export!`].
///
/// ```ignore
/// harness_contract::contract! {
///     problem = "tally";
///     errors = harness_contract::NoError;
///     /// A running total.
///     pub trait Tally {
///         /// A total of 0.
///         fn new() -> Self;
///
///         // Gate 1: a running total.
///
///         /// Adds `n`; returns the new total.
///         fn add(&mut self, n: i64) -> i64;
///     }
///     // With a concurrent gate, its operations through `&self`:
///     // pub trait SharedTally: Send + Sync { fn shared_add(&self, n: i64) -> i64; }
/// }
/// ```
///
/// The doc comments are the trait's, what a candidate sees on hover; the
/// operations on the wire are the trait's methods with their parameter
/// names, in any order. A method given a body is one the contract provides
/// (an operation built on the others); the rest report `not_implemented`
/// until a solution implements them. The harness reads this declaration's
/// text when it loads the problem: a `// Gate N` comment before a group of
/// methods says which gate introduces them.
///
/// A module that must run each call itself (wal, whose store lives on a
/// disk the harness crashes) says `dispatch = custom;` after `errors`. Then
/// the trait's constructor may take anything (it is not on the wire), a
/// `harness { ... }` block after the trait declares the wire's constructor
/// and the operations the module adds around the trait's, and the macro
/// generates the trait and `schema()` only: the module writes `dispatch()`.
/// A trait given alone, with no `problem`, is a candidate's trait that is
/// not on the wire (the streaming tokenizer's): the macro gives it only its
/// defaults.
#[macro_export]
macro_rules! contract {
    (
        problem = $problem:literal;
        errors = $Err:ty;
        $(#[$tattr:meta])*
        pub trait $Trait:ident {
            $(#[$nattr:meta])*
            fn new($($cp:ident : $ct:ty),* $(,)?) -> Self;
            $(
                $(#[$oattr:meta])*
                fn $op:ident ( $($params:tt)* ) $(-> $ret:ty)? $($body:block)? $(;)?
            )*
        }
        $(
            $(#[$sattr:meta])*
            pub trait $STrait:ident: Send + Sync {
                $(
                    $(#[$soattr:meta])*
                    fn $sop:ident ( $($sparams:tt)* ) $(-> $sret:ty)? $($sbody:block)? $(;)?
                )*
            }
        )?
    ) => {
        $crate::contract!(@trait [$(#[$tattr])*] $Trait [$(#[$nattr])*] new ($($cp: $ct),*);
            $( [$(#[$oattr])*] $op ($($params)*) ($($ret)?) ($($body)?); )*);

        $(
            $(#[$sattr])*
            #[allow(unused_variables)]
            pub trait $STrait: Send + Sync {
                $(
                    $(#[$soattr])*
                    fn $sop($($sparams)*) $(-> $sret)? {
                        $crate::contract!(@body $sop $($sbody)?)
                    }
                )*
            }
        )?

        $crate::contract!(@shared $( $STrait; $( fn $sop ( $($sparams)* ) ($($sret)?); )* )?);

        /// The operations of this problem as the harness sees them.
        pub fn schema() -> $crate::Schema {
            let mut ops = ::std::vec![$( $crate::contract!(@sig false, $op, ($($ret)?); $($params)*) ),*];
            ops.extend(shared_schema());
            $crate::contract!(@schema $problem, $Err, ($($cp: $ct),*), ops)
        }

        /// Runs one operation on `instance`; `new` (re)creates it.
        pub fn dispatch<T: $Trait>(
            instance: &mut ::std::option::Option<T>,
            op: &str,
            args: ::std::vec::Vec<$crate::Value>,
        ) -> ::std::result::Result<$crate::Value, $crate::runtime::CallError> {
            #[allow(unused_mut)]
            let mut args = $crate::runtime::Args::new(args);
            match op {
                "new" => {
                    $(let $cp: $ct = args.next(stringify!($cp))?;)*
                    args.finish()?;
                    *instance = ::std::option::Option::Some(<T as $Trait>::new($($cp),*));
                    ::std::result::Result::Ok($crate::Value::Unit)
                }
                $(
                    stringify!($op) => $crate::contract!(@call as_mut, T, $Trait, instance, args, $op; $($params)*),
                )*
                other => ::std::result::Result::Err($crate::runtime::CallError::UnknownOp(
                    ::std::string::String::from(other),
                )),
            }
        }
    };
    // A module that writes its own dispatch: the trait, the harness's
    // operations around it, and `schema()` from both.
    (
        problem = $problem:literal;
        errors = $Err:ty;
        dispatch = custom;
        $(#[$tattr:meta])*
        pub trait $Trait:ident {
            $(#[$nattr:meta])*
            fn $ctor:ident ($($cp:ident : $ct:ty),* $(,)?) -> Self;
            $(
                $(#[$oattr:meta])*
                fn $op:ident ( $($params:tt)* ) $(-> $ret:ty)? $($body:block)? $(;)?
            )*
        }
        $(#[$hattr:meta])*
        harness {
            $(#[$wattr:meta])*
            fn new($($wp:ident : $wt:ty),* $(,)?) -> Self;
            $(
                $(#[$hoattr:meta])*
                fn $hop:ident ( $($hparams:tt)* ) $(-> $hret:ty)?;
            )*
        }
    ) => {
        $crate::contract!(@trait [$(#[$tattr])*] $Trait [$(#[$nattr])*] $ctor ($($cp: $ct),*);
            $( [$(#[$oattr])*] $op ($($params)*) ($($ret)?) ($($body)?); )*);

        /// The operations of this problem as the harness sees them: the
        /// trait's and the harness's around them.
        pub fn schema() -> $crate::Schema {
            let ops = ::std::vec![
                $( $crate::contract!(@sig false, $op, ($($ret)?); $($params)*), )*
                $( $crate::contract!(@sig false, $hop, ($($hret)?); $($hparams)*), )*
            ];
            $crate::contract!(@schema $problem, $Err, ($($wp: $wt),*), ops)
        }
    };
    // A candidate's trait that is not itself on the wire (the streaming
    // tokenizer's, which its wire driver calls): only the trait, with its
    // defaults.
    (
        $(#[$tattr:meta])*
        pub trait $Trait:ident {
            $(#[$nattr:meta])*
            fn $ctor:ident ($($cp:ident : $ct:ty),* $(,)?) -> Self;
            $(
                $(#[$oattr:meta])*
                fn $op:ident ( $($params:tt)* ) $(-> $ret:ty)? $($body:block)? $(;)?
            )*
        }
    ) => {
        $crate::contract!(@trait [$(#[$tattr])*] $Trait [$(#[$nattr])*] $ctor ($($cp: $ct),*);
            $( [$(#[$oattr])*] $op ($($params)*) ($($ret)?) ($($body)?); )*);
    };
    // The candidate's trait: every method but the constructor defaults to
    // `not_implemented` (or to the body the declaration gives).
    (@trait [$(#[$tattr:meta])*] $Trait:ident [$(#[$nattr:meta])*] $ctor:ident ($($cp:ident : $ct:ty),*);
        $( [$(#[$oattr:meta])*] $op:ident ($($params:tt)*) ($($ret:ty)?) ($($body:block)?); )*) => {
        $(#[$tattr])*
        #[allow(unused_variables)]
        pub trait $Trait {
            $(#[$nattr])*
            fn $ctor($($cp: $ct),*) -> Self
            where
                Self: Sized;
            $(
                $(#[$oattr])*
                fn $op($($params)*) $(-> $ret)? {
                    $crate::contract!(@body $op $($body)?)
                }
            )*
        }
    };
    // A schema from its parts.
    (@schema $problem:literal, $Err:ty, ($($cp:ident : $ct:ty),*), $ops:expr) => {
        $crate::Schema {
            problem: ::std::string::String::from($problem),
            errors: <$Err as $crate::ErrorKind>::ALL
                .iter()
                .map(|k| ::std::string::String::from(*k))
                .collect(),
            ctor: ::std::vec![$($crate::Param::new(stringify!($cp), <$ct as $crate::Wire>::type_name())),*],
            ops: $ops,
        }
    };
    // One operation's call: its arguments taken from `args` by name, the
    // method called on the instance, the result encoded.
    (@call $get:ident, $T:ident, $Trait:ident, $instance:ident, $args:ident, $op:ident;
        & $(mut)? self $(, $p:ident : $t:ty)* $(,)?) => {{
        let this = $instance.$get().ok_or($crate::runtime::CallError::NoInstance)?;
        $(let $p: $t = $args.next(stringify!($p))?;)*
        $args.finish()?;
        ::std::result::Result::Ok($crate::Wire::into_value(<$T as $Trait>::$op(this, $($p),*)))
    }};
    // One operation's signature on the wire (no return type: unit).
    (@sig $shared:literal, $op:ident, ($($ret:ty)?); & $(mut)? self $(, $p:ident : $t:ty)* $(,)?) => {
        $crate::OpSig {
            name: ::std::string::String::from(stringify!($op)),
            params: ::std::vec![$($crate::Param::new(stringify!($p), <$t as $crate::Wire>::type_name())),*],
            ret: $crate::contract!(@ret $($ret)?),
            shared: $shared,
        }
    };
    // A method's default body: the one the declaration gives (an
    // operation the contract provides), else `not_implemented`.
    (@body $op:ident) => {
        $crate::not_implemented(stringify!($op))
    };
    (@body $op:ident $body:block) => {
        $body
    };
    (@ret) => {
        <() as $crate::Wire>::type_name()
    };
    (@ret $ret:ty) => {
        <$ret as $crate::Wire>::type_name()
    };
    // A problem without a concurrent gate: no shared operations. The
    // export still has `harness_call_shared`, which knows no operation.
    (@shared) => {
        /// Operations called on one shared instance from several threads.
        pub const SHARED_OPS: &[&str] = &[];

        /// What `harness_call_shared` needs of the exported type: here
        /// nothing beyond being shareable, since there is no shared trait.
        pub trait HarnessSharedOps: Send + Sync {}
        impl<T: Send + Sync> HarnessSharedOps for T {}

        /// Runs one shared operation: this problem has none.
        pub fn dispatch_shared<T: HarnessSharedOps>(
            _instance: &::std::option::Option<T>,
            op: &str,
            _args: ::std::vec::Vec<$crate::Value>,
        ) -> ::std::result::Result<$crate::Value, $crate::runtime::CallError> {
            ::std::result::Result::Err($crate::runtime::CallError::UnknownOp(::std::string::String::from(op)))
        }

        #[allow(dead_code)]
        fn shared_schema() -> ::std::vec::Vec<$crate::OpSig> {
            ::std::vec::Vec::new()
        }
    };
    // A problem with a concurrent gate: its operations take `&self` in a
    // second trait, whose supertraits make the type `Send + Sync`.
    (@shared $STrait:ident; $( fn $op:ident ( $($params:tt)* ) ($($ret:ty)?); )*) => {
        /// Operations called on one shared instance from several threads.
        pub const SHARED_OPS: &[&str] = &[$(stringify!($op)),*];

        /// What `harness_call_shared` needs of the exported type: the
        /// shared trait (which makes it `Send + Sync`).
        pub trait HarnessSharedOps: $STrait {}
        impl<T: $STrait> HarnessSharedOps for T {}

        /// Runs one shared operation on a shared `instance`.
        pub fn dispatch_shared<T: HarnessSharedOps>(
            instance: &::std::option::Option<T>,
            op: &str,
            args: ::std::vec::Vec<$crate::Value>,
        ) -> ::std::result::Result<$crate::Value, $crate::runtime::CallError> {
            #[allow(unused_mut)]
            let mut args = $crate::runtime::Args::new(args);
            match op {
                $(
                    stringify!($op) => $crate::contract!(@call as_ref, T, $STrait, instance, args, $op; $($params)*),
                )*
                other => ::std::result::Result::Err($crate::runtime::CallError::UnknownOp(
                    ::std::string::String::from(other),
                )),
            }
        }

        #[allow(dead_code)]
        fn shared_schema() -> ::std::vec::Vec<$crate::OpSig> {
            ::std::vec![$( $crate::contract!(@sig true, $op, ($($ret)?); $($params)*) ),*]
        }
    };
}

/// The body of a method not written yet: the harness reports the operation
/// as `not_implemented` (std's `todo!()` is reported as a `panic`, like any
/// other panic whose message happens to say "not implemented").
#[macro_export]
macro_rules! todo {
    () => {
        $crate::runtime::todo()
    };
}

/// Declares a problem's error enum: each variant maps to the snake_case kind
/// the judge compares (`err(released)` in a transcript).
#[macro_export]
macro_rules! error_kinds {
    (
        $(#[$meta:meta])*
        pub enum $Name:ident {
            $( $(#[$vmeta:meta])* $Variant:ident = $kind:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $Name {
            $( $(#[$vmeta])* $Variant ),*
        }

        impl $crate::ErrorKind for $Name {
            const ALL: &'static [&'static str] = &[$($kind),*];
            fn kind(&self) -> &'static str {
                match self {
                    $( Self::$Variant => $kind ),*
                }
            }
        }

        impl ::std::fmt::Display for $Name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str($crate::ErrorKind::kind(self))
            }
        }

        impl ::std::error::Error for $Name {}
    };
}

/// Exports a type implementing a problem's trait from a `cdylib`.
///
/// `export!(versioned_kv, MyStore);` is all a solution needs. A problem's
/// reference solution adds `, oracle` to also export which results the
/// statement leaves open (see [`Oracle`]).
#[macro_export]
macro_rules! export {
    ($problem:ident, $ty:ty) => {
        $crate::export!(@emit $crate::$problem, $ty, ::std::option::Option::None);
    };
    ($problem:ident, $ty:ty, oracle) => {
        $crate::export!(
            @emit $crate::$problem,
            $ty,
            ::std::option::Option::Some(<$ty as $crate::Oracle>::is_specified)
        );
    };
    // A contract declared outside this crate (the harness's own test
    // fixtures do this): `export!(in crate::my_contract, MyType);`.
    (in $module:path, $ty:ty) => {
        $crate::export!(@emit $module, $ty, ::std::option::Option::None);
    };
    (@emit $module:path, $ty:ty, $oracle:expr) => {
        /// The exported type, for tests that call the solution directly
        /// (`harness` exports failing cases as such tests).
        #[doc(hidden)]
        #[allow(private_interfaces)]
        pub type HarnessSolution = $ty;

        const _: () = {
            use $module as harness_module;

            #[unsafe(no_mangle)]
            pub extern "C" fn harness_handshake() -> $crate::Handshake {
                { use $module as contract; $crate::runtime::handshake(&contract::schema()) }
            }

            /// # Safety
            /// `out` must point to writable memory for one `RawBuf`.
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn harness_schema(out: *mut $crate::RawBuf) {
                use $module as contract;
                unsafe { $crate::runtime::write_schema(out, &contract::schema()) }
            }

            #[unsafe(no_mangle)]
            pub extern "C" fn harness_open() -> *mut ::core::ffi::c_void {
                $crate::runtime::open::<$ty>()
            }

            /// # Safety
            /// `session` comes from `harness_open`; `req` points to `len`
            /// readable bytes; `out` to writable memory for one `RawBuf`.
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn harness_call(
                session: *mut ::core::ffi::c_void,
                req: *const u8,
                len: usize,
                out: *mut $crate::RawBuf,
            ) {
                use $module as contract;
                unsafe {
                    $crate::runtime::call::<$ty>(
                        session,
                        req,
                        len,
                        out,
                        contract::dispatch::<$ty>,
                        $oracle,
                        $crate::runtime::Shared { dispatch: harness_shared(), ops: contract::SHARED_OPS },
                    )
                }
            }

            // The shared trait's dispatcher when the type implements it,
            // `None` when it does not (yet): autoref specialization on the
            // concrete type, so a solution compiles before its concurrent
            // gate, and an implementation that is not `Send + Sync` gets
            // the compiler's error at its `impl`.
            struct HarnessSharedProbe<T>(::core::marker::PhantomData<T>);
            trait HarnessViaShared<T> {
                fn pick(&self) -> ::std::option::Option<$crate::runtime::SharedDispatchFn<T>>;
            }
            impl<T: harness_module::HarnessSharedOps> HarnessViaShared<T> for &HarnessSharedProbe<T> {
                fn pick(&self) -> ::std::option::Option<$crate::runtime::SharedDispatchFn<T>> {
                    ::std::option::Option::Some(harness_module::dispatch_shared::<T>)
                }
            }
            trait HarnessViaNone<T> {
                fn pick(&self) -> ::std::option::Option<$crate::runtime::SharedDispatchFn<T>>;
            }
            impl<T> HarnessViaNone<T> for HarnessSharedProbe<T> {
                fn pick(&self) -> ::std::option::Option<$crate::runtime::SharedDispatchFn<T>> {
                    ::std::option::Option::None
                }
            }
            fn harness_shared() -> ::std::option::Option<$crate::runtime::SharedDispatchFn<$ty>> {
                (&&HarnessSharedProbe::<$ty>(::core::marker::PhantomData)).pick()
            }

            /// One operation of a concurrent gate on the session's shared
            /// instance; called from several threads at once.
            ///
            /// # Safety
            /// As for `harness_call`, except that calls may overlap.
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn harness_call_shared(
                session: *mut ::core::ffi::c_void,
                req: *const u8,
                len: usize,
                out: *mut $crate::RawBuf,
            ) {
                unsafe { $crate::runtime::call_shared::<$ty>(session, req, len, out, harness_shared()) }
            }

            /// # Safety
            /// `session` comes from `harness_open` and is not used again.
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn harness_close(session: *mut ::core::ffi::c_void) {
                unsafe { $crate::runtime::close::<$ty>(session) }
            }

            /// # Safety
            /// `buf` was filled by this library and is freed once.
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn harness_free(buf: $crate::RawBuf) {
                unsafe { $crate::runtime::free(buf) }
            }

            // The judge's memory checks count this library's heap exactly
            // (see `harness_contract::measure`). A solution cannot declare
            // its own `#[global_allocator]`: one library has one.
            #[global_allocator]
            static HARNESS_COUNTING_ALLOCATOR: $crate::measure::Counting = $crate::measure::Counting::new();

            #[unsafe(no_mangle)]
            pub extern "C" fn harness_heap() -> $crate::measure::HeapStats {
                HARNESS_COUNTING_ALLOCATOR.stats()
            }
        };
    };
}
