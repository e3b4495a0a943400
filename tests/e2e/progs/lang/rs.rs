// SPDX-License-Identifier: GPL-2.0
// An e2e target in Rust (tests/e2e/cases/langs.sh): legacy mangled names that
// carry a per-build hash. usage: rs ITERS TRIGGER_AT (~0.1 ms per iteration;
// words::count_words is called once at iteration TRIGGER_AT, 0 = never).
// Build: rustc -g -C force-frame-pointers=yes.
use std::hint::black_box;

mod words {
    #[inline(never)]
    pub fn spin(n: u64) -> u64 {
        let mut s = 0u64;
        for i in 0..n {
            s = s.wrapping_add(std::hint::black_box(i));
        }
        s
    }

    #[inline(never)]
    pub fn count_words(s: &str) -> usize {
        s.split(' ').count()
    }
}

fn main() {
    let a: Vec<u64> = std::env::args().skip(1).map(|x| x.parse().unwrap_or(0)).collect();
    let iters = *a.first().unwrap_or(&3000);
    let at = *a.get(1).unwrap_or(&0);
    println!("ready {}", std::process::id());
    let mut total = 0u64;
    for i in 1..=iters {
        total = total.wrapping_add(words::spin(black_box(10000)));
        if i == at {
            total += words::count_words(black_box("one two three")) as u64;
        }
    }
    black_box(total);
}
