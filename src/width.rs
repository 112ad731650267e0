//! Row widths (the number of attributes d) known at compile time when they are small, so
//! that per-record loops over the attributes unroll and row copies become a few moves
//! instead of a `memcpy` call per record. One generic body serves every width: write it
//! against [`Width`] and call it through [`with_width!`].

/// The width of a row-major record.
pub(crate) trait Width: Copy {
    /// The number of attributes (a constant for [`Fixed`]).
    fn get(self) -> usize;
}

/// A width fixed at compile time.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fixed<const D: usize>;

impl<const D: usize> Width for Fixed<D> {
    #[inline(always)]
    fn get(self) -> usize {
        D
    }
}

/// A width known at run time only.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Runtime(pub usize);

impl Width for Runtime {
    #[inline(always)]
    fn get(self) -> usize {
        self.0
    }
}

/// Evaluates `$body` with `$w` bound to a [`Width`] equal to `$d`: [`Fixed`] for 1 to 4
/// attributes, [`Runtime`] otherwise.
macro_rules! with_width {
    ($d:expr, |$w:ident| $body:expr) => {
        $crate::width::with_width!(@fixed $d, $w, $body, 1, 2, 3, 4)
    };
    (@fixed $d:expr, $w:ident, $body:expr, $($n:literal),*) => {
        match $d {
            $($n => {
                let $w = $crate::width::Fixed::<$n>;
                $body
            })*
            d => {
                let $w = $crate::width::Runtime(d);
                $body
            }
        }
    };
}
pub(crate) use with_width;
