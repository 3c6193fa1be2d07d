//! The integer-id fast path: a single-pass byte parser of `u v [w]` lines (64-byte blocks,
//! one mask of their non-digit bytes, eight digits at a time) into one piece's slots, and
//! the bitmap of the ids in use.

use super::*;

/// Storage type for raw numeric ids: `u32` first, `u64` when some id needs it.
pub(crate) trait RawId: Copy + Ord + num_traits::Zero + Send + Sync + Into<u64> {
    fn from_u64(v: u64) -> Option<Self>;
    /// `v` as `Self`, for values known to fit.
    fn from_u64_unchecked(v: u64) -> Self;
    /// The ids as u32, for ids known to fit (free for u32).
    fn into_u32s(v: Vec<Self>) -> Vec<u32>;
}
impl RawId for u32 {
    #[inline]
    fn from_u64(v: u64) -> Option<Self> {
        u32::try_from(v).ok()
    }
    #[inline(always)]
    fn from_u64_unchecked(v: u64) -> Self {
        v as u32
    }
    fn into_u32s(v: Vec<Self>) -> Vec<u32> {
        v
    }
}
impl RawId for u64 {
    #[inline]
    fn from_u64(v: u64) -> Option<Self> {
        Some(v)
    }
    #[inline(always)]
    fn from_u64_unchecked(v: u64) -> Self {
        v
    }
    fn into_u32s(v: Vec<Self>) -> Vec<u32> {
        v.into_iter().map(|x| x as u32).collect()
    }
}

/// A numeric parse: each part `(start, end)` of `src` / `dst` (and the weights) holds the
/// edges of one piece of the input, in input order; between the parts are unused slots.
pub(crate) struct Raw<I> {
    pub(super) src: Vec<I>,
    pub(super) dst: Vec<I>,
    pub(super) weights: Option<Vec<f64>>,
    /// The filled ranges, in input order.
    pub(super) parts: Vec<(usize, usize)>,
    /// Ids of self-loop lines (only kept when `loop_only_nodes`).
    pub(super) loop_ids: Vec<I>,
    pub(super) self_loops: usize,
    /// Largest id seen, self-loops included.
    pub(super) max: Option<u64>,
    /// The ids of the edges, marked during the parse (every piece's), if it marked them.
    pub(super) marks: Option<Vec<u64>>,
    /// The build's counts of every part (in order), when every piece made them.
    pub(super) counts: Option<Vec<PartCounts>>,
}

pub(super) enum Outcome<I> {
    Done(Raw<I>),
    /// Some id does not fit in `I`.
    Wide,
    /// Some id is not a non-negative integer.
    NotNumeric,
}

/// The value of the eight ASCII digits in `x` (first digit in the lowest byte); zero bytes
/// count as leading zeros.
#[inline(always)]
pub(super) fn eight_digits(x: u64) -> u64 {
    let v = x & 0x0F0F_0F0F_0F0F_0F0F;
    let v = v.wrapping_mul(2561) >> 8;
    let v = (v & 0x00FF_00FF_00FF_00FF).wrapping_mul(6_553_601) >> 16;
    (v & 0x0000_FFFF_0000_FFFF).wrapping_mul(42_949_672_960_001) >> 32
}

/// Number of leading ASCII digits in the eight bytes of `x` (lowest byte first).
#[inline(always)]
pub(super) fn digit_run(x: u64) -> usize {
    const HI: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const ZERO: u64 = 0x3030_3030_3030_3030;
    // A byte is a digit iff its high nibble is 3 both before and after adding 6.
    let bad = ((x & HI) ^ ZERO) | ((x.wrapping_add(0x0606_0606_0606_0606) & HI) ^ ZERO);
    (bad.trailing_zeros() / 8) as usize
}

/// Scans decimal digits at `p`: the value and the position after them; `None` when there is
/// no digit or there are more than 19 (which the general path handles).
#[inline(always)]
pub(super) fn scan_uint(buf: &[u8], p: usize) -> Option<(u64, usize)> {
    let (mut acc, mut q) = match buf.get(p..p + 8) {
        Some(c) => {
            let x = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            let k = digit_run(x);
            if k == 0 {
                return None;
            }
            if k < 8 {
                return Some((eight_digits(x << (8 * (8 - k))), p + k));
            }
            (eight_digits(x), p + 8)
        }
        None => (0, p),
    };
    let start = p;
    while q < buf.len() {
        let d = buf[q].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        acc = acc.wrapping_mul(10).wrapping_add(d as u64);
        q += 1;
    }
    let nd = q - start;
    (nd > 0 && nd <= 19).then_some((acc, q))
}

#[inline(always)]
pub(super) fn skip_blanks(buf: &[u8], mut p: usize) -> usize {
    while p < buf.len() && (buf[p] == b' ' || buf[p] == b'\t') {
        p += 1;
    }
    p
}

/// The common line `digits sep digits [sep weight] [seps] [\r] (\n | end)`, parsed without
/// allocation: `(u, v, weight, start of the next line)`. `None` sends the line to the
/// general path (which also produces the errors).
#[inline(always)]
pub(super) fn fast_line(buf: &[u8], p: usize) -> Option<(u64, u64, Option<f64>, usize)> {
    let (u, q) = scan_uint(buf, p)?;
    let q2 = skip_blanks(buf, q);
    if q2 == q {
        return None;
    }
    let (v, q) = scan_uint(buf, q2)?;
    let mut q3 = skip_blanks(buf, q);
    let mut w = None;
    if q3 > q && q3 < buf.len() && buf[q3] != b'\r' && buf[q3] != b'\n' {
        let end = buf[q3..]
            .iter()
            .position(|&b| text::is_sep(b) || b == b'\n')
            .map_or(buf.len(), |k| q3 + k);
        let x = text::parse_f64(&buf[q3..end])?;
        if !x.is_finite() {
            return None;
        }
        w = Some(x);
        q3 = skip_blanks(buf, end);
    }
    let mut q = q3;
    if q < buf.len() && buf[q] == b'\r' {
        q += 1;
    }
    if q < buf.len() {
        if buf[q] != b'\n' {
            return None;
        }
        q += 1;
    }
    Some((u, v, w, q))
}

/// Bytes per block of [`NumParser::tight`]'s mask loop (plus 8 readable after it).
pub(super) const BLOCK: usize = 64;

/// Bit `i` set when byte `i` of the first 64 of `blk` is not an ASCII digit: sixteen bytes
/// per compare (SSE2 on x86-64, quicker than eight SWAR words).
#[inline(always)]
pub(super) fn non_digits(blk: &[u8; BLOCK + 8]) -> u64 {
    use wide::u8x16;
    let mut m = 0u64;
    for q in 0..4 {
        let mut b = [0u8; 16];
        b.copy_from_slice(&blk[16 * q..16 * q + 16]);
        // b is a digit iff b - '0' <= 9, unsigned.
        let t = u8x16::from(b) - u8x16::splat(b'0');
        let digit = t.min(u8x16::splat(9)).cmp_eq(t);
        m |= u64::from(!(digit.move_mask() as u16)) << (16 * q);
    }
    m
}

/// Eight bytes of `blk` at `at`, as a little-endian word.
#[inline(always)]
pub(super) fn load8(blk: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&blk[at..at + 8]);
    u64::from_le_bytes(b)
}

/// The value of the `len` (1 to 15) ASCII digits of `blk` at `at`.
#[inline(always)]
pub(super) fn digits_at(blk: &[u8; BLOCK + 8], at: usize, len: usize) -> u64 {
    const POW10: [u64; 8] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];
    let x = load8(blk, at);
    if len <= 8 {
        return eight_digits(x << (8 * (8 - len)));
    }
    let hi = eight_digits(x);
    let lo = eight_digits(load8(blk, at + 8) << (8 * (16 - len)));
    hi * POW10[len - 8] + lo
}

/// One piece's slots: sources, targets, weights (empty when unweighted).
pub(super) type Slots<'s, I> = (&'s mut [I], &'s mut [I], &'s mut [f64]);

/// Why a numeric parse gave up: the caller restarts with wider ids or with labels.
#[derive(Debug, Clone, Copy)]
pub(super) enum Abort {
    Wide,
    NotNumeric,
}

impl<I> From<Abort> for Outcome<I> {
    fn from(a: Abort) -> Self {
        match a {
            Abort::Wide => Outcome::Wide,
            Abort::NotNumeric => Outcome::NotNumeric,
        }
    }
}

/// Parser of one piece of lines with integer ids, writing its edges into its own slots of
/// the edge arrays (`src` / `dst` / `wts`, as many slots as the piece has lines, so no
/// capacity check is needed per edge).
///
/// `strict` (numeric mode) reports non-integer or too large ids as errors instead of
/// aborting with [`Abort::NotNumeric`] / [`Abort::Wide`].
pub(super) struct NumParser<'n, 's, I> {
    pub(super) name: &'n str,
    pub(super) strict: bool,
    pub(super) keep_loops: bool,
    pub(super) ws: Weights,
    pub(super) src: &'s mut [I],
    pub(super) dst: &'s mut [I],
    /// The weight slots (empty when unweighted).
    pub(super) wts: &'s mut [f64],
    pub(super) loop_ids: Vec<I>,
    pub(super) self_loops: usize,
    pub(super) max: u64,
    pub(super) any: bool,
    /// Edges stored: `src[..len]`, `dst[..len]`.
    pub(super) len: usize,
    pub(super) marks: Marks,
}

/// The ids of a piece's edges (self-loops aside) marked in a bitmap as they are parsed, so
/// that numbering the ids in use needs no pass of its own; given up (`None`) when an id
/// needs more than `cap` words. Alongside, what the graph build would otherwise count in a
/// pass over the edges ([`PartCounts`]): the edge ends per word of the bitmap.
pub(crate) struct Marks {
    pub(super) bits: Option<Vec<u64>>,
    /// Edge ends (two per edge) whose id is in word `w` of `bits`, for each `w`.
    pub(super) ends: Vec<u32>,
    pub(super) cap: usize,
}

impl Marks {
    /// No marking.
    pub(super) fn off() -> Self {
        Self::with(None, 0)
    }

    /// Marking into at most `cap` words.
    pub(super) fn on(cap: usize) -> Self {
        Self::with(Some(Vec::new()), cap)
    }

    pub(super) fn with(bits: Option<Vec<u64>>, cap: usize) -> Self {
        Self {
            bits,
            ends: Vec::new(),
            cap,
        }
    }

    #[inline(always)]
    pub(super) fn mark(&mut self, id: u64) {
        if let Some(bits) = &mut self.bits {
            let w = (id >> 6) as usize;
            if w >= bits.len() {
                if w >= self.cap {
                    self.bits = None;
                    self.ends = Vec::new();
                    return;
                }
                bits.resize((w + 1).next_power_of_two().min(self.cap), 0);
                self.ends.resize(bits.len(), 0);
            }
            bits[w] |= 1 << (id & 63);
            self.ends[w] = self.ends[w].wrapping_add(1);
        }
    }

    /// The build's counts of a piece of `len` edges, when it marked them (and no count can
    /// have wrapped).
    pub(super) fn counts(&mut self, len: usize) -> Option<PartCounts> {
        (self.bits.is_some() && len <= (u32::MAX / 2) as usize).then(|| PartCounts {
            ends: std::mem::take(&mut self.ends),
        })
    }
}

/// What a piece's parse leaves besides the edges in its slots.
pub(super) struct PieceOut<I> {
    pub(super) len: usize,
    pub(super) loop_ids: Vec<I>,
    pub(super) self_loops: usize,
    pub(super) max: u64,
    pub(super) any: bool,
    /// The piece's ids marked, when it marked them ([`Marks`]).
    pub(super) marks: Option<Vec<u64>>,
    /// The build's counts for the piece, when it marked its ids.
    pub(super) counts: Option<PartCounts>,
}

impl<'n, 's, I: RawId> NumParser<'n, 's, I> {
    pub(super) fn new(
        name: &'n str,
        opts: &EdgeListOptions,
        strict: bool,
        (src, dst, wts): Slots<'s, I>,
    ) -> Self {
        Self {
            name,
            strict,
            keep_loops: opts.loop_only_nodes,
            ws: Weights::new(opts),
            src,
            dst,
            wts,
            loop_ids: Vec::new(),
            self_loops: 0,
            max: 0,
            any: false,
            len: 0,
            marks: Marks::off(),
        }
    }

    pub(super) fn finish(mut self) -> PieceOut<I> {
        let counts = self.marks.counts(self.len);
        PieceOut {
            len: self.len,
            loop_ids: self.loop_ids,
            self_loops: self.self_loops,
            max: self.max,
            any: self.any,
            marks: self.marks.bits,
            counts,
        }
    }

    /// The 1-based line of byte `p` within the piece (the caller adds the lines before it).
    #[cold]
    pub(super) fn line(&self, buf: &[u8], p: usize) -> usize {
        text::line_of(buf, p)
    }

    /// Records one edge; `Ok(Some(_))` when the ids need a wider type.
    #[inline(always)]
    pub(super) fn push(
        &mut self,
        u: u64,
        v: u64,
        w: f64,
        buf: &[u8],
        p: usize,
    ) -> Result<Option<Abort>> {
        let (Some(iu), Some(iv)) = (I::from_u64(u), I::from_u64(v)) else {
            if self.strict {
                return Err(self.too_large(u.max(v), buf, p));
            }
            return Ok(Some(Abort::Wide));
        };
        if self.strict && u.max(v) >= u32::MAX as u64 {
            return Err(self.too_large(u.max(v), buf, p));
        }
        self.any = true;
        self.max = self.max.max(u).max(v);
        if u == v {
            self.self_loops += 1;
            if self.keep_loops {
                self.loop_ids.push(iu);
            }
        } else {
            // A piece has a slot per line, and a line holds at most one edge.
            self.src[self.len] = iu;
            self.dst[self.len] = iv;
            if let Some(x) = self.wts.get_mut(self.len) {
                *x = w;
            }
            self.len += 1;
            self.marks.mark(u);
            self.marks.mark(v);
        }
        Ok(None)
    }

    /// The hot loop for unweighted lines `digits sep digits [\r] \n` with ids of at most 15
    /// digits: two or four eight-byte loads per line, no per-byte loop, edges written by
    /// index into the room of `src` / `dst`. Returns where it stopped (at the first line of
    /// any other shape, or an id too large for `I`, for the general loop to take).
    #[inline(never)]
    pub(super) fn tight(&mut self, buf: &[u8], mut p: usize) -> usize {
        const POW10: [u64; 8] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];
        /// The number starting at `at` (at most 15 digits) and the offset after it.
        #[inline(always)]
        fn num(w: &[u8; WINDOW], at: usize) -> Option<(u64, usize)> {
            let x = load8(w, at);
            let k = digit_run(x);
            if k == 0 {
                return None;
            }
            if k < 8 {
                return Some((eight_digits(x << (8 * (8 - k))), at + k));
            }
            let hi = eight_digits(x);
            let y = load8(w, at + 8);
            let k2 = digit_run(y);
            if k2 == 0 {
                return Some((hi, at + 8));
            }
            if k2 == 8 {
                return None;
            }
            let lo = eight_digits(y << (8 * (8 - k2)));
            Some((hi * POW10[k2] + lo, at + 8 + k2))
        }
        // One parsed line `u v`: the edge into slot k, or a self-loop counted (and kept).
        #[inline(always)]
        fn record<I: PartialEq>(
            (iu, iv, u, v): (I, I, u64, u64),
            (src, dst, k): (&mut [I], &mut [I], &mut usize),
            (loops, kept): (&mut usize, Option<&mut Vec<I>>),
            marks: &mut Marks,
        ) {
            if iu != iv {
                src[*k] = iu;
                dst[*k] = iv;
                *k += 1;
                marks.mark(u);
                marks.mark(v);
            } else {
                *loops += 1;
                if let Some(kept) = kept {
                    kept.push(iu);
                }
            }
        }
        #[inline(always)]
        fn load8(w: &[u8; WINDOW], at: usize) -> u64 {
            let mut b = [0u8; 8];
            b.copy_from_slice(&w[at..at + 8]);
            u64::from_le_bytes(b)
        }
        // A line of this shape is at most 15 + 1 + 15 + 2 bytes, and the loads read
        // at most 8 bytes past each number's start.
        const WINDOW: usize = 40;
        let start = p;
        let keep_loops = self.keep_loops;
        // Ids at or above this go to the general path (which reports or widens).
        let limit = if self.strict || I::from_u64(u32::MAX as u64 + 1).is_none() {
            u32::MAX as u64
        } else {
            u64::MAX
        };
        let mut max = self.max;
        let mut loops = 0usize;
        let mut k = self.len;
        let cap = self.src.len().min(self.dst.len());
        let src = &mut self.src[..cap];
        let dst = &mut self.dst[..cap];
        let loop_ids = &mut self.loop_ids;
        // A local for the loop (put back below), so that its bitmap's pointer and length
        // stay in registers instead of being reloaded after every store to the slots.
        let mut own_marks = std::mem::replace(&mut self.marks, Marks::off());
        let marks = &mut own_marks;
        // Blocks of 64 bytes starting at a line start: one mask of the non-digit bytes per
        // block, then every complete line in it read off the mask (the next line's start
        // comes from a shift and a trailing-zero count, not from the previous line's
        // digits: the lines' work overlaps). A line that runs past the block starts the
        // next block; the last bytes of the piece go to the per-line loop below.
        'blocks: while k < cap {
            let Some(blk) = buf.get(p..p + BLOCK + 8) else {
                break;
            };
            let Ok(blk) = <&[u8; BLOCK + 8]>::try_from(blk) else {
                break;
            };
            let mask = non_digits(blk);
            let mut a = 0usize;
            loop {
                // u: digits at a..a + e1, one separator, v: digits up to e, a line end.
                let e1 = (mask >> a).trailing_zeros() as usize;
                let s1 = a + e1;
                if e1 == 0 || e1 > 15 || s1 + 1 >= BLOCK || (blk[s1] != b'\t' && blk[s1] != b' ') {
                    break;
                }
                let k2 = (mask >> (s1 + 1)).trailing_zeros() as usize;
                let e = s1 + 1 + k2;
                if k2 == 0 || k2 > 15 || e >= BLOCK {
                    break;
                }
                let next = match blk[e] {
                    b'\n' => e + 1,
                    b'\r' if blk[e + 1] == b'\n' => e + 2,
                    _ => break,
                };
                let u = digits_at(blk, a, e1);
                let v = digits_at(blk, s1 + 1, k2);
                let big = u.max(v);
                if big >= limit || k >= cap {
                    break;
                }
                max = max.max(big);
                let (iu, iv) = (I::from_u64_unchecked(u), I::from_u64_unchecked(v));
                record(
                    (iu, iv, u, v),
                    (src, dst, &mut k),
                    (&mut loops, keep_loops.then_some(&mut *loop_ids)),
                    marks,
                );
                a = next;
                if a >= BLOCK {
                    p += a;
                    continue 'blocks;
                }
            }
            if a == 0 {
                // Not a plain line: the loop below (or the general path) takes it.
                break;
            }
            p += a;
        }
        while k < cap {
            let Some(w) = buf.get(p..p + WINDOW) else {
                break;
            };
            let Ok(w) = <&[u8; WINDOW]>::try_from(w) else {
                break;
            };
            let Some((u, e1)) = num(w, 0) else {
                break;
            };
            if w[e1] != b'\t' && w[e1] != b' ' {
                break;
            }
            let Some((v, e)) = num(w, e1 + 1) else {
                break;
            };
            let next = match w[e] {
                b'\n' => e + 1,
                b'\r' if w[e + 1] == b'\n' => e + 2,
                _ => break,
            };
            let big = u.max(v);
            if big >= limit {
                break;
            }
            max = max.max(big);
            let (iu, iv) = (I::from_u64_unchecked(u), I::from_u64_unchecked(v));
            record(
                (iu, iv, u, v),
                (src, dst, &mut k),
                (&mut loops, keep_loops.then_some(&mut *loop_ids)),
                marks,
            );
            p += next;
        }
        self.len = k;
        self.any |= p > start;
        self.max = max;
        self.self_loops += loops;
        self.marks = own_marks;
        p
    }

    #[cold]
    pub(super) fn too_large(&self, id: u64, buf: &[u8], p: usize) -> crate::Error {
        perr(
            self.name,
            Some(self.line(buf, p)),
            K::IndexOutOfRange,
            format!("node id {id} does not fit in 32 bits"),
        )
    }

    /// Parses every line of the piece `buf`; `Ok(Err(_))`: why the numeric parse gave up.
    pub(super) fn parse(&mut self, buf: &[u8]) -> Result<std::result::Result<(), Abort>> {
        let n = buf.len();
        let mut p = 0usize;
        while p < n {
            if self.ws.opt.or(self.ws.auto) == Some(false) {
                p = self.tight(buf, p);
                if p >= n {
                    break;
                }
            }
            let b = buf[p];
            if b.is_ascii_digit() {
                if let Some((u, v, w, next)) = fast_line(buf, p) {
                    let ok = match (self.ws.opt.or(self.ws.auto), w) {
                        (None, w) => {
                            self.ws.auto = Some(w.is_some());
                            true
                        }
                        (Some(true), Some(_)) | (Some(false), None) => true,
                        (Some(false), Some(_)) => self.ws.opt == Some(false),
                        (Some(true), None) => false,
                    };
                    if ok {
                        if let Some(a) = self.push(u, v, w.unwrap_or(1.0), buf, p)? {
                            return Ok(Err(a));
                        }
                        p = next;
                        continue;
                    }
                }
            } else if b == b'#' || b == b'%' {
                p = memchr::memchr(b'\n', &buf[p..]).map_or(n, |k| p + k + 1);
                continue;
            } else if b == b'\n' {
                p += 1;
                continue;
            }
            // General path for this one line.
            let end = memchr::memchr(b'\n', &buf[p..]).map_or(n, |k| p + k);
            let line = &buf[p..end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let ln = || self.line(buf, p);
            let mut ws = self.ws;
            let f = fields(line, &ln, self.name, &mut ws)?;
            self.ws = ws;
            if let Some((a, c, w)) = f {
                match (text::parse_u64(a), text::parse_u64(c)) {
                    (Some(u), Some(v)) => {
                        if let Some(a) = self.push(u, v, w.unwrap_or(1.0), buf, p)? {
                            return Ok(Err(a));
                        }
                    }
                    (x, _) => {
                        if self.strict {
                            let bad = if x.is_none() { a } else { c };
                            return Err(perr(
                                self.name,
                                Some(self.line(buf, p)),
                                K::BadValue,
                                format!(
                                    "node id {} is not a non-negative integer",
                                    text::show(bad)
                                ),
                            ));
                        }
                        return Ok(Err(Abort::NotNumeric));
                    }
                }
            }
            p = end + 1;
        }
        Ok(Ok(()))
    }
}
