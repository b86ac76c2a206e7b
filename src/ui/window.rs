//! Which rows of a long table are in the DOM: those near the scrolled-to place (a window of
//! them, asked of the worker as it holds every row), with spacers of the others' height above
//! and below, so that the scroll bar is that of the whole table. Rows are of one height (the
//! stylesheet's `.runs-table tbody tr`).

/// Each row's height in CSS pixels (the stylesheet fixes it).
pub const ROW_PX: f64 = 30.0;
/// Rows asked for at a time: a screen's worth several times over, and few enough that a new
/// order or filter re-renders them within a frame or few (measured in docs/speed.md).
pub const WINDOW: usize = 100;
/// Windows start at multiples of this: a scroll within a block asks nothing.
pub const BLOCK: usize = 30;

// The window always covers the screen: a block before the first row seen, and more than a
// screen (70vh of 30 px rows, ~40 rows) after it.
const _: () = assert!(WINDOW >= 2 * BLOCK + 40);

/// The first row of the window to show when scrolled `scroll_top` pixels down a table of
/// `rows`: the block of the first visible row, with a block before it.
pub fn window_start(scroll_top: f64, rows: usize) -> usize {
    let first = if scroll_top.is_finite() && scroll_top > 0.0 {
        (scroll_top / ROW_PX) as usize
    } else {
        0
    };
    let first = first.min(rows);
    (first / BLOCK * BLOCK).saturating_sub(BLOCK)
}

/// The spacers' heights (pixels) above and below rows `from..from + shown` of `rows`.
pub fn spacers(from: usize, shown: usize, rows: usize) -> (f64, f64) {
    let below = rows.saturating_sub(from.saturating_add(shown));
    (from as f64 * ROW_PX, below as f64 * ROW_PX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_follows_the_scroll_by_blocks() {
        let rows = |n: usize| ROW_PX * n as f64;
        assert_eq!(window_start(0.0, 30_000), 0);
        assert_eq!(window_start(rows(BLOCK + BLOCK / 2), 30_000), 0);
        assert_eq!(window_start(rows(2 * BLOCK + BLOCK / 2), 30_000), BLOCK);
        assert_eq!(
            window_start(rows(29_990), 30_000),
            29_990 / BLOCK * BLOCK - BLOCK
        );
        // Scrolled past the end (rows removed by a filter): the last block.
        assert_eq!(window_start(1e9, 120), 120 / BLOCK * BLOCK - BLOCK);
        assert_eq!(window_start(f64::NAN, 10), 0);
        assert_eq!(spacers(100, 300, 1000), (100.0 * ROW_PX, 600.0 * ROW_PX));
        assert_eq!(spacers(900, 300, 1000), (900.0 * ROW_PX, 0.0));
    }
}
