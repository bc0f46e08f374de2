//! What the benchmark binaries share: reading a flag's value from the command line, and
//! the median they report figures and per-round ratios with.

/// The value after `flag` in `args` (`--rounds 100` gives `"100"`).
pub(crate) fn flag_value<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

/// The median of `xs` (the upper middle of an even count; NaN for none).
pub(crate) fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(f64::NAN)
}
